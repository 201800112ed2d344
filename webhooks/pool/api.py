"""Coordination pool routes (X-API-Key): join, leave, status. Free to call (an account feature,
no SKU); each pooled copy signal is a pool_signal webhook event, priced like a copy_signal push."""

from __future__ import annotations

from typing import Annotated, Self

from django.conf import settings
from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, ConfigDict, Field, model_validator
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core import schemas as s
from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel, parse_body, parse_query, query_parameters
from a2a_service.core.money import atomic_from_usdc, usdc_from_atomic
from a2a_service.core.views import ApiView, ok
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from billing.models import Account
from webhooks.models import PoolDelivery, PoolMembership, WebhookDelivery
from webhooks.pool import services

PRICING = (
    "Free to call (an account feature on X-API-Key, no SKU). Each pooled signal is a pool_signal webhook event, "
    "priced like a copy_signal push (see /api/a2a/webhooks/events): covered by a signal desk pack, else debited "
    "from your credits per delivered event."
)
RECENT = 20


class PoolJoinBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    desk: Annotated[str, Field(min_length=1, max_length=64, description="a desk of the track record")]
    max_size_usdc: Annotated[
        float | None, Field(gt=0, le=100_000_000, description="the size you ask for per signal, in USDC")
    ] = None
    share: Annotated[
        float | None,
        Field(gt=0, le=1, description="or: the fraction of the size the desk publishes you ask for"),
    ] = None
    webhook_url: Annotated[
        str | None,
        Field(
            min_length=8,
            max_length=500,
            pattern=r"^https?://",
            description="the pool's own webhook (its secret is returned once); without it, your webhooks "
            "subscribed to pool_signal receive the pool",
        ),
    ] = None

    @model_validator(mode="after")
    def one_size(self) -> Self:
        if (self.max_size_usdc is None) == (self.share is None):
            raise ValueError("give exactly one of max_size_usdc and share")
        return self


class PoolLeaveBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    desk: Annotated[str, Field(min_length=1, max_length=64)]


class PoolStatusQuery(QueryModel):
    desk: Annotated[
        str | None, Field(max_length=64, description="one desk's pool; default: the pools you are in")
    ] = None


class MembershipOut(BaseModel):
    id: int
    desk: str
    slot: int | None = Field(description="0-based position in the pool now (join order); null once left")
    deliver_after_seconds: float | None = Field(description="slot x slot_seconds after each signal")
    max_size_usdc: float | None
    share: float | None
    allocation_usdc: float | None = Field(
        description="your allocation of a full-size signal (size fraction 1) with the members now; each signal's "
        "own is in its pool_signal event"
    )
    webhook: str = Field(
        description="own: the pool's webhook; account: your webhooks subscribed to pool_signal"
    )
    joined_at: str
    left_at: str | None


class MembershipJoinedOut(MembershipOut):
    secret: str | None = Field(
        description="the pool webhook's whsec_ secret, shown once (null: your own webhooks)"
    )


class PooledDeliveryOut(BaseModel):
    signal_id: int | None
    symbol: str | None
    side: str | None
    slot: int
    deliver_at: str
    requested_usdc: float
    allocation_usdc: float
    published_size_usdc: float
    delivery: str = Field(
        description="pending, delivering, delivered, dead, skipped; none: no webhook took it"
    )


class PoolStateOut(BaseModel):
    desk: str
    members: int
    slot_seconds: float
    slots: list[float] = Field(description="each slot's delay after a signal, in seconds")
    full_signal_size_usdc: float = Field(
        description="the size the desk publishes for a signal of size fraction 1 (POOL_SIGNAL_SIZE_USDC)"
    )
    you: MembershipOut | None
    recent_deliveries: list[PooledDeliveryOut] = Field(description="your latest pooled deliveries")


class PoolStatusOut(BaseModel):
    pools: list[PoolStateOut]


def _projection(member: PoolMembership) -> tuple[int | None, int | None]:
    """(slot now, allocation of a full-size signal now)."""
    members = services.members_of(member.desk)
    ids = [m.id for m in members]
    if member.id not in ids:
        return None, None
    size = services.published_size_atomic(1.0)
    shares = services.allocate(size, [services.requested_atomic(m, size) for m in members])
    i = ids.index(member.id)
    return i, shares[i]


