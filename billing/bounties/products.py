"""The `bounties` product: the open bounties (sold by x402 and credits like any product).

Registered by billing, not in catalog/products: the bounties and their rewards are billing's
rows (the reward is a ledger row), and catalog may not import billing. Billing registering its
own product spec (as billing/products.py does) keeps the layers one-way without a registry of
listing callbacks in catalog."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db.models import F, Q
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.inputs import Limit, QueryModel
from a2a_service.core.money import usdc_from_atomic
from billing.bounties.models import Bounty
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, ProductSpec, register

SUBMISSION_SHAPES = {
    Bounty.Kind.SPREAD_SNAPSHOT: 'SpreadSnapshotIngest: {"readings": [{"symbol", "venue_a", "venue_b", '
    '"spread_bps", "captured_at"}]}',
    Bounty.Kind.FILL_REPORT: 'FillReportSubmission: {"order_id", "venue", "symbol", "side", "quantity", '
    '"price", "filled_at"?, "tx_hash"?}',
    Bounty.Kind.RESOLUTION_MISMATCH: 'ResolutionMismatchSubmission: {"match_id", "evidence"}',
    Bounty.Kind.OTHER: 'OtherSubmission: {"text", "url"?}',
}
HOW_TO = (
    "With your X-API-Key (free calls): POST /api/a2a/bounties/{id}/claim, then POST /api/a2a/bounties/{id}/submit "
    "with the submission in the shape of the bounty's kind; GET /api/a2a/bounties/mine shows your claims. An "
    "accepted submission (by staff, or by the automatic check where auto_check is true) credits the reward to "
    "your credit balance, once; rewards go to the first accepted submissions while slots are left."
)


class BountiesParams(QueryModel):
    kind: Literal["spread_snapshot", "fill_report", "resolution_mismatch", "other"] | None = Field(
        None, description="only bounties of this kind"
    )
    limit: int = Limit(40)


class BountyOut(BaseModel):
    id: int
    title: str
    description: str
    kind: str
    reward_atomic: int = Field(description="reward per accepted submission, atomic USDC (6 decimals)")
    reward_usdc: float
    auto_check: bool = Field(
        description="submissions are checked and paid automatically where the check decides"
    )
    max_awards: int
    slots_left: int = Field(description="rewards not awarded yet")
    criteria: dict[str, Any]
    opens_at: datetime
    expires_at: datetime | None
    claim: str = Field(description="POST here with X-API-Key to claim")
    submit: str = Field(description="POST the submission here with X-API-Key")
    submission_shape: str


class BountiesOut(BaseModel):
    bounties: list[BountyOut]
    count: int
    how_to_claim: str
    generated_at: datetime


def bounties_open(*, kind: str | None = None, limit: int = 40) -> list[Bounty]:
    now = timezone.now()
    rows = Bounty.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now),
        status=Bounty.Status.OPEN,
        opens_at__lte=now,
        awarded_count__lt=F("max_awards"),
    )
    if kind:
        rows = rows.filter(kind=kind)
    # Soonest deadline first; bounties without one after them on every database (SQLite sorts
    # NULL first, PostgreSQL last).
    return list(rows.order_by(F("expires_at").asc(nulls_last=True), "-reward_atomic", "id")[:limit])


def _available() -> tuple[bool, str]:
    if bounties_open(limit=1):
        return True, ""
    return False, "no open bounty now"


def bounties(call: ProductCall) -> dict[str, Any]:
    params = call.params
    assert isinstance(params, BountiesParams)
    rows = bounties_open(kind=params.kind, limit=params.limit)
    if not rows:
        # Nothing to sell: an empty list is not charged.
        what = f"{params.kind} bounty" if params.kind else "bounty"
        raise ProductFailed(f"no open {what} now; nothing was charged")
    base = call.base_url
    out = BountiesOut(
        bounties=[
            BountyOut(
                id=b.pk,
                title=b.title,
                description=b.description,
                kind=b.kind,
                reward_atomic=b.reward_atomic,
                reward_usdc=usdc_from_atomic(b.reward_atomic),
                auto_check=b.auto_check,
                max_awards=b.max_awards,
                slots_left=b.slots_left,
                criteria=b.criteria or {},
                opens_at=b.opens_at,
                expires_at=b.expires_at,
                claim=f"{base}/api/a2a/bounties/{b.pk}/claim",
                submit=f"{base}/api/a2a/bounties/{b.pk}/submit",
                submission_shape=SUBMISSION_SHAPES[Bounty.Kind(b.kind)],
            )
            for b in rows
        ],
        count=len(rows),
        how_to_claim=HOW_TO,
        generated_at=timezone.now(),
    )
    return out.model_dump(mode="json")


register(
    ProductSpec(
        sku="bounties",
        path="/bounties",
        headline="Open bounties for agents",
        price="0.05",
        family="agent",
        rank=42,
        credit_routes=(
            CreditRoute(route="api/a2a/bounties", operation_id="bounties", summary="Open bounties"),
        ),
        run=bounties,
        params=BountiesParams,
        output=BountiesOut,
        available=_available,
    )
)
