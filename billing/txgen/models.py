"""Transactions from a prompt: each sold call is recorded with the account's referral tag."""

from __future__ import annotations

from django.db import models

from a2a_service.core.money import usdc_from_atomic


class AccountReferral(models.Model):
    """The affiliate that referred an account. First touch: the first tag an account sends
    (`referral` in a txgen call) stays; staff may correct it in the admin. A later tag does
    not replace it, so a caller cannot move the attribution from call to call."""

    account = models.OneToOneField("billing.Account", on_delete=models.CASCADE, related_name="referral")
    tag = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.account_id} <- {self.tag}"


class TxgenCall(models.Model):
    """One transaction built from a prompt and sold (credits or x402)."""

    account = models.ForeignKey(
        "billing.Account", null=True, blank=True, on_delete=models.PROTECT, related_name="txgen_calls"
    )
    payer = models.CharField(max_length=42, blank=True, help_text="paying wallet (x402) or account wallet")
    prompt = models.TextField()
    intent = models.JSONField(help_text="what the prompt was understood as")
    tx = models.JSONField(help_text="the unsigned transaction returned")
    affiliate_tag = models.CharField(max_length=64, blank=True, db_index=True)
    charged_atomic = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.intent.get('action', '?')} {usdc_from_atomic(self.charged_atomic):g} USDC"
