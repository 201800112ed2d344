"""Bounties: staff post work for agents (a spread snapshot, a fill report, a resolution
mismatch, ...) with a reward in USDC credit; an agent claims one, submits, and an accepted
submission is paid once as a ledger row.

They live in billing, not in catalog, because the reward is money: an accepted claim points to
the credit ledger row that paid it, and only billing writes the ledger. The `bounties` product
that lists them is billing's too (billing/bounties/products.py), so nothing below billing reads
these rows and catalog needs no registry for them."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from a2a_service.core.money import usdc_from_atomic


class Bounty(models.Model):
    class Kind(models.TextChoices):
        SPREAD_SNAPSHOT = "spread_snapshot", "spread snapshot"
        FILL_REPORT = "fill_report", "fill report"
        RESOLUTION_MISMATCH = "resolution_mismatch", "resolution mismatch"
        OTHER = "other", "other"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        CLOSED = "closed", "closed"

    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    kind = models.CharField(max_length=24, choices=Kind.choices, db_index=True)
    reward_atomic = models.PositiveBigIntegerField(help_text="reward per accepted submission, atomic USDC")
    auto_check = models.BooleanField(
        default=False,
        help_text="accept or reject submissions by the automatic check of the kind (spread snapshot, "
        "resolution mismatch); what the check cannot decide stays submitted for staff",
    )
    max_awards = models.PositiveIntegerField(default=1, help_text="how many submissions are paid at most")
    # Incremented by the one conditional UPDATE that pays a reward (never above max_awards).
    awarded_count = models.PositiveIntegerField(default=0, editable=False)
    opens_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True)
    criteria = models.JSONField(
        default=dict,
        blank=True,
        help_text='what a submission must match, e.g. {"symbol": "BTC/USDT", "venue": "binance", '
        '"max_age_seconds": 300, "tolerance_bps": 10} for a spread snapshot',
    )
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-opens_at", "-id"]
        verbose_name_plural = "bounties"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(awarded_count__lte=models.F("max_awards")), name="bounty_awards_within_max"
            )
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.kind}, {usdc_from_atomic(self.reward_atomic):g} USDC)"

    def clean(self) -> None:
        """The criteria the automatic checks read must have their types (the admin's form)."""
        criteria = self.criteria if isinstance(self.criteria, dict) else None
        if criteria is None:
            raise ValidationError({"criteria": 'a JSON object, e.g. {"symbol": "BTC/USDT"}'})
        for name in ("symbol", "venue"):
            if name in criteria and not isinstance(criteria[name], str):
                raise ValidationError({"criteria": f"{name} is a string"})
        for name in ("max_age_seconds", "tolerance_bps"):
            value = criteria.get(name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
            ):
                raise ValidationError({"criteria": f"{name} is a positive number"})
        venues = criteria.get("venues")
        if venues is not None and not (isinstance(venues, list) and all(isinstance(v, str) for v in venues)):
            raise ValidationError({"criteria": "venues is a list of venue names"})
        if self.expires_at is not None and self.expires_at <= self.opens_at:
            raise ValidationError({"expires_at": "after opens_at"})

    @property
    def slots_left(self) -> int:
        return max(self.max_awards - self.awarded_count, 0)

    def is_open_at(self, now: datetime) -> bool:
        """Open to claims and submissions: open, started, not expired, a reward left."""
        return (
            self.status == self.Status.OPEN
            and self.opens_at <= now
            and (self.expires_at is None or self.expires_at > now)
            and self.slots_left > 0
        )


class BountyClaim(models.Model):
    class Status(models.TextChoices):
        CLAIMED = "claimed", "claimed"
        SUBMITTED = "submitted", "submitted"
        ACCEPTED = "accepted", "accepted (paid)"
        REJECTED = "rejected", "rejected"

    bounty = models.ForeignKey(Bounty, on_delete=models.PROTECT, related_name="claims")
    account = models.ForeignKey("billing.Account", on_delete=models.PROTECT, related_name="bounty_claims")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.CLAIMED, db_index=True)
    submission = models.JSONField(null=True, blank=True)
    # What decided it: the automatic check's or the staff's reason.
    decision = models.CharField(max_length=500, blank=True)
    decided_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.PROTECT, help_text="empty: the automatic check"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # The ledger row that paid the reward: one per claim (the reward is paid once).
    reward_entry = models.OneToOneField(
        "billing.LedgerEntry", null=True, blank=True, on_delete=models.PROTECT, related_name="bounty_claim"
    )
    # The item an accepted claim was rewarded for, where the bounty's kind pays once per item
    # (a resolution mismatch: "match:<id>"), set by the UPDATE that accepts it. Unique per
    # bounty: of several claimants of the same item, whatever runs concurrently, one is paid.
    award_key = models.CharField(max_length=100, null=True, blank=True, editable=False)
    claimed_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-claimed_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["bounty", "account"], name="bounty_claimed_once_per_account"),
            models.UniqueConstraint(
                fields=["bounty", "award_key"],
                condition=models.Q(award_key__isnull=False),
                name="bounty_item_rewarded_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bounty_id} by {self.account_id}: {self.status}"
