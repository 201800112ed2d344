"""Cross-venue matches of prediction markets (catalog/analytics/prediction_match.py writes them
after each prediction feed pass; staff confirm or reject them in the admin)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from catalog.models.prediction import PredictionMarket


class PredictionMatch(models.Model):
    """Two markets on two venues taken for the same event. `market_a` is the one whose venue
    sorts first (kalshi before polymarket), so a pair is stored once."""

    class Status(models.TextChoices):
        AUTO = "auto", "auto (computed)"
        CONFIRMED = "confirmed", "confirmed by staff"
        REJECTED = "rejected", "rejected by staff"

    market_a = models.ForeignKey(PredictionMarket, on_delete=models.CASCADE, related_name="+")
    market_b = models.ForeignKey(PredictionMarket, on_delete=models.CASCADE, related_name="+")
    # Confidence in [0, 1] that the two resolve on the same event (1 once staff confirmed it).
    confidence = models.FloatField(default=0.0)
    question_similarity = models.FloatField(default=0.0)
    close_gap_hours = models.FloatField(null=True, blank=True)
    # What differs in how the two settle (threshold, date, source, close time): shown, never hidden.
    rules_mismatch = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.AUTO, db_index=True)
    # The latest yes prices and their gap as the last matching pass saw them; `divergent` is the
    # gap net of both venues' fees being positive. Its switch from false to true pushes
    # `prediction_alert` (webhooks/signals.py): once per opening, not every pass.
    yes_a = models.DecimalField(max_digits=8, decimal_places=6, null=True, blank=True)
    yes_b = models.DecimalField(max_digits=8, decimal_places=6, null=True, blank=True)
    gap = models.FloatField(null=True, blank=True)
    net_gap = models.FloatField(null=True, blank=True)
    divergent = models.BooleanField(default=False)
    divergent_since = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-confidence", "id"]
        constraints = [
            models.UniqueConstraint(fields=["market_a", "market_b"], name="prediction_match_unique")
        ]

    def __str__(self) -> str:
        return f"{self.market_a} <> {self.market_b} ({self.confidence:.2f}, {self.status})"
