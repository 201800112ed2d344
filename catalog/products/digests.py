"""Digests computed from the data: news by market group with sentiment and movers, the
regulators' and central banks' news ranked by impact, the week in review, and the open grant
programs. Staff may add a note to a digest (the newest published EditorialPiece of its kind is
appended); no digest needs one to exist."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import (
    ScoredNews,
    asset_sentiment,
    news_in_window,
    news_sentiment_backfill,
    scored_news,
)
from catalog.analytics.series import ohlcv, symbols_with_candles
from catalog.analytics.track import record_of
from catalog.editorial.track_record import closed_pnls
from catalog.models import (
    DeskSignal,
    EditorialPiece,
    GrantProgram,
    NewsItem,
    PredictionMarket,
    RegimeSnapshot,
)
from catalog.products.registry import ProductCall, ProductFailed, TeaserSpec, fresh_required, product

SentimentLabel = Literal["positive", "negative", "neutral"]


# --- shared ----------------------------------------------------------------------------------
class StaffNoteOut(BaseModel):
    title: str
    summary: str
    body: str
    published_at: str | None = Field(description="ISO 8601 UTC")


class NewsLineOut(BaseModel):
    id: int = Field(description="the news item (its full text: /api/a2a/x402/news/unlock)")
    title: str
    source: str
    url: str
    published_at: str | None = Field(description="ISO 8601 UTC (else when it was ingested)")
    compound: float = Field(description="the item's VADER compound score, in [-1, 1]")
    label: SentimentLabel


def staff_note(kind: str) -> dict[str, Any] | None:
    """The newest published piece of `kind`, appended to a digest when staff wrote one."""
    piece = EditorialPiece.objects.published().filter(kind=kind).first()
    if piece is None:
        return None
    return {
        "title": piece.title,
        "summary": piece.summary,
        "body": piece.body,
        "published_at": iso(piece.published_at),
    }


def news_line(item: ScoredNews) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "source": item.source,
        "url": item.url,
        "published_at": iso(item.published_at or item.at),
        "compound": round(item.compound, 4),
        "label": item.label,
    }


def _news_prov(prov: Provenance, items: Iterable[ScoredNews]) -> None:
    for item in items:
        prov.add(source=item.source or "news", replay=item.replay, as_of=item.at)


# --- market groups digest --------------------------------------------------------------------
# A day of news: the groups' sentiment and their assets' 24 h moves describe the same day.
GROUPS_WINDOW = timedelta(hours=24)
MOVE_SPAN = timedelta(hours=24)
# Candles older than this do not describe "now": such an asset is not listed as a mover.
MOVER_MAX_AGE = timedelta(hours=3)


class MarketGroupsParams(QueryModel):
    limit: int = Limit(5)


class MoverOut(BaseModel):
    asset: str = Field(description="the ticker the group's news names")
    symbol: str
    exchange: str
    last: float = Field(description="the newest 1h close")
    change_24h_pct: float = Field(description="newest 1h close against the close 24 h earlier, in percent")
    as_of: str | None = Field(description="ISO 8601 UTC: the newest bar's open")


class GroupSentimentOut(BaseModel):
    score: float = Field(description="recency-weighted mean compound of the group's items, in [-1, 1]")
    label: SentimentLabel
    positive: int
    negative: int
    neutral: int


class MarketGroupOut(BaseModel):
    group: str = Field(description="crypto, equities, macro, regulation (as the news feed assigns them)")
    items: int = Field(description="the group's news items in the window")
    sentiment: GroupSentimentOut
    headlines: list[NewsLineOut] = Field(description="the newest items, at most `limit`")
    movers: list[MoverOut] = Field(description="the assets the group's news names, largest |24 h move| first")


class MarketGroupsDigestOut(Provenanced):
    window_hours: int
    count: int = Field(description="groups listed")
    groups: list[MarketGroupOut] = Field(description="the most covered group first")


def move_24h(asset: str, candles: dict[str, str]) -> dict[str, Any] | None:
    """An asset's 24 h change from its 1h candles (the first symbol quoting it), or None."""
    symbol = candles.get(asset)
    if symbol is None:
        return None
    series = ohlcv(symbol, "1h", limit=48)
    if series is None or series.last_at is None:
        return None
    last_at = series.times[-1]
    earlier = [i for i, t in enumerate(series.times) if t <= last_at - MOVE_SPAN]
    if not earlier or float(series.close[earlier[-1]]) == 0:
        return None
    then, last = float(series.close[earlier[-1]]), float(series.close[-1])
    return {
        "asset": asset,
        "symbol": symbol,
        "exchange": series.exchange,
        "last": last,
        "change_24h_pct": round((last / then - 1) * 100, 4),
        "as_of": iso(series.last_at),
        "_replay": series.replay,
        "_at": series.last_at,
    }


