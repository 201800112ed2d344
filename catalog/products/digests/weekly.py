"""The weekly research digest: the week in review (the desks' record, the regime changes, the
week's biggest news by sentiment magnitude and the prediction markets that closed or resolved)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import news_in_window, news_sentiment_backfill, scored_news
from catalog.analytics.track import record_of
from catalog.editorial.track_record import closed_pnls
from catalog.models import DeskSignal, EditorialPiece, PredictionMarket, RegimeSnapshot
from catalog.products.digests.common import NewsLineOut, StaffNoteOut, _news_prov, news_line, staff_note
from catalog.products.registry import ProductCall, ProductFailed, fresh_required, product

WEEK = timedelta(days=7)
# A week in review is still the week's when its newest input is two days old (a quiet weekend).
WEEKLY_MAX_AGE = timedelta(days=2)


class WeeklyParams(QueryModel):
    limit: int = Limit(5)


class DeskWeekOut(BaseModel):
    desk: str = Field(description="a desk, or 'all' for every desk's signals together")
    trades: int = Field(description="signals closed in the week")
    wins: int
    losses: int
    win_rate: float | None
    expectancy_pct: float | None = Field(description="mean pnl per closed signal, percent")
    total_pnl_pct: float | None
    max_drawdown_pct: float | None


class RegimeChangeOut(BaseModel):
    at: str | None = Field(description="ISO 8601 UTC: the snapshot that saw the new regime")
    previous: str | None = Field(description="the regime before (null: none recorded)")
    regime: str
    confidence: float


class ResolutionOut(BaseModel):
    venue: str
    question: str
    status: str = Field(description="closed or resolved")
    closes_at: str | None
    yes_price: float | None = Field(description="the last yes price recorded")
    url: str


class WeeklyDigestOut(Provenanced):
    week_start: str | None
    week_end: str | None
    desks: list[DeskWeekOut] = Field(description="'all' first, then each desk with closed signals")
    regime_now: str | None
    regime_changes: list[RegimeChangeOut] = Field(description="oldest first")
    biggest_news: list[NewsLineOut] = Field(description="the week's items with the largest |compound|")
    resolutions: list[ResolutionOut] = Field(
        description="markets that closed or resolved in the week, by close"
    )
    staff_note: StaffNoteOut | None = Field(
        description="the newest published research note, if staff wrote one"
    )


def _desk_week(desk: str, pnls: list[float]) -> dict[str, Any]:
    r = record_of(pnls)
    return {
        "desk": desk,
        "trades": r.trades,
        "wins": r.wins,
        "losses": r.losses,
        "win_rate": r.win_rate,
        "expectancy_pct": r.expectancy_pct,
        "total_pnl_pct": r.total_pnl_pct,
        "max_drawdown_pct": r.max_drawdown_pct,
    }


def weekly_payload(*, limit: int = 5, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    since = now - WEEK
    prov = Provenance(
        method="the last 7 days: closed desk signals' record (win rate, expectancy, drawdown of the running pnl), "
        "regime snapshots where the regime changed, the news with the largest |VADER compound|, prediction "
        "markets closed or resolved",
        max_age=WEEKLY_MAX_AGE,
        now=now,
    )
    by_desk = closed_pnls(since=since)
    desks = [_desk_week(d, by_desk[d]) for d in sorted(by_desk)]
    if desks:
        overall = [p for d in sorted(by_desk) for p in by_desk[d]]
        desks.insert(0, _desk_week("all", overall))
        last_close = DeskSignal.objects.filter(closed_at__gte=since).order_by("-closed_at").first()
        if last_close is not None:
            prov.add(source="desks", replay=False, as_of=last_close.closed_at, items=len(overall))
    snaps = list(RegimeSnapshot.objects.filter(computed_at__gte=since).order_by("computed_at", "id"))
    before = RegimeSnapshot.objects.filter(computed_at__lt=since).order_by("-computed_at").first()
    previous = before.regime if before is not None else None
    changes = []
    for snap in snaps:
        if snap.regime != previous:
            changes.append(
                {
                    "at": iso(snap.computed_at),
                    "previous": previous,
                    "regime": snap.regime,
                    "confidence": snap.confidence,
                }
            )
        previous = snap.regime
    if snaps:
        prov.add(source="regime", replay=False, as_of=snaps[-1].computed_at, items=len(snaps))
    news_sentiment_backfill(since=since)
    news = sorted(scored_news(since=since, now=now), key=lambda i: (-abs(i.compound), -i.at.timestamp()))[
        :limit
    ]
    _news_prov(prov, news)
    closed = list(
        PredictionMarket.objects.filter(
            status__in=[PredictionMarket.Status.CLOSED, PredictionMarket.Status.RESOLVED],
            closes_at__gte=since,
            closes_at__lte=now,
        ).order_by("closes_at", "id")[:limit]
    )
    for m in closed:
        prov.add(source=m.source or "prediction", venue=m.venue, replay=m.replay, as_of=m.observed_at)
    if not (desks or changes or news or closed):
        raise ProductFailed("nothing was recorded in the last 7 days; nothing was charged")
    fresh_required(prov, "desk, regime, news or prediction data")
    regime_now = (snaps[-1].regime if snaps else previous) or None
    return {
        "week_start": iso(since),
        "week_end": iso(now),
        "desks": desks,
        "regime_now": regime_now,
        "regime_changes": changes,
        "biggest_news": [news_line(i) for i in news],
        "resolutions": [
            {
                "venue": m.venue,
                "question": m.question,
                "status": m.status,
                "closes_at": iso(m.closes_at),
                "yes_price": float(m.yes_price) if m.yes_price is not None else None,
                "url": m.url,
            }
            for m in closed
        ],
        "staff_note": staff_note(EditorialPiece.Kind.RESEARCH),
        **prov.out(),
    }


def _weekly_available() -> tuple[bool, str]:
    since = timezone.now() - WEEKLY_MAX_AGE
    if news_in_window(since).exists() or RegimeSnapshot.objects.filter(computed_at__gte=since).exists():
        return True, ""
    return False, "no news and no regime snapshot in the last 2 days"


@product(
    sku="research_weekly_digest",
    path="/research/weekly-digest",
    headline="Weekly research digest",
    price="0.12",
    family="research",
    rank=36,
    params=WeeklyParams,
    output=WeeklyDigestOut,
    available=_weekly_available,
)
def research_weekly_digest(call: ProductCall) -> dict[str, Any]:
    return weekly_payload(limit=cast(WeeklyParams, call.params).limit)
