from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from billing.models import BillingSettings, Payment, WhaleTier


@admin.register(BillingSettings)
class BillingSettingsAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "credit_billing_enabled",
        "min_deposit_atomic",
        "bundle_atomic",
        "bonus_pct",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not BillingSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Payment)
class PaymentAdmin(admin.ModelAdmin):
    """x402 payments are evidence: read-only."""

    list_display = ["created_at", "sku", "payer", "amount_usdc", "state", "tx_hash", "settled_at"]
    list_filter = ["state", "network", "x402_version", "sku"]
    search_fields = ["payer", "nonce", "tx_hash", "sku__sku"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WhaleTier)
class WhaleTierAdmin(admin.ModelAdmin):
    list_display = ["name", "min_balance_atomic", "bonus_pct"]
