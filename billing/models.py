from __future__ import annotations

from decimal import Decimal

from django.db import models

from catalog.money import usdc_from_atomic


class BillingSettings(models.Model):
    """The shop's staff-editable billing switches (one row)."""

    credit_billing_enabled = models.BooleanField(
        default=True, help_text="debit X-API-Key calls from the prepaid credit balance"
    )
    min_deposit_atomic = models.PositiveBigIntegerField(default=10_000, help_text="smallest deposit credited")
    bundle_atomic = models.PositiveBigIntegerField(
        default=5_000_000, help_text="deposit size that earns the bonus"
    )
    bonus_pct = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("10.00"))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "billing settings"
        verbose_name_plural = "billing settings"

    def __str__(self) -> str:
        return "billing settings"

    @classmethod
    def load(cls) -> BillingSettings:
        obj, _ = cls.objects.get_or_create(pk=1)
        return obj

    @property
    def bonus_atomic(self) -> int:
        return int(self.bundle_atomic * self.bonus_pct / 100)

    @property
    def min_deposit_usdc(self) -> float:
        return usdc_from_atomic(self.min_deposit_atomic)

    @property
    def bundle_usdc(self) -> float:
        return usdc_from_atomic(self.bundle_atomic)

    @property
    def bonus_usdc(self) -> float:
        return usdc_from_atomic(self.bonus_atomic)


class Payment(models.Model):
    """One x402 payment proof presented for a SKU. (payer, nonce) is unique: a proof is
    claimed once, before the product runs. Settled rows are the service's sales."""

    class State(models.TextChoices):
        CLAIMED = "claimed", "claimed"
        SETTLED = "settled", "settled"
        FAILED = "failed", "failed"

    sku = models.ForeignKey("catalog.Sku", on_delete=models.PROTECT, related_name="payments")
    resource = models.CharField(max_length=500)
    payer = models.CharField(max_length=42, db_index=True)
    nonce = models.CharField(max_length=66)
    amount_atomic = models.PositiveBigIntegerField()
    network = models.CharField(max_length=32)
    asset = models.CharField(max_length=42)
    pay_to = models.CharField(max_length=42)
    x402_version = models.PositiveSmallIntegerField(default=2)
    state = models.CharField(max_length=16, choices=State.choices, default=State.CLAIMED, db_index=True)
    tx_hash = models.CharField(max_length=66, blank=True)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    settled_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["payer", "nonce"], name="payment_proof_used_once")]
        indexes = [models.Index(fields=["state", "settled_at"])]

    def __str__(self) -> str:
        return f"{self.sku_id} {self.payer} {self.state}"

    @property
    def amount_usdc(self) -> float:
        return usdc_from_atomic(self.amount_atomic)


class WhaleTier(models.Model):
    """A tier of large prepaid accounts, published in the whale catalog."""

    name = models.CharField(max_length=64, unique=True)
    min_balance_atomic = models.PositiveBigIntegerField()
    bonus_pct = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("0"))
    perks = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["min_balance_atomic"]

    def __str__(self) -> str:
        return self.name
