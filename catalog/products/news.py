"""News products: one item's full text, and the 24-hour digests (all, equity)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, cast

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import naive_utc
from a2a_service.core.inputs import QueryModel
from catalog.models import NewsItem
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, TeaserSpec, product

DIGEST_WINDOW = timedelta(hours=24)
DIGEST_MAX_ITEMS = 60


class NewsUnlockParams(QueryModel):
    # le: a larger id cannot exist (bigint) and must answer 422, not a database error.
    news_id: int = Field(ge=1, le=2**63 - 1, description="id of the news item to unlock")


class NewsItemFullOut(BaseModel):
    id: int
    title: str
    teaser: str
    body: str = Field(description="the item's full text")
    category: str
    source: str
    url: str
    price_usdc: float = Field(description="the item's own price, charged for its first unlock")
    ingested_at: str = Field(description="ISO 8601, UTC, no zone designator")


class DigestItemOut(BaseModel):
    id: int
    title: str
    teaser: str
    source: str
    url: str


class DigestSectionOut(BaseModel):
    category: str
    items: list[DigestItemOut]


class DigestOut(BaseModel):
    title: str
    window_hours: int
    generated_at: str = Field(description="ISO 8601, UTC, no zone designator")
    count: int = Field(description="items in the digest (at most 60)")
    sections: list[DigestSectionOut] = Field(description="items grouped by category, categories sorted")


def _news_item(call: ProductCall) -> NewsItem:
    # The paid-call service validates the query with this product's params class
    # (NewsUnlockParams) before running it, so the narrowing is a fact, not a guess.
    params = cast(NewsUnlockParams, call.params)
    item = NewsItem.objects.filter(pk=params.news_id).first()
    if item is None:
        raise NotFound(f"news item {params.news_id} does not exist")
    return item


def news_item_payload(item: NewsItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "teaser": item.teaser,
        "body": item.body,
        "category": item.category,
        "source": item.source,
        "url": item.url,
        "price_usdc": item.price_usdc,
        "ingested_at": naive_utc(item.ingested_at),
    }


@product(
    sku="news_unlock",
    path="/news/unlock",
    headline="Full text of one news item (query news_id); charged at the item's own price",
    price="0.1",
    family="news",
    tier="L",
    hero=True,
    rank=0,
    teaser="daily-digest",
    credit_routes=(
        CreditRoute(
            route="api/a2a/news/<str:news_id>/unlock",
            operation_id="news_unlock_credit",
            summary="Unlock a news item's full text",
            method="POST",
        ),
    ),
    params=NewsUnlockParams,
    output=NewsItemFullOut,
    price_for=lambda call: _news_item(call).price_atomic,
)
def news_unlock(call: ProductCall) -> dict[str, Any]:
    return news_item_payload(_news_item(call))


def _digest(categories: list[str] | None, title: str) -> dict[str, Any]:
    since = timezone.now() - DIGEST_WINDOW
    qs = NewsItem.objects.filter(ingested_at__gte=since)
    if categories:
        qs = qs.filter(category__in=categories)
    items = list(qs.order_by("-id")[:DIGEST_MAX_ITEMS])
    if not items:
        raise ProductFailed("no news was ingested in the last 24 hours; the digest is not charged")
    sections: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        sections.setdefault(item.category, []).append(
            {
                "id": item.id,
                "title": item.title,
                "teaser": item.teaser,
                "source": item.source,
                "url": item.url,
            }
        )
    return {
        "title": title,
        "window_hours": int(DIGEST_WINDOW.total_seconds() // 3600),
        "generated_at": naive_utc(timezone.now()),
        "count": len(items),
        "sections": [{"category": c, "items": v} for c, v in sorted(sections.items())],
    }


def _has_news(categories: list[str] | None) -> Callable[[], tuple[bool, str]]:
    """The cheap availability check of a digest: one EXISTS query over the digest's window."""

    def check() -> tuple[bool, str]:
        qs = NewsItem.objects.filter(ingested_at__gte=timezone.now() - DIGEST_WINDOW)
        if categories:
            qs = qs.filter(category__in=categories)
        if qs.exists():
            return True, ""
        return False, "no news was ingested in the last 24 hours"

    return check


@product(
    sku="news_digest",
    path="/news/digest",
    headline="Digest of the latest ingested news, grouped by category",
    price="0.1",
    family="news",
    rank=1,
    session_callable=True,
    teaser="daily-digest",
    teasers=(
        TeaserSpec(
            name="daily-digest",
            title="Daily digest",
            summary="The day's ingested news, grouped by category.",
            highlights=("per-category headlines", "unlock links"),
        ),
    ),
    output=DigestOut,
    pure=True,
    available=_has_news(None),
)
def news_digest(call: ProductCall) -> dict[str, Any]:
    return _digest(None, "News digest")


@product(
    sku="equity_news_digest",
    path="/equity/news/digest",
    headline="Equity news digest: the latest equity news, summarised",
    price="0.1",
    family="equity",
    rank=22,
    session_callable=True,
    teaser="equity-news-digest",
    teasers=(
        TeaserSpec(
            name="equity-intel",
            title="Equity intel",
            summary="Equity news and intelligence.",
            highlights=("headlines", "tickers"),
            credit_path="/api/a2a/equity/intel",
        ),
        TeaserSpec(
            name="equity-news-digest",
            title="Equity news digest",
            summary="The latest equity news, summarised.",
            highlights=("headlines", "unlock links"),
        ),
    ),
    output=DigestOut,
    pure=True,
    available=_has_news(["equity"]),
)
def equity_news_digest(call: ProductCall) -> dict[str, Any]:
    return _digest(["equity"], "Equity news digest")
