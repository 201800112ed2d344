"""What the digests share: the staff note, a scored news line and its provenance, and the check
that news arrived within a window."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Literal

from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.provenance import Provenance
from catalog.analytics.sentiment import ScoredNews, news_in_window
from catalog.models import EditorialPiece

SentimentLabel = Literal["positive", "negative", "neutral"]


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


def _has_news_since(window: timedelta, *, what: str, q: Q | None = None) -> tuple[bool, str]:
    qs = news_in_window(timezone.now() - window)
    if q is not None:
        qs = qs.filter(q)
    if qs.exists():
        return True, ""
    return False, f"no {what} in the last {int(window.total_seconds() // 3600)} h"
