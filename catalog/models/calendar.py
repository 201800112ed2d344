"""Scheduled market-moving events: macro releases and central-bank decisions from the ICS
calendars the calendar feed ingests (catalog/feeds/calendar/), and events staff add in the
admin (source "manual"). The macro gate and the risk products read them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class CalendarEvent(models.Model):
    class Impact(models.TextChoices):
        LOW = "low", "low"
        MEDIUM = "medium", "medium"
        HIGH = "high", "high"

    # The feed's UID for ingested events (upserted on source + uid); empty for staff events.
    uid = models.CharField(max_length=300, blank=True)
    source = models.CharField(max_length=64, default="manual", help_text="the calendar feed, or manual")
    title = models.CharField(max_length=300)
    category = models.CharField(max_length=64, blank=True, help_text="e.g. rates, inflation, jobs, earnings")
    country = models.CharField(max_length=8, blank=True, help_text="ISO country or region code, e.g. US, EU")
    impact = models.CharField(max_length=8, choices=Impact.choices, default=Impact.MEDIUM, db_index=True)
    starts_at = models.DateTimeField(db_index=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    description = models.TextField(blank=True)
    url = models.URLField(max_length=500, blank=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["starts_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "uid"], condition=~models.Q(uid=""), name="calendar_event_unique_uid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.starts_at:%Y-%m-%d %H:%M} {self.title} ({self.impact})"
