"""One row per feed source: what its last passes did (the health report and the admin read it)
and the lock that keeps one source's passes from overlapping (`running_since`)."""

from __future__ import annotations

from django.db import models


class FeedState(models.Model):
    name = models.CharField(max_length=64, unique=True, help_text="the source's registered name")
    # The lock: set (by a conditional update) while a pass runs; a value older than
    # FEEDS_LOCK_STALE_SECONDS belongs to a process that died and may be taken over.
    running_since = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, help_text="why the last pass failed (empty: it did not)")
    # A successful pass that fell back to replay (auto mode) says why live failed here.
    last_note = models.TextField(blank=True)
    rows_written = models.PositiveIntegerField(default=0, help_text="rows the last successful pass wrote")
    consecutive_failures = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, help_text="backed off until then")
    last_replay = models.BooleanField(default=False, help_text="the last successful pass read the replay")
    last_duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # The feeds of the source (a news feed's URL, a venue, a partner) that failed in the last
    # pass, each {"feed": ..., "reason": ...} in public words: health shows the source degraded
    # with them while the others were written.
    last_failed_feeds = models.JSONField(default=list, blank=True)
    last_oddities = models.PositiveIntegerField(
        default=0, help_text="oddities the last successful pass worked around (rows a source repeated, ...)"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def failing(self) -> bool:
        return self.consecutive_failures > 0

    @property
    def degraded(self) -> bool:
        """The last pass succeeded while some of the source's feeds failed."""
        return not self.failing and bool(self.last_failed_feeds)
