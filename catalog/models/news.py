from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from a2a_service.core.money import atomic_from_usdc, usdc_from_atomic

# Unlock prices by category, as the interface observes them (0.18 equity/general, 0.1 crypto);
# the settings NEWS_PRICE_<CATEGORY>_USDC set them (news_price_atomic).
DEFAULT_NEWS_PRICE_ATOMIC = {"equity": 180_000, "general": 180_000, "crypto": 100_000}


def news_price_atomic(category: str) -> int:
    """A new item's unlock price: its category's setting (NEWS_PRICE_EQUITY_USDC, ...)."""
    value = getattr(settings, f"NEWS_PRICE_{category.upper()}_USDC", None)
    if value is None:
        return DEFAULT_NEWS_PRICE_ATOMIC.get(category, 100_000)
    return atomic_from_usdc(value)


class NewsItem(models.Model):
    class Category(models.TextChoices):
        GENERAL = "general", "general"
        EQUITY = "equity", "equity"
        CRYPTO = "crypto", "crypto"

    class Sentiment(models.TextChoices):
        POSITIVE = "positive", "positive"
        NEGATIVE = "negative", "negative"
        NEUTRAL = "neutral", "neutral"

    title = models.CharField(max_length=400)
    teaser = models.TextField(help_text="free teaser text (may equal the title)")
    body = models.TextField(help_text="full text, sold by unlock")
    category = models.CharField(
        max_length=16, choices=Category.choices, default=Category.GENERAL, db_index=True
    )
    source = models.CharField(max_length=120, blank=True)
    url = models.URLField(max_length=500, blank=True, db_index=True)
    market_group = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="market agent group that ingested it, if any"
    )
    external_id = models.CharField(max_length=200, blank=True, help_text="feed's id, for de-duplication")
    # Provenance and de-duplication of ingested items (catalog/feeds/news/): the normalized
    # title's hash finds the same story carried by two feeds.
    title_hash = models.CharField(max_length=64, blank=True, db_index=True)
    published_at = models.DateTimeField(null=True, blank=True, db_index=True)
    content = models.TextField(blank=True, help_text="the full content the feed carried (HTML as sent)")
    tickers = models.JSONField(default=list, blank=True, help_text="tickers/assets the item mentions")
    replay = models.BooleanField(default=False, help_text="ingested from the local replay, not a live feed")
    price_atomic = models.PositiveBigIntegerField(blank=True, help_text="unlock price in atomic USDC")
    ingested_at = models.DateTimeField(default=timezone.now, db_index=True)
    # The item's own sentiment (catalog/analytics/sentiment.py: VADER with the finance/crypto
    # lexicon, on title + teaser), written by the news feed when it ingests and by the
    # backfill for older rows; the sentiment products aggregate these per asset.
    sentiment_compound = models.FloatField(
        null=True, blank=True, help_text="VADER compound score in [-1, 1]; empty: not scored yet"
    )
    sentiment_label = models.CharField(max_length=8, choices=Sentiment.choices, blank=True)
    sentiment_scored_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id"],
                condition=~models.Q(external_id=""),
                name="news_unique_source_external_id",
            )
        ]

    def __str__(self) -> str:
        return self.title[:80]

    def save(self, *args, **kwargs) -> None:
        if self.price_atomic is None:
            self.price_atomic = news_price_atomic(self.category)
        super().save(*args, **kwargs)

    @property
    def price_usdc(self) -> float:
        return usdc_from_atomic(self.price_atomic)
