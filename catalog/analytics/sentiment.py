"""Sentiment from the ingested news: each item's score, and per asset a recency-weighted view.

An item: VADER (vaderSentiment's SentimentIntensityAnalyzer) with the finance/crypto overlay of
catalog/analytics/sentiment_lexicon.py, on the item's title and teaser (the summary the feed
carried; the body is not read: feeds carry it unevenly, and a headline is what a trader
reads). Multi-word terms ("all-time high", "SEC charges") are joined into one token before
scoring. The compound score is in [-1, 1]; its label is positive from +0.05, negative from
-0.05, else neutral (the thresholds VADER's authors recommend). The news feed scores items
as it ingests them (catalog/feeds/news/store.py); `news_sentiment_backfill` scores older
rows (the `score_news` command, and the sentiment products before they read).

An asset (a ticker in NewsItem.tickers), over the items of the window:
- score: the mean of the items' compounds weighted by recency, w = 0.5 ** (age / half-life)
  (age from the item's publication time, else its ingestion), so an item one half-life old
  counts half as much as one published now; label by the thresholds above;
- counts of positive, negative and neutral items;
- momentum: the mean compound of the last 24 h minus the mean of the 7 days before
  (null when either period has no item);
- drivers: the items with the largest |weighted contribution| w_i * c_i / sum(w), which sum
  to the score."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from catalog.analytics.sentiment_lexicon import NEUTRAL_IN_MARKETS, PHRASES, WORDS, phrase_token
from catalog.models import NewsItem

# VADER's recommended cut-offs for the compound score (its README: >= 0.05 positive,
# <= -0.05 negative, between them neutral).
LABEL_THRESHOLD = 0.05
# The periods of momentum, as the product defines it: the last day against the week before.
MOMENTUM_RECENT = timedelta(hours=24)
MOMENTUM_PRIOR = timedelta(days=7)
# The window that momentum needs (24 h + 7 days); older items weigh ~nothing anyway.
SENTIMENT_WINDOW = MOMENTUM_RECENT + MOMENTUM_PRIOR
POSITIVE = NewsItem.Sentiment.POSITIVE.value
NEGATIVE = NewsItem.Sentiment.NEGATIVE.value
NEUTRAL = NewsItem.Sentiment.NEUTRAL.value


# --- one text ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Score:
    compound: float
    label: str


@lru_cache(maxsize=1)
def analyzer() -> SentimentIntensityAnalyzer:
    """VADER with the overlay: market-neutral words removed, then our words and phrase tokens."""
    vader = SentimentIntensityAnalyzer()
    for word in NEUTRAL_IN_MARKETS:
        vader.lexicon.pop(word, None)
    vader.lexicon.update(WORDS)
    vader.lexicon.update({phrase_token(p): v for p, v in PHRASES.items()})
    return vader


def _phrase_pattern(phrase: str) -> str:
    return r"[\s\-]+".join(re.escape(word) for word in phrase.split())


# Longest first, so "all time highs" wins over "all time high"; whole words only.
_PHRASE_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    + "|".join(_phrase_pattern(p) for p in sorted(PHRASES, key=len, reverse=True))
    + r")(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def text_prepared(text: str) -> str:
    """The text with each lexicon phrase joined into its one token."""
    return _PHRASE_RE.sub(lambda m: phrase_token(" ".join(re.split(r"[\s\-]+", m.group(0).lower()))), text)


def label_of(compound: float) -> str:
    if compound >= LABEL_THRESHOLD:
        return POSITIVE
    if compound <= -LABEL_THRESHOLD:
        return NEGATIVE
    return NEUTRAL


def text_score(text: str) -> Score:
    compound = float(analyzer().polarity_scores(text_prepared(text))["compound"])
    return Score(compound=compound, label=label_of(compound))


def news_text(*, title: str, teaser: str) -> str:
    """What an item is scored on: its title, then its teaser unless the teaser repeats it."""
    title, teaser = title.strip(), teaser.strip()
    if not teaser or teaser.rstrip("…").strip() in title or title == teaser:
        return title
    if teaser.startswith(title):
        return teaser
    # A full stop ends the title as a sentence, so VADER's rules do not run across the two.
    return f"{title.rstrip('.')}. {teaser}"


def news_score(*, title: str, teaser: str) -> Score:
    return text_score(news_text(title=title, teaser=teaser))


# --- the stored scores -------------------------------------------------------------------------------
def news_in_window(since: datetime) -> QuerySet[NewsItem]:
    """Items published since `since` (an item without a publication time: ingested since)."""
    return NewsItem.objects.filter(
        Q(published_at__gte=since) | Q(published_at__isnull=True, ingested_at__gte=since)
    )


def news_sentiment_backfill(
    *, since: datetime | None = None, rescore: bool = False, batch_size: int = 500
) -> int:
    """Score the items that have no score (or, with rescore, every item), optionally only
    those of the window since `since`; returns how many were written. One transaction per
    batch, so a backfill of the whole table never holds one long transaction."""
    qs = news_in_window(since) if since is not None else NewsItem.objects.all()
    if not rescore:
        qs = qs.filter(sentiment_scored_at__isnull=True)
    ids = list(qs.order_by("id").values_list("id", flat=True))
    written = 0
    for start in range(0, len(ids), batch_size):
        chunk = ids[start : start + batch_size]
        with transaction.atomic():
            now = timezone.now()
            for item in NewsItem.objects.filter(id__in=chunk).defer("body", "content"):
                score = news_score(title=item.title, teaser=item.teaser)
                item.sentiment_compound = score.compound
                item.sentiment_label = score.label
                item.sentiment_scored_at = now
                item.save(update_fields=["sentiment_compound", "sentiment_label", "sentiment_scored_at"])
                written += 1
    return written


@dataclass(frozen=True)
class ScoredNews:
    id: int
    title: str
    teaser: str
    source: str
    url: str
    category: str
    at: datetime  # published, else ingested (never later than when it was read)
    published_at: datetime | None
    compound: float
    label: str
    tickers: tuple[str, ...]
    replay: bool


def scored_news(
    *, since: datetime, now: datetime, categories: Iterable[str] | None = None
) -> list[ScoredNews]:
    """The window's items with their scores, newest first. An item still unscored (written
    after the caller's backfill) is scored here, in memory."""
    qs = news_in_window(since).defer("body", "content")
    if categories is not None:
        qs = qs.filter(category__in=list(categories))
    rows = []
    for item in qs.order_by("-published_at", "-id"):
        if item.sentiment_compound is None or not item.sentiment_label:
            score = news_score(title=item.title, teaser=item.teaser)
            compound, label = score.compound, score.label
        else:
            compound, label = item.sentiment_compound, item.sentiment_label
        at = min(item.published_at or item.ingested_at, now)
        rows.append(
            ScoredNews(
                id=item.id,
                title=item.title,
                teaser=item.teaser,
                source=item.source,
                url=item.url,
                category=item.category,
                at=at,
                published_at=item.published_at,
                compound=compound,
                label=label,
                tickers=tuple(str(t).upper() for t in item.tickers or ()),
                replay=item.replay,
            )
        )
    rows.sort(key=lambda r: (r.at, r.id), reverse=True)
    return rows


