from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, cast

from django.utils import timezone
from pydantic import Field

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import naive_utc
from a2a_service.core.inputs import QueryModel
from catalog.models import NewsItem
from catalog.products.registry import ProductCall, ProductFailed, register

DIGEST_WINDOW = timedelta(hours=24)
DIGEST_MAX_ITEMS = 60


class NewsUnlockParams(QueryModel):
    # le: a larger id cannot exist (bigint) and must answer 422, not a database error.
    news_id: int = Field(ge=1, le=2**63 - 1, description="id of the news item to unlock")


def _news_item(call: ProductCall) -> NewsItem:
    # The registry validates the query with this product's params class (NewsUnlockParams) before
    # running it, so the narrowing is a fact of registration, not a guess.
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


@register("news_unlock", params=NewsUnlockParams, price_for=lambda call: _news_item(call).price_atomic)
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


@register("news_digest", pure=True, available=_has_news(None))
def news_digest(call: ProductCall) -> dict[str, Any]:
    return _digest(None, "News digest")


@register("equity_news_digest", pure=True, available=_has_news(["equity"]))
def equity_news_digest(call: ProductCall) -> dict[str, Any]:
    return _digest(["equity"], "Equity news digest")