def membership_out(member: PoolMembership) -> MembershipOut:
    slot, allocation = _projection(member)
    return MembershipOut(
        id=member.id,
        desk=member.desk,
        slot=slot,
        deliver_after_seconds=slot * settings.POOL_SLOT_SECONDS if slot is not None else None,
        max_size_usdc=usdc_from_atomic(member.max_size_atomic)
        if member.max_size_atomic is not None
        else None,
        share=member.share,
        allocation_usdc=usdc_from_atomic(allocation) if allocation is not None else None,
        webhook="own" if member.subscription_id is not None else "account",
        joined_at=iso(member.joined_at) or "",
        left_at=iso(member.left_at),
    )


def pool_state(desk: str, account: Account) -> PoolStateOut:
    members = services.members_of(desk)
    mine = next((m for m in members if m.account_id == account.id), None)
    recent = list(
        PoolDelivery.objects.filter(membership__account=account, membership__desk=desk)
        .select_related("signal")
        .order_by("-created_at")[:RECENT]
    )
    states = dict(
        WebhookDelivery.objects.filter(event_id__in=[r.event_id for r in recent if r.event_id]).values_list(
            "event_id", "state"
        )
    )
    return PoolStateOut(
        desk=desk,
        members=len(members),
        slot_seconds=settings.POOL_SLOT_SECONDS,
        slots=[i * settings.POOL_SLOT_SECONDS for i in range(len(members))],
        full_signal_size_usdc=usdc_from_atomic(atomic_from_usdc(settings.POOL_SIGNAL_SIZE_USDC)),
        you=membership_out(mine) if mine is not None else None,
        recent_deliveries=[
            PooledDeliveryOut(
                signal_id=r.signal_id,
                symbol=r.signal.symbol if r.signal is not None else None,
                side=r.signal.side if r.signal is not None else None,
                slot=r.slot,
                deliver_at=iso(r.deliver_at) or "",
                requested_usdc=usdc_from_atomic(r.requested_atomic),
                allocation_usdc=usdc_from_atomic(r.allocation_atomic),
                published_size_usdc=usdc_from_atomic(r.published_size_atomic),
                delivery=states.get(r.event_id, "none") if r.event_id is not None else "none",
            )
            for r in recent
        ],
    )


AUTH = {401: s.UnauthorizedOut}
POOL_DOC = (
    "Members receive each copy signal of the desk in staggered slots: slot i (join order) is delivered "
    "i x POOL_SLOT_SECONDS after the signal, so members do not all hit the same book at once. The desk publishes "
    "POOL_SIGNAL_SIZE_USDC x the signal's size fraction to its pool; each member asks max_size_usdc or share x "
    "that size, and when the asks add up to more, every allocation is scaled down pro rata (their sum never "
    "exceeds the size). "
)


class PoolJoinView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Join the coordination pool of a desk",
        description=POOL_DOC
        + "Deliveries go to webhook_url (a webhook of its own, secret returned once) or, "
        "without it, to your webhooks subscribed to pool_signal (422 when you have none). 409 when already a "
        "member. " + PRICING,
        operation_id="pool_join",
        request=PoolJoinBody,
        parameters=[API_KEY_HEADER],
        responses={201: MembershipJoinedOut, **AUTH, 409: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, PoolJoinBody)
        member, secret = services.pool_join(
            account=account,
            desk=body.desk,
            max_size_usdc=body.max_size_usdc,
            share=body.share,
            webhook_url=body.webhook_url,
        )
        return ok(MembershipJoinedOut(**membership_out(member).model_dump(), secret=secret), status=201)


class PoolLeaveView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Leave the coordination pool of a desk",
        description="No more pooled deliveries; the pool's own webhook is disabled (pending deliveries are not "
        "sent and what they were charged is refunded). The members after you move up one slot. Free.",
        operation_id="pool_leave",
        request=PoolLeaveBody,
        parameters=[API_KEY_HEADER],
        responses={200: MembershipOut, **AUTH, 404: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, PoolLeaveBody)
        member = services.pool_leave(account=account, desk=body.desk)
        if member is None:
            raise NotFound(f"you are not in the {body.desk} pool")
        return ok(membership_out(member))


class PoolStatusView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Coordination pool state: members, slots, your slot and allocation, recent deliveries",
        description=POOL_DOC + "Free.",
        operation_id="pool_status",
        parameters=[API_KEY_HEADER, *query_parameters(PoolStatusQuery)],
        responses={200: PoolStatusOut, **AUTH, 422: s.HTTPValidationError},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        query = parse_query(request, PoolStatusQuery)
        if query.desk:
            desks = [query.desk]
        else:
            desks = sorted(
                set(
                    PoolMembership.objects.filter(account=account, left_at__isnull=True).values_list(
                        "desk", flat=True
                    )
                )
            )
        return ok(PoolStatusOut(pools=[pool_state(d, account) for d in desks]))
