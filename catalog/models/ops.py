from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """Written by a beat-scheduled task run on a worker; program/health reads its age."""

    name = models.CharField(max_length=64, primary_key=True)
    hostname = models.CharField(max_length=200, blank=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} {self.beat_at:%Y-%m-%d %H:%M:%S}"


class DailyCounter(models.Model):
    """Per-day hit counters (free endpoint hits, teaser views, payment challenges):
    the conversion funnel's 'hits' are these rows, nothing else."""

    day = models.DateField()
    metric = models.CharField(max_length=32)
    key = models.CharField(max_length=120)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "metric", "key"], name="daily_counter_unique")]
        indexes = [models.Index(fields=["metric", "day"])]

    def __str__(self) -> str:
        return f"{self.day} {self.metric} {self.key}: {self.count}"
