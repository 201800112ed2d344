"""Market intelligence from the news and markets: the sentiment product (computed from the
ingested news, catalog/analytics/sentiment.py). The market groups digest is in digests.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, cast

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import (
    SENTIMENT_WINDOW,
    AssetSentiment,
    Driver,
    news_in_window,
    news_sentiment_backfill,
    scored_news,
    sentiment_by_asset,
)
from catalog.editorial.intel import intel_sentiment_register
from catalog.products.registry import (
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    fresh_required,
    register,
)

SentimentLabel = Literal["positive", "negative", "neutral"]
# A ticker as the news feed tags it: letters, digits and a dot (BTC, NVDA, BRK.B).
Ticker = Annotated[str, Field(min_length=1, max_length=20, pattern=r"^[A-Za-z0-9.]+$")]


class SentimentParams(QueryModel):
    asset: Ticker | None = Field(None, description="only this asset (a ticker: BTC, SOL, NVDA); any case")
    limit: int = Limit(20)

    @field_validator("asset")
    @classmethod
    def _upper(cls, value: str | None) -> str | None:
        return value.upper() if value else value


class SentimentFiguresOut(BaseModel):
    score: float = Field(
        description="the mean of the items' compound scores weighted by recency (weight 0.5^(age/half-life)), "
        "in [-1, 1]"
    )
    label: SentimentLabel = Field(description="positive from +0.05, negative from -0.05, else neutral")
    items: int = Field(description="news items about the asset in the window")
    positive: int
    negative: int
    neutral: int
    momentum: float | None = Field(
        description="mean compound of the last 24 h minus the mean of the 7 days before; "
        "null when either period has no item"
    )
    mean_24h: float | None
    mean_prior_7d: float | None


class SentimentHeadlineOut(BaseModel):
    id: int = Field(description="the news item (unlock its full text at /api/a2a/x402/news/unlock)")
    title: str
    source: str
    url: str
    published_at: str | None = Field(description="ISO 8601 UTC")
    compound: float = Field(description="the item's VADER compound score, in [-1, 1]")
    label: SentimentLabel
    weight: float = Field(description="its recency weight, in (0, 1]")
    contribution: float = Field(description="weight x compound / sum of the weights: its share of the score")


class AssetSentimentOut(SentimentFiguresOut):
    asset: str
    last_at: str = Field(description="ISO 8601 UTC: the newest item about the asset")
    stale: bool = Field(description="true when the asset's newest item is older than the freshness limit")
    drivers: list[SentimentHeadlineOut] = Field(description="the items with the largest |contribution|")


class SentimentOut(Provenanced):
    window_hours: int = Field(description="items published within this many hours are read")
    half_life_hours: float
    count: int = Field(description="assets listed")
    assets: list[AssetSentimentOut] = Field(description="the most covered assets first")


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def sentiment_figures(a: AssetSentiment) -> dict[str, Any]:
    return {
        "score": round(a.score, 4),
        "label": a.label,
        "items": a.items,
        "positive": a.positive,
        "negative": a.negative,
        "neutral": a.neutral,
        "momentum": _r(a.momentum),
        "mean_24h": _r(a.mean_24h),
        "mean_prior_7d": _r(a.mean_prior_7d),
    }


def _driver(d: Driver) -> dict[str, Any]:
    return {
        "id": d.item.id,
        "title": d.item.title,
        "source": d.item.source,
        "url": d.item.url,
        "published_at": iso(d.item.published_at),
        "compound": round(d.item.compound, 4),
        "label": d.item.label,
        "weight": round(d.weight, 4),
        "contribution": round(d.contribution, 4),
    }


SENTIMENT_METHOD = (
    "VADER with a finance/crypto lexicon on each item's title and teaser; per asset the recency-weighted "
    "mean compound (half-life {half_life:g} h), counts by label, momentum = mean of the last 24 h minus "
    "the mean of the prior 7 days"
)


def sentiment_payload(
    *, asset: str | None = None, limit: int = 20, now: datetime | None = None
) -> dict[str, Any]:
    """The sentiment product's content (also for the composite products that quote it).
    Raises ProductFailed when no news about the assets asked for is fresh enough."""
    now = now or timezone.now()
    since = now - SENTIMENT_WINDOW
    half_life = timedelta(hours=settings.SENTIMENT_HALF_LIFE_HOURS)
    max_age = timedelta(hours=settings.SENTIMENT_MAX_AGE_HOURS)
    news_sentiment_backfill(since=since)
    assets = sentiment_by_asset(
        scored_news(since=since, now=now), now=now, half_life=half_life, drivers=settings.SENTIMENT_DRIVERS
    )
    if asset is not None:
        assets = [a for a in assets if a.asset == asset]
    if not assets:
        about = f"about {asset} " if asset else "naming an asset "
        raise ProductFailed(
            f"no news {about}was published in the last {int(SENTIMENT_WINDOW.total_seconds() // 3600)} h; "
            "nothing was charged"
        )
    assets = assets[:limit]
    prov = Provenance(
        method=SENTIMENT_METHOD.format(half_life=settings.SENTIMENT_HALF_LIFE_HOURS), max_age=max_age, now=now
    )
    used = {item.id: item for a in assets for item in a.news}
    for item in used.values():
        prov.add(source=item.source, replay=item.replay, as_of=item.at)
    fresh_required(prov, f"news {'about ' + asset if asset else 'naming an asset'}")
    return {
        "window_hours": int(SENTIMENT_WINDOW.total_seconds() // 3600),
        "half_life_hours": float(settings.SENTIMENT_HALF_LIFE_HOURS),
        "count": len(assets),
        "assets": [
            {
                **sentiment_figures(a),
                "asset": a.asset,
                "last_at": iso(a.last_at),
                "stale": now - a.last_at > max_age,
                "drivers": [_driver(d) for d in a.drivers],
            }
            for a in assets
        ],
        **prov.out(),
    }


def sentiment_run(call: ProductCall) -> dict[str, Any]:
    params = cast(SentimentParams, call.params)
    return sentiment_payload(asset=params.asset, limit=params.limit)


def _has_recent_news() -> tuple[bool, str]:
    since = timezone.now() - timedelta(hours=settings.SENTIMENT_MAX_AGE_HOURS)
    if news_in_window(since).exclude(tickers=[]).exists():
        return True, ""
    return False, f"no news naming an asset in the last {settings.SENTIMENT_MAX_AGE_HOURS:g} h"


register(
    ProductSpec(
        sku="sentiment",
        path="/sentiment",
        headline="Market sentiment computed from ingested news and markets",
        price="0.05",
        family="intel",
        tier="L",
        hero=True,
        rank=11,
        marketplace_paid=True,
        client_bundle=True,
        session_callable=True,
        teaser="daily-digest",
        credit_routes=(
            CreditRoute(route="api/a2a/sentiment", operation_id="sentiment", summary="Market sentiment"),
        ),
        run=sentiment_run,
        params=SentimentParams,
        output=SentimentOut,
        available=_has_recent_news,
    )
)


# --- the intel snapshots' sentiment section ---------------------------------------------------------
# A snapshot is a digest: the most covered assets are enough (the sentiment product has them all).
INTEL_SENTIMENT_ASSETS = 10


def intel_sentiment(now: datetime) -> list[dict[str, Any]]:
    """The sentiment of the assets in the news of the sentiment window, for an intel snapshot:
    [{asset, score, label, items}], the most covered first (empty when no news names an asset)."""
    assets = sentiment_by_asset(
        scored_news(since=now - SENTIMENT_WINDOW, now=now),
        now=now,
        half_life=timedelta(hours=settings.SENTIMENT_HALF_LIFE_HOURS),
        drivers=0,
    )
    return [
        {"asset": a.asset, "score": round(a.score, 4), "label": a.label, "items": a.items}
        for a in assets[:INTEL_SENTIMENT_ASSETS]
    ]


# Registered where catalog.products loads (CatalogConfig.ready): every snapshot computed from
# then on carries the sentiment section.
intel_sentiment_register(intel_sentiment)
