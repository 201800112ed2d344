from __future__ import annotations

from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone


class SessionPack(models.Model):
    """What a session SKU sells: how many calls, for how long, over which SKUs (staff-edited)."""

    sku = models.OneToOneField("catalog.Sku", on_delete=models.PROTECT, related_name="session_pack")
    calls_total = models.PositiveIntegerField()
    window_hours = models.PositiveIntegerField()
    covered_skus = models.ManyToManyField("catalog.Sku", related_name="covering_packs", blank=True)

    def __str__(self) -> str:
        return f"{self.sku.sku}: {self.calls_total} calls / {self.window_hours} h"


class PrepaidSession(models.Model):
    token = models.CharField(max_length=64, unique=True)
    pack = models.ForeignKey(SessionPack, on_delete=models.PROTECT, related_name="sessions")
    buyer = models.CharField(max_length=42, blank=True, help_text="the paying wallet")
    calls_total = models.PositiveIntegerField()
    calls_used = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(calls_used__lte=models.F("calls_total")), name="session_calls_within_quota"
            ),
        ]
        # A wallet's live sessions, as the rail and the sign-in ownership check look them up
        # (`buyer__iexact`, UPPER(buyer) in SQL): without it every such call scans every session.
        indexes = [models.Index(Upper("buyer"), "expires_at", name="session_buyer_upper_expires")]

    def __str__(self) -> str:
        return f"{self.token[:8]}… {self.calls_used}/{self.calls_total}"

    @property
    def calls_remaining(self) -> int:
        return max(self.calls_total - self.calls_used, 0)

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()


class SessionCall(models.Model):
    session = models.ForeignKey(PrepaidSession, on_delete=models.CASCADE, related_name="calls")
    sku = models.ForeignKey("catalog.Sku", on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.session_id} {self.sku_id}"
