"""Signals federated partner agents publish (PartnerAgent.signals_url), as the federation feed
ingested them; resold with attribution by the federation_signal_resale product."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class PartnerSignal(models.Model):
    class Side(models.TextChoices):
        LONG = "long", "long"
        SHORT = "short", "short"

    partner = models.ForeignKey("catalog.PartnerAgent", on_delete=models.CASCADE, related_name="signals")
    external_id = models.CharField(max_length=120, help_text="the partner's id for the signal")
    symbol = models.CharField(max_length=40)
    side = models.CharField(max_length=8, choices=Side.choices)
    entry_price = models.DecimalField(max_digits=30, decimal_places=12)
    stop_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    target_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True, help_text="the partner's, 0..1, if given")
    timeframe = models.CharField(max_length=8, blank=True)
    published_at = models.DateTimeField(db_index=True)
    source = models.CharField(max_length=32, default="federation")
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-published_at"]
        constraints = [
            models.UniqueConstraint(fields=["partner", "external_id"], name="partner_signal_unique")
        ]

    def __str__(self) -> str:
        return f"{self.partner_id}:{self.external_id} {self.side} {self.symbol}"
