"""Prediction markets ingested from the venues (catalog/feeds/polymarket, catalog/feeds/kalshi),
normalized to one row per (venue, market), and the yes-price history the later products read."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class PredictionMarket(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "open"
        CLOSED = "closed", "closed"
        RESOLVED = "resolved", "resolved"

    venue = models.CharField(max_length=64, db_index=True)
    external_id = models.CharField(max_length=200)
    question = models.CharField(max_length=500)
    category = models.CharField(max_length=64, blank=True)
    # The venue's grouping of markets (Polymarket event slug, Kalshi event ticker).
    event_id = models.CharField(max_length=200, blank=True)
    outcomes = models.JSONField(default=list, blank=True)
    yes_price = models.DecimalField(max_digits=8, decimal_places=6, null=True, blank=True)
    volume_usd = models.DecimalField(max_digits=24, decimal_places=2, null=True, blank=True)
    liquidity_usd = models.DecimalField(max_digits=24, decimal_places=2, null=True, blank=True)
    closes_at = models.DateTimeField(null=True, blank=True, db_index=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True)
    url = models.URLField(max_length=500, blank=True)
    # How the venue settles it: the named resolution source (Polymarket's resolutionSource) and
    # the rules text (Polymarket's description, Kalshi's rules_primary). Cross-venue matching
    # compares them; the resolution calendar shows them.
    resolution_source = models.CharField(max_length=300, blank=True)
    rules = models.TextField(blank=True)
    # Provenance: the feed source that wrote the row, whether it came from the replay server,
    # and when the source was last seen saying this.
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["closes_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["venue", "external_id"], name="prediction_market_unique")
        ]

    def __str__(self) -> str:
        return f"{self.venue}: {self.question[:60]}"


class PredictionPrice(models.Model):
    """A market's yes price as a pass saw it: one row per pass in which it changed."""

    market = models.ForeignKey(PredictionMarket, on_delete=models.CASCADE, related_name="prices")
    yes_price = models.DecimalField(max_digits=8, decimal_places=6)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)  # retention prunes on it

    class Meta:
        ordering = ["-observed_at", "-id"]
        indexes = [models.Index(fields=["market", "-observed_at"], name="prediction_price_market_idx")]

    def __str__(self) -> str:
        return f"{self.market_id} {self.yes_price} @ {self.observed_at:%Y-%m-%d %H:%M}"
