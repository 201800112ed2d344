from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class WebhookSubscription(models.Model):
    account = models.ForeignKey("billing.Account", on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    events = models.JSONField(help_text="event kinds delivered to this URL")
    description = models.CharField(max_length=200, blank=True)
    secret = models.CharField(max_length=100, help_text="whsec_… signing secret (Standard Webhooks)")
    is_active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.account_id} → {self.url}"


class WebhookEvent(models.Model):
    """The outbox: written in the same transaction as what caused it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=40, db_index=True)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"

    @property
    def message_id(self) -> str:
        """The webhook-id header: the same on every attempt, so receivers can de-duplicate."""
        return f"msg_{self.id.hex}"


class WebhookDelivery(models.Model):
    class State(models.TextChoices):
        PENDING = "pending", "pending"
        DELIVERING = "delivering", "delivering (claimed by a worker)"
        DELIVERED = "delivered", "delivered"
        DEAD = "dead", "dead-lettered"
        SKIPPED = "skipped", "skipped: no pack and not enough credit"

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    subscription = models.ForeignKey(WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    # A fresh token per claim: an attempt whose lease ran out (and whose delivery was claimed
    # again) finds its token gone and changes nothing, so it cannot refund or settle twice.
    claim_token = models.UUIDField(null=True, blank=True, editable=False)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    charged_atomic = models.PositiveBigIntegerField(
        default=0, help_text="debited from credits (outcome pricing)"
    )
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["event", "subscription"], name="one_delivery_per_target")
        ]

    def __str__(self) -> str:
        return f"{self.event_id} → {self.subscription_id} ({self.state})"


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    attempted_at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-attempted_at"]

    def __str__(self) -> str:
        return f"{self.delivery_id} {self.status_code or self.error}"


class EventPrice(models.Model):
    """Outcome pricing: what one delivered event of a kind costs without a signal desk pack."""

    kind = models.CharField(max_length=40, unique=True)
    price_atomic = models.PositiveBigIntegerField()

    def __str__(self) -> str:
        return f"{self.kind}: {self.price_atomic}"


class PushEntitlement(models.Model):
    """Push turned on by a pack, for the pack's period: every event kind (a signal desk pack),
    or only the kinds listed (a prediction alert subscription pack covers prediction_alert)."""

    account = models.ForeignKey("billing.Account", on_delete=models.CASCADE, related_name="push_entitlements")
    expires_at = models.DateTimeField(db_index=True)
    kinds = models.JSONField(
        default=list, blank=True, help_text="event kinds covered; empty: every kind (signal desk pack)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.account_id} until {self.expires_at:%Y-%m-%d}"

    def covers(self, kind: str) -> bool:
        return not self.kinds or kind in self.kinds


class MorningBriefPush(models.Model):
    """A published morning brief pushed as a morning_brief event: one row per brief, so a
    re-save of the brief (staff edits, a recomposition) pushes it no second time."""

    piece = models.OneToOneField(
        "catalog.EditorialPiece", on_delete=models.CASCADE, related_name="webhook_push"
    )
    event = models.ForeignKey(WebhookEvent, null=True, blank=True, on_delete=models.SET_NULL)
    pushed_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"brief {self.piece_id} pushed {self.pushed_at:%Y-%m-%d %H:%M}"
