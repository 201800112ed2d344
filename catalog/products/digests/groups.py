"""The market groups digest: a day of news by market group (crypto, equities, macro,
regulation) with the groups' sentiment and their assets' 24 h moves."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import ScoredNews, asset_sentiment, news_sentiment_backfill, scored_news
from catalog.analytics.series import ohlcv, symbols_with_candles
from catalog.models import NewsItem
from catalog.products.digests.common import (
    NewsLineOut,
    SentimentLabel,
    _has_news_since,
    _news_prov,
    news_line,
)
from catalog.products.registry import ProductCall, ProductFailed, TeaserSpec, fresh_required, product

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
