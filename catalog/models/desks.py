"""The desks' own state and the stored intelligence snapshots (catalog/editorial/track_record.py and
catalog/editorial/intel.py write them; the signals, regime and intel products read them)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class DeskState(models.Model):
    """One desk's switch and kill state. A desk whose drawdown passes its kill threshold is
    killed (killed_at, kill_reason) and publishes nothing until staff re-enable it (the admin
    action): its drawdown then counts again from `record_since`. Staff may also switch a desk
    off (`enabled`)."""

    desk = models.SlugField(max_length=64, unique=True)
    enabled = models.BooleanField(default=True, help_text="off: the desk publishes nothing")
    killed_at = models.DateTimeField(null=True, blank=True)
    kill_reason = models.CharField(max_length=300, blank=True)
    kill_drawdown_pct = models.FloatField(
        null=True, blank=True, help_text="this desk's kill threshold; empty: DESK_KILL_DRAWDOWN_PCT"
    )
    record_since = models.DateTimeField(
        null=True, blank=True, help_text="the kill check counts closed signals from here (set on re-enable)"
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["desk"]

    def __str__(self) -> str:
        return f"{self.desk} ({'killed' if self.killed_at else 'on' if self.enabled else 'off'})"

    @property
    def killed(self) -> bool:
        return self.killed_at is not None

    @property
    def publishing(self) -> bool:
        return self.enabled and self.killed_at is None


class IntelSnapshot(models.Model):
    """The composite intelligence (regime, top signals, notable news, sentiment when the
    service computes it) as computed on schedule; intel/latest sells the newest,
    intel/history the stored ones."""

    computed_at = models.DateTimeField(default=timezone.now, db_index=True)
    regime = models.CharField(max_length=32, help_text="the market regime at the time")
    as_of = models.DateTimeField(null=True, blank=True, help_text="the newest input row")
    replay = models.BooleanField(default=False)
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return f"intel {self.regime} @ {self.computed_at:%Y-%m-%d %H:%M}"
