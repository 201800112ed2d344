from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from billing.txgen.models import AccountReferral, TxgenCall


@admin.register(TxgenCall)
class TxgenCallAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "payer", "prompt", "affiliate_tag", "charged_atomic"]
    list_filter = ["affiliate_tag"]
    search_fields = ["payer", "prompt", "affiliate_tag", "account__wallet_address"]
    date_hierarchy = "created_at"


@admin.register(AccountReferral)
class AccountReferralAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic only in the stubs
    """Staff may correct an account's referral (first touch otherwise)."""

    list_display = ["account", "tag", "created_at"]
    search_fields = ["tag", "account__wallet_address"]
    raw_id_fields = ["account"]