# --- per asset ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Driver:
    item: ScoredNews
    weight: float  # recency weight in (0, 1]
    contribution: float  # weight * compound / sum of weights: the drivers of an asset sum to its score


@dataclass(frozen=True)
class AssetSentiment:
    asset: str
    score: float
    label: str
    items: int
    positive: int
    negative: int
    neutral: int
    momentum: float | None
    mean_24h: float | None
    mean_prior_7d: float | None
    last_at: datetime
    drivers: list[Driver]
    news: list[ScoredNews]  # the asset's items, newest first


def recency_weights(ages: np.ndarray, half_life: timedelta) -> np.ndarray:
    """0.5 ** (age / half-life), ages in seconds."""
    return np.power(0.5, ages / half_life.total_seconds())


def _mean(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if values.size else None


def asset_sentiment(
    asset: str, items: list[ScoredNews], *, now: datetime, half_life: timedelta, drivers: int
) -> AssetSentiment:
    """One asset's figures from its items (at least one)."""
    if not items:
        raise ValueError(f"{asset}: no items")
    items = sorted(items, key=lambda r: (r.at, r.id), reverse=True)
    compounds = np.array([r.compound for r in items], dtype=float)
    ages = np.array([max((now - r.at).total_seconds(), 0.0) for r in items], dtype=float)
    weights = recency_weights(ages, half_life)
    score = float(np.average(compounds, weights=weights))
    contributions = weights * compounds / weights.sum()
    recent = compounds[ages <= MOMENTUM_RECENT.total_seconds()]
    prior = compounds[
        (ages > MOMENTUM_RECENT.total_seconds())
        & (ages <= (MOMENTUM_RECENT + MOMENTUM_PRIOR).total_seconds())
    ]
    mean_24h, mean_prior = _mean(recent), _mean(prior)
    momentum = mean_24h - mean_prior if mean_24h is not None and mean_prior is not None else None
    # Largest |contribution| first; on a tie the newer item.
    order = sorted(range(len(items)), key=lambda i: (-abs(float(contributions[i])), ages[i]))
    labels = [r.label for r in items]
    return AssetSentiment(
        asset=asset,
        score=score,
        label=label_of(score),
        items=len(items),
        positive=labels.count(POSITIVE),
        negative=labels.count(NEGATIVE),
        neutral=labels.count(NEUTRAL),
        momentum=momentum,
        mean_24h=mean_24h,
        mean_prior_7d=mean_prior,
        last_at=items[0].at,
        drivers=[
            Driver(item=items[i], weight=float(weights[i]), contribution=float(contributions[i]))
            for i in order[:drivers]
        ],
        news=items,
    )


def items_by_asset(
    items: Iterable[ScoredNews], *, exclude: frozenset[str] = frozenset()
) -> dict[str, list[ScoredNews]]:
    grouped: dict[str, list[ScoredNews]] = {}
    for item in items:
        for ticker in dict.fromkeys(item.tickers):
            if ticker not in exclude:
                grouped.setdefault(ticker, []).append(item)
    return grouped


def sentiment_by_asset(
    items: Iterable[ScoredNews],
    *,
    now: datetime,
    half_life: timedelta,
    drivers: int,
    exclude: frozenset[str] = frozenset(),
) -> list[AssetSentiment]:
    """Every asset named by the items, the most covered first (then the strongest score)."""
    out = [
        asset_sentiment(asset, group, now=now, half_life=half_life, drivers=drivers)
        for asset, group in items_by_asset(items, exclude=exclude).items()
    ]
    out.sort(key=lambda a: (-a.items, -abs(a.score), a.asset))
    return out
