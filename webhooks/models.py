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
    # The one account an event was published for (test events, delegated orders); empty for a
    # broadcast. Kept when its subscriptions are deleted: the per-account test-event limit counts
    # these, so deleting and re-creating subscriptions does not renew it.
    account = models.ForeignKey(
        "billing.Account", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["account", "kind", "created_at"], name="webhook_event_account_kind")]

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


class DeliveryTurn(models.Model):
    """When a worker last claimed a delivery of this account: workers serve the due delivery of
    the account served least recently first (webhooks/turns.py), so one account's backlog
    cannot keep another account's deliveries waiting behind it. Per account, not per
    subscription: deleting and re-creating subscriptions does not buy an earlier turn."""

    account = models.OneToOneField(
        "billing.Account", primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    last_claimed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.account_id} served {self.last_claimed_at:%H:%M:%S}"


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


# --- execution delegation (webhooks/delegation/) -----------------------------------------------
class Delegation(models.Model):
    """An account lets a desk's new signals on some symbols reach its webhook as orders, within
    notional limits, until it expires or is revoked. Its orders are pushed through its own
    webhook subscription (`subscription`: the URL and the whsec_ signing secret, shown once)."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        EXPIRED = "expired", "expired"
        REVOKED = "revoked", "revoked"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey("billing.Account", on_delete=models.CASCADE, related_name="delegations")
    desk = models.CharField(max_length=64, db_index=True)
    symbols = models.JSONField(help_text="the symbols whose signals become orders")
    max_notional_per_signal_atomic = models.PositiveBigIntegerField(help_text="atomic USDC")
    max_notional_total_atomic = models.PositiveBigIntegerField(help_text="atomic USDC")
    subscription = models.ForeignKey(
        WebhookSubscription, null=True, on_delete=models.SET_NULL, related_name="delegations"
    )
    expires_at = models.DateTimeField(db_index=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.account_id} → {self.desk} ({self.status})"

    @property
    def status(self) -> str:
        if self.revoked_at is not None:
            return self.Status.REVOKED
        if self.expires_at <= timezone.now():
            return self.Status.EXPIRED
        return self.Status.ACTIVE


class DelegatedOrder(models.Model):
    """A desk signal turned into an order of one delegation, pushed as a `delegated_order` event
    (`event`). An entry order is sized by the signal's size fraction and the delegation's limits;
    when the desk closes the signal, an exit order (`closes` the entry) sells back what was
    reported filled on the entry (buys back a short)."""

    class Side(models.TextChoices):
        BUY = "buy", "buy"
        SELL = "sell", "sell"

    class Kind(models.TextChoices):
        ENTRY = "entry", "entry (the signal opened)"
        EXIT = "exit", "exit (the desk closed the signal)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    delegation = models.ForeignKey(Delegation, on_delete=models.CASCADE, related_name="orders")
    signal = models.ForeignKey("catalog.DeskSignal", null=True, on_delete=models.SET_NULL, related_name="+")
    desk = models.CharField(max_length=64)
    symbol = models.CharField(max_length=40)
    venue = models.CharField(max_length=64, blank=True)
    side = models.CharField(max_length=4, choices=Side.choices)
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.ENTRY)
    closes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="exits",
        help_text="exit: its entry",
    )
    reference_price = models.DecimalField(
        max_digits=30, decimal_places=12, help_text="entry: the signal's entry; exit: its exit price"
    )
    size_fraction = models.FloatField(
        help_text="the desk's size for the signal, as a fraction of the per-signal max"
    )
    notional_atomic = models.PositiveBigIntegerField(help_text="atomic USDC: the order's notional")
    size = models.DecimalField(
        max_digits=36, decimal_places=12, help_text="notional / reference price, base asset"
    )
    event = models.ForeignKey(
        WebhookEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["delegation", "signal", "kind"], name="one_order_per_signal_and_delegation"
            )
        ]

    def __str__(self) -> str:
        return f"{self.side} {self.size} {self.symbol} ({self.delegation_id})"


class DelegatedFill(models.Model):
    """A fill an agent reported on one of its delegated orders: self-reported, so recorded only
    when its price is within DELEGATION_FILL_PRICE_TOLERANCE_PCT of what the market traded at
    its time (`market_low`..`market_high`, from the ingested prices named in `market_source`).
    Shown beside the desk's paper record (scorecard live_fills), never in its win rate or PnL;
    a fill without that check (recorded before it existed) is not counted there at all."""

    order = models.ForeignKey(DelegatedOrder, on_delete=models.CASCADE, related_name="fills")
    delegation = models.ForeignKey(Delegation, on_delete=models.CASCADE, related_name="fills")
    desk = models.CharField(max_length=64, db_index=True)
    symbol = models.CharField(max_length=40)
    side = models.CharField(max_length=4, choices=DelegatedOrder.Side.choices)
    venue = models.CharField(max_length=64)
    price = models.DecimalField(max_digits=30, decimal_places=12)
    size = models.DecimalField(max_digits=36, decimal_places=12)
    notional_atomic = models.PositiveBigIntegerField(help_text="atomic USDC: size x price")
    fee_atomic = models.PositiveBigIntegerField(default=0)
    filled_at = models.DateTimeField(db_index=True)
    tx_hash = models.CharField(max_length=100, blank=True)
    client_fill_id = models.CharField(max_length=64, blank=True)
    market_low = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    market_high = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    market_source = models.CharField(
        max_length=200, blank=True, help_text="the ingested prices the fill was checked against; empty: unchecked"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["filled_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "tx_hash"], condition=~models.Q(tx_hash=""), name="one_fill_per_order_tx"
            ),
            models.UniqueConstraint(
                fields=["order", "client_fill_id"],
                condition=~models.Q(client_fill_id=""),
                name="one_fill_per_order_client_id",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.side} {self.size} {self.symbol} @ {self.price}"


# --- coordination pool (webhooks/pool/) ---------------------------------------------------------
class PoolMembership(models.Model):
    """An account in a desk's coordination pool: each copy signal reaches it in its slot with a
    size allocation. A member asks for a fixed size (max_size_atomic) or a share of the size."""

    account = models.ForeignKey("billing.Account", on_delete=models.CASCADE, related_name="pool_memberships")
    desk = models.CharField(max_length=64, db_index=True)
    max_size_atomic = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="atomic USDC per signal"
    )
    share = models.FloatField(null=True, blank=True, help_text="fraction of the size the desk publishes")
    subscription = models.ForeignKey(
        WebhookSubscription,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="pool_memberships",
        help_text="the pool's own webhook (join with webhook_url); empty: the account's pool_signal webhooks",
    )
    joined_at = models.DateTimeField(default=timezone.now)
    left_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["desk", "joined_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "desk"],
                condition=models.Q(left_at__isnull=True),
                name="one_active_pool_membership",
            )
        ]

    def __str__(self) -> str:
        return f"{self.account_id} in {self.desk}"


class PoolDelivery(models.Model):
    """One copy signal pushed to one pool member: its slot, its allocation and the size it was
    cut from (the allocations of a signal never add up to more than published_size_atomic)."""

    membership = models.ForeignKey(PoolMembership, on_delete=models.CASCADE, related_name="deliveries")
    signal = models.ForeignKey("catalog.DeskSignal", null=True, on_delete=models.SET_NULL, related_name="+")
    slot = models.PositiveIntegerField()
    requested_atomic = models.PositiveBigIntegerField()
    allocation_atomic = models.PositiveBigIntegerField()
    published_size_atomic = models.PositiveBigIntegerField()
    deliver_at = models.DateTimeField()
    event = models.ForeignKey(
        WebhookEvent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "pool deliveries"
        constraints = [
            models.UniqueConstraint(fields=["membership", "signal"], name="one_pool_delivery_per_signal")
        ]

    def __str__(self) -> str:
        return f"signal {self.signal_id} → {self.membership_id} slot {self.slot}"
