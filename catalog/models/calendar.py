"""Scheduled market-moving events: macro releases and central-bank decisions from the ICS
calendars the calendar feed ingests (catalog/feeds/calendar/), and events staff add in the
admin (source "manual"). The macro gate and the risk products read them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

# The source of the events staff type in; the calendar feed never writes (nor deletes) them.
MANUAL = "manual"


class CalendarEvent(models.Model):
    class Impact(models.TextChoices):
        LOW = "low", "low"
        MEDIUM = "medium", "medium"
        HIGH = "high", "high"

    # The feed's UID for ingested events (upserted on source + calendar + uid; one occurrence of
    # a recurring event is "<UID>/<its recurrence id>"); empty for staff events.
    uid = models.CharField(max_length=300, blank=True)
    source = models.CharField(max_length=64, default=MANUAL, help_text="the calendar feed, or manual")
    # Which calendar of CALENDAR_ICS_URLS the event came from (two calendars may reuse a UID).
    calendar = models.CharField(max_length=64, blank=True, help_text="the ICS calendar's name (feed events)")
    title = models.CharField(max_length=300)
    category = models.CharField(max_length=64, blank=True, help_text="e.g. rates, inflation, jobs, earnings")
    country = models.CharField(max_length=8, blank=True, help_text="ISO country or region code, e.g. US, EU")
    impact = models.CharField(max_length=8, choices=Impact.choices, default=Impact.MEDIUM, db_index=True)
    # How the impact was decided: "priority" (the feed's PRIORITY), "rule" (the title/category
    # rules of catalog/feeds/calendar/impact.py), "default" (no rule matched) or "manual".
    impact_basis = models.CharField(max_length=16, default=MANUAL, editable=False)
    starts_at = models.DateTimeField(db_index=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    # An all-day event (DTSTART a date): starts_at is that day's midnight UTC.
    all_day = models.BooleanField(default=False)
    description = models.TextField(blank=True)
    url = models.URLField(max_length=500, blank=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["starts_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "calendar", "uid"],
                condition=~models.Q(uid=""),
                name="calendar_event_unique_uid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.starts_at:%Y-%m-%d %H:%M} {self.title} ({self.impact})"

    @property
    def ingested(self) -> bool:
        return self.source != MANUAL
