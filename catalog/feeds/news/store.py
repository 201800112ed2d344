"""Ingested news, written idempotently. One story is one row: an entry is the row whose
external id is the entry's id, else whose url is its link, else whose normalized title hash
matches (the same story carried by two feeds). A re-run updates the row's text and
provenance, never its price (staff may have overridden it) nor when it was first ingested.
Each row is scored for sentiment as it is written (catalog/analytics/sentiment.py); a re-run
rescores it, and moves its scored_at, only when the score changed."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from catalog.analytics.sentiment import news_score
from catalog.feeds.news.parse import NewsEntry, bounded, market_group
from catalog.models import EquityQuote, NewsItem, TokenizedAsset
from catalog.models.news import news_price_atomic


def priced_tickers() -> frozenset[str]:
    """The tickers the stored rows price: quoted equities and the tokens' underlyings (staff may
    have set one in the admin that no setting names). The parser reads them bare in headlines."""
    quoted = EquityQuote.objects.values_list("symbol", flat=True).distinct()
    underlyings = TokenizedAsset.objects.exclude(underlying="").values_list("underlying", flat=True)
    return frozenset(str(s).upper() for s in [*quoted, *underlyings])


def _existing(entry: NewsEntry) -> NewsItem | None:
    if entry.external_id:
        found = NewsItem.objects.filter(external_id=entry.external_id).order_by("id").first()
        if found is not None:
            return found
    if entry.link:
        found = NewsItem.objects.filter(url=entry.link).order_by("id").first()
        if found is not None:
            return found
    return NewsItem.objects.filter(title_hash=entry.title_hash).order_by("id").first()


def news_upsert(*, entry: NewsEntry, category: str, source: str, replay: bool) -> bool:
    """Write one entry; True when a row was created or changed. An entry already stored from
    another feed (same id, link or title) stays that feed's row."""
    text = f"{entry.title} {entry.text}"
    teaser = bounded(entry.summary or entry.title, settings.NEWS_TEASER_CHARS)
    score = news_score(title=entry.title, teaser=teaser)
    values = {
        "title": entry.title,
        "teaser": teaser,
        "body": entry.text,
        "content": entry.content,
        "url": entry.link,
        "published_at": entry.published_at,
        "tickers": entry.tickers,
        "market_group": market_group(category, text, entry.tickers),
        "title_hash": entry.title_hash,
        "replay": replay,
        "sentiment_compound": score.compound,
        "sentiment_label": score.label,
    }
    item = _existing(entry)
    now = timezone.now()
    if item is None:
        NewsItem.objects.create(
            **values,
            category=category,
            source=source,
            external_id=entry.external_id,
            price_atomic=news_price_atomic(category),
            ingested_at=now,
            sentiment_scored_at=now,
        )
        return True
    if item.source != source:
        return False
    changed = [k for k, v in values.items() if getattr(item, k) != v]
    if not changed:
        return False
    for key in changed:
        setattr(item, key, values[key])
    if {"sentiment_compound", "sentiment_label"} & set(changed):
        item.sentiment_scored_at = now
        changed.append("sentiment_scored_at")
    item.save(update_fields=changed)
    return True
