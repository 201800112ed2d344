"""The grant scout desk: the open grant programs the grant feeds carry, nearest deadline first."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import EditorialPiece, GrantProgram
from catalog.products.digests.common import StaffNoteOut, staff_note
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    TeaserSpec,
    fresh_required,
    metered_by_items,
    product,
)

# The grant feeds are read hourly; a list not re-read for two days may hold closed programs.
GRANTS_MAX_AGE = timedelta(days=2)


class GrantParams(QueryModel):
    limit: int = Limit(20)


class GrantOut(BaseModel):
    title: str
    url: str
    summary: str
    deadline: str | None = Field(description="ISO 8601 UTC, the end of the stated day; null: none stated")
    days_left: float | None = Field(description="days until the deadline")
    source: str = Field(description="the grant feed it came from")
    published_at: str | None


class GrantScoutOut(Provenanced):
    count: int
    with_deadline: int = Field(description="programs listed that state a deadline")
    programs: list[GrantOut] = Field(
        description="open programs, soonest deadline first, then those without one"
    )
    staff_note: StaffNoteOut | None = Field(
        description="the newest published grants note, if staff wrote one"
    )


def _open_programs(now: datetime) -> Any:
    return GrantProgram.objects.filter(
        Q(deadline__isnull=True) | Q(deadline__gte=now), observed_at__gte=now - GRANTS_MAX_AGE
    )


def grants_payload(*, limit: int = 20, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    rows = list(_open_programs(now))
    rows.sort(
        key=lambda g: (g.deadline is None, g.deadline or now, -(g.published_at or now).timestamp(), g.id)
    )
    rows = rows[:limit]
    if not rows:
        raise ProductFailed("no open grant program was read from the grant feeds lately; nothing was charged")
    prov = Provenance(
        method="grant and ecosystem-fund announcements from the grant feeds staff list; open = no deadline "
        "stated or a deadline (parsed from the entry's text or date fields) not passed; soonest first",
        max_age=GRANTS_MAX_AGE,
        now=now,
    )
    for g in rows:
        prov.add(source=g.source, replay=g.replay, as_of=g.observed_at)
    fresh_required(prov, "grant feed reading")
    return {
        "count": len(rows),
        "with_deadline": sum(1 for g in rows if g.deadline is not None),
        "programs": [
            {
                "title": g.title,
                "url": g.url,
                "summary": g.summary[:500],
                "deadline": iso(g.deadline),
                "days_left": round((g.deadline - now).total_seconds() / 86400, 2) if g.deadline else None,
                "source": g.source,
                "published_at": iso(g.published_at),
            }
            for g in rows
        ],
        "staff_note": staff_note(EditorialPiece.Kind.GRANTS),
        **prov.out(),
    }


def _grants_available() -> tuple[bool, str]:
    if _open_programs(timezone.now()).exists():
        return True, ""
    return False, "no open grant program was read from the grant feeds in the last 2 days"


@product(
    sku="grant_scout_desk",
    path="/intel/grant-scout-desk",
    headline="Grant scout desk: open grants and programs matched to agent builders",
    price="0.06",
    family="intel",
    rank=20,
    teaser="grant-scout",
    teasers=(
        TeaserSpec(
            name="grant-scout",
            title="Grant scout",
            summary="Open grants and programs for agent builders.",
            highlights=("deadlines", "amounts", "fit"),
        ),
    ),
    params=GrantParams,
    output=GrantScoutOut,
    available=_grants_available,
    metered=metered_by_items("programs"),
)
def grant_scout_desk(call: ProductCall) -> dict[str, Any]:
    return grants_payload(limit=cast(GrantParams, call.params).limit)