def market_groups_payload(*, limit: int = 5, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    since = now - GROUPS_WINDOW
    news_sentiment_backfill(since=since)
    items = scored_news(since=since, now=now)
    if not items:
        raise ProductFailed("no news was published in the last 24 h; nothing was charged")
    groups_of = dict(NewsItem.objects.filter(id__in=[i.id for i in items]).values_list("id", "market_group"))
    by_group: dict[str, list[ScoredNews]] = {}
    for item in items:
        by_group.setdefault(groups_of.get(item.id) or "other", []).append(item)
    candles: dict[str, str] = {}
    for symbol in symbols_with_candles("1h"):
        candles.setdefault(symbol.split("/")[0].upper(), symbol)
    prov = Provenance(
        method="news of the last 24 h grouped by the feed's market group; per group the recency-weighted "
        f"mean VADER compound (half-life {settings.SENTIMENT_HALF_LIFE_HOURS:g} h); movers: the 24 h change "
        "of the 1h closes of the assets the group's news names",
        max_age=timedelta(hours=settings.SENTIMENT_MAX_AGE_HOURS),
        now=now,
    )
    half_life = timedelta(hours=settings.SENTIMENT_HALF_LIFE_HOURS)
    groups = []
    for name, group in sorted(by_group.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        s = asset_sentiment(name, group, now=now, half_life=half_life, drivers=0)
        _news_prov(prov, group[:limit])
        assets = dict.fromkeys(t for item in group for t in item.tickers)
        movers = []
        for asset in assets:
            move = move_24h(asset, candles)
            if move is not None and now - move["_at"] <= MOVER_MAX_AGE:
                prov.add(
                    source="exchanges",
                    venue=move["exchange"],
                    replay=move.pop("_replay"),
                    as_of=move.pop("_at"),
                )
                movers.append(move)
        movers.sort(key=lambda m: -abs(m["change_24h_pct"]))
        groups.append(
            {
                "group": name,
                "items": len(group),
                "sentiment": {
                    "score": round(s.score, 4),
                    "label": s.label,
                    "positive": s.positive,
                    "negative": s.negative,
                    "neutral": s.neutral,
                },
                "headlines": [news_line(i) for i in group[:limit]],
                "movers": movers[:limit],
            }
        )
    fresh_required(prov, "news")
    return {
        "window_hours": int(GROUPS_WINDOW.total_seconds() // 3600),
        "count": len(groups),
        "groups": groups,
        **prov.out(),
    }


def _has_news_since(window: timedelta, *, what: str, q: Q | None = None) -> tuple[bool, str]:
    qs = news_in_window(timezone.now() - window)
    if q is not None:
        qs = qs.filter(q)
    if qs.exists():
        return True, ""
    return False, f"no {what} in the last {int(window.total_seconds() // 3600)} h"


def _groups_available() -> tuple[bool, str]:
    return _has_news_since(min(GROUPS_WINDOW, timedelta(hours=settings.SENTIMENT_MAX_AGE_HOURS)), what="news")


@product(
    sku="market_groups_digest",
    path="/intel/market-groups-digest",
    headline="Market groups digest: what each market agent group reported",
    price="0.08",
    family="intel",
    rank=23,
    session_callable=True,
    teaser="market-groups-digest",
    teasers=(
        TeaserSpec(
            name="market-groups-digest",
            title="Market groups digest",
            summary="What each market agent group reported.",
            highlights=("per-group headlines",),
        ),
    ),
    params=MarketGroupsParams,
    output=MarketGroupsDigestOut,
    available=_groups_available,
)
def market_groups_digest(call: ProductCall) -> dict[str, Any]:
    return market_groups_payload(limit=cast(MarketGroupsParams, call.params).limit)


# --- tech regulatory digest ------------------------------------------------------------------
# Regulators publish on working days: a week holds several releases, and four days cover a
# long weekend without calling the digest stale.
REGULATORY_WINDOW = timedelta(days=7)
REGULATORY_MAX_AGE = timedelta(hours=96)
# An action loses half its weight in two days: this week's rule outranks last week's.
REGULATORY_HALF_LIFE = timedelta(hours=48)
# What moves markets most: enforcement and rate decisions, then rules, guidance, approvals,
# statistical releases. An item scores each kind it matches once.
IMPACT_KEYWORDS: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        "enforcement",
        3.0,
        re.compile(
            r"\b(enforcement|charges?|charged|fraud|penalt(?:y|ies)|sanctions?|lawsuit|settles?|"
            r"settlement|cease[- ]and[- ]desist|judgment|indict\w*)\b",
            re.I,
        ),
    ),
    (
        "rate decision",
        3.0,
        re.compile(
            r"\b(rate decision|FOMC|federal funds rate|rate (?:cut|hike|increase|decrease)s?|"
            r"monetary policy|policy rate|discount rate|Open Market Committee)\b",
            re.I,
        ),
    ),
    (
        "rule",
        2.0,
        re.compile(r"\b(rules?|rulemaking|adopts?|amendments?|regulation|proposal|proposes)\b", re.I),
    ),
    (
        "guidance",
        1.5,
        re.compile(r"\b(guidance|statement|framework|bulletin|FAQs?|interpretive|testimony)\b", re.I),
    ),
    ("approval", 1.0, re.compile(r"\b(approv\w*|licen[cs]e\w*|registration|application)\b", re.I)),
    ("data release", 0.5, re.compile(r"\b(statistical release|minutes|report|survey|data)\b", re.I)),
)
REGULATORY_Q = Q(category=NewsItem.Category.GENERAL) | Q(market_group="regulation")


class RegulatoryParams(QueryModel):
    limit: int = Limit(10)


class RegulatoryItemOut(NewsLineOut):
    impact: float = Field(description="(1 + the matched kinds' weights) x 0.5^(age / 48 h)")
    kinds: list[str] = Field(description="what the item is: enforcement, rate decision, rule, guidance, ...")


class RegulatoryDigestOut(Provenanced):
    window_days: int
    count: int
    weights: dict[str, float] = Field(description="the impact weight of each kind")
    items: list[RegulatoryItemOut] = Field(description="highest impact first")
    staff_note: StaffNoteOut | None = Field(
        description="the newest published regulatory note, if staff wrote one"
    )


def impact_of(text: str, *, age: timedelta) -> tuple[float, list[str]]:
    kinds = [name for name, _, rx in IMPACT_KEYWORDS if rx.search(text)]
    weight = 1.0 + sum(w for name, w, _ in IMPACT_KEYWORDS if name in kinds)
    decay = 0.5 ** (max(age.total_seconds(), 0.0) / REGULATORY_HALF_LIFE.total_seconds())
    return round(weight * decay, 4), kinds


def regulatory_payload(*, limit: int = 10, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    since = now - REGULATORY_WINDOW
    ids = set(news_in_window(since).filter(REGULATORY_Q).values_list("id", flat=True))
    items = [i for i in scored_news(since=since, now=now) if i.id in ids]
    if not items:
        raise ProductFailed("no regulator or central-bank news in the last 7 days; nothing was charged")
    ranked = []
    for item in items:
        impact, kinds = impact_of(f"{item.title}. {item.teaser}", age=now - item.at)
        ranked.append((impact, item, kinds))
    ranked.sort(key=lambda r: (-r[0], -r[1].at.timestamp(), -r[1].id))
    ranked = ranked[:limit]
    prov = Provenance(
        method="regulator and central-bank news of 7 days (the feeds' general category and the items the feed "
        "tags regulation), ranked by (1 + keyword weights: enforcement 3, rate decision 3, rule 2, guidance "
        "1.5, approval 1, data release 0.5) x 0.5^(age/48 h)",
        max_age=REGULATORY_MAX_AGE,
        now=now,
    )
    _news_prov(prov, (item for _, item, _ in ranked))
    fresh_required(prov, "regulator or central-bank news")
    return {
        "window_days": REGULATORY_WINDOW.days,
        "count": len(ranked),
        "weights": {name: w for name, w, _ in IMPACT_KEYWORDS},
        "items": [{**news_line(item), "impact": impact, "kinds": kinds} for impact, item, kinds in ranked],
        "staff_note": staff_note(EditorialPiece.Kind.REGULATORY),
        **prov.out(),
    }


def _regulatory_available() -> tuple[bool, str]:
    return _has_news_since(REGULATORY_MAX_AGE, what="regulator or central-bank news", q=REGULATORY_Q)


@product(
    sku="tech_regulatory_digest",
    path="/intel/tech-regulatory-digest",
    headline="Tech regulatory digest: rules and enforcement that move markets",
    price="0.08",
    family="intel",
    rank=21,
    teaser="tech-regulatory-digest",
    teasers=(
        TeaserSpec(
            name="tech-regulatory-digest",
            title="Tech regulatory digest",
            summary="Technology regulation and enforcement that moves markets.",
            highlights=("rules", "enforcement"),
        ),
    ),
    params=RegulatoryParams,
    output=RegulatoryDigestOut,
    available=_regulatory_available,
)
def tech_regulatory_digest(call: ProductCall) -> dict[str, Any]:
    return regulatory_payload(limit=cast(RegulatoryParams, call.params).limit)


# --- weekly research digest ------------------------------------------------------------------
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


# --- grant scout desk ------------------------------------------------------------------------
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
)
def grant_scout_desk(call: ProductCall) -> dict[str, Any]:
    return grants_payload(limit=cast(GrantParams, call.params).limit)
