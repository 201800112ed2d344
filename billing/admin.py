from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from a2a_service.core.admin_base import ReadOnlyAdmin
from billing.models import BillingSettings, Payment, WhaleTier, WhaleToken
from billing.whale import whale_token_revoke


@admin.register(BillingSettings)
class BillingSettingsAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "credit_billing_enabled",
        "min_deposit_atomic",
        "bundle_atomic",
        "bonus_pct",
        "whale_window_days",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not BillingSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: BillingSettings | None = None) -> bool:
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

    def has_change_permission(self, request: HttpRequest, obj: Payment | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Payment | None = None) -> bool:
        return False


@admin.register(WhaleTier)
class WhaleTierAdmin(admin.ModelAdmin):
    """Tiers are earned by the USDC deposited within BillingSettings.whale_window_days."""

    list_display = ["name", "min_deposit_atomic", "min_deposit_usdc", "bonus_pct", "rate_limit_per_minute"]
    fields = ["name", "min_deposit_atomic", "bonus_pct", "rate_limit_per_minute", "perks"]


@admin.register(WhaleToken)
class WhaleTokenAdmin(ReadOnlyAdmin):
    """Issued by accounts (POST /api/a2a/account/whale/token); staff can only revoke them."""

    list_display = ["jti", "account", "tier", "label", "created_at", "expires_at", "revoked_at"]
    list_filter = ["tier", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["jti", "label", "account__wallet_address"]
    actions = ["revoke"]

    @admin.action(description="Revoke selected whale tokens", permissions=["operate"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[WhaleToken]) -> None:
        n = whale_token_revoke(token_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{n} whale token(s) revoked", messages.SUCCESS)


# --- credits --------------------------------------------------------------------------
from decimal import Decimal  # noqa: E402

from django import forms  # noqa: E402
from django.db import transaction  # noqa: E402
from django.template.response import TemplateResponse  # noqa: E402
from django.utils import timezone  # noqa: E402
from django.utils.cache import add_never_cache_headers  # noqa: E402

from a2a_service.core.money import atomic_from_usdc  # noqa: E402
from billing.credits import api_key_issue, credit_add  # noqa: E402
from billing.models import Account, ApiKey, ChainCursor, CreditAdjustment, Deposit, LedgerEntry  # noqa: E402


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = [
        "wallet_address",
        "credit_balance_usdc",
        "is_active",
        "ownership_verified_at",
        "reorg_shortfall_atomic",
        "created_at",
    ]
    search_fields = ["wallet_address"]
    list_filter = ["is_active", ("ownership_verified_at", admin.EmptyFieldListFilter)]
    actions = ["rotate_key"]

    @admin.action(description="Rotate the API key (the new key is shown once)", permissions=["operate"])
    def rotate_key(self, request: HttpRequest, queryset: QuerySet[Account]) -> TemplateResponse:
        """The new keys are the answer to this POST, shown once on their own page: never in a
        message (messages travel in a cookie and are stored), never stored in clear."""
        with transaction.atomic():  # all accounts rotated, or none (and no key is lost unseen)
            rotated = [(account, api_key_issue(account=account)) for account in queryset]
        for account, _ in rotated:
            self.log_change(request, account, "Rotated the API key (previous keys revoked)")
        response = TemplateResponse(
            request,
            "admin/billing/account/rotated_keys.html",
            {
                **self.admin_site.each_context(request),
                "title": "New API keys",
                "opts": self.opts,
                "rotated": [(account.wallet_address, key) for account, key in rotated],
            },
        )
        add_never_cache_headers(response)
        return response


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    list_display = ["prefix", "account", "created_at", "revoked_at"]
    search_fields = ["prefix", "account__wallet_address"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    actions = ["revoke"]

    @admin.action(description="Revoke selected keys", permissions=["operate"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        n = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{n} key(s) revoked", messages.SUCCESS)


@admin.register(Deposit)
class DepositAdmin(ReadOnlyAdmin):
    list_display = [
        "block_number",
        "tx_hash",
        "from_address",
        "amount_usdc",
        "bonus_atomic",
        "whale_bonus_atomic",
        "state",
        "account",
        "credited_at",
    ]
    list_filter = ["state"]
    search_fields = ["tx_hash", "from_address"]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    """Append-only: corrections are new rows (credit adjustments), never edits."""

    list_display = [
        "created_at",
        "account",
        "kind",
        "amount_atomic",
        "balance_after_atomic",
        "sku",
        "staff",
        "reason",
    ]
    list_filter = ["kind"]
    search_fields = ["account__wallet_address", "reference", "reason"]


class CreditAdjustmentForm(forms.ModelForm):
    amount_usdc = forms.DecimalField(
        max_digits=14, decimal_places=6, help_text="positive credits, negative debits"
    )
    reason = forms.CharField(max_length=300)

    class Meta:
        model = CreditAdjustment
        fields = ["account"]

    def clean_amount_usdc(self) -> Decimal:
        value: Decimal = self.cleaned_data["amount_usdc"]
        if value == 0:
            raise forms.ValidationError("an adjustment of zero changes nothing")
        return value


@admin.register(CreditAdjustment)
class CreditAdjustmentAdmin(admin.ModelAdmin):
    form = CreditAdjustmentForm
    list_display = ["created_at", "account", "amount_atomic", "staff", "reason"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[CreditAdjustment]:
        return super().get_queryset(request).filter(kind=LedgerEntry.Kind.ADJUSTMENT)

    def has_change_permission(self, request: HttpRequest, obj: CreditAdjustment | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: CreditAdjustment | None = None) -> bool:
        return False

    def save_model(
        self,
        request: HttpRequest,
        obj: CreditAdjustment,
        form: forms.ModelForm[CreditAdjustment],
        change: bool,
    ) -> None:
        entry = credit_add(
            account_id=form.cleaned_data["account"].id,
            amount_atomic=atomic_from_usdc(form.cleaned_data["amount_usdc"]),
            kind=LedgerEntry.Kind.ADJUSTMENT,
            staff_id=request.user.id,
            reason=form.cleaned_data["reason"],
            reference="staff adjustment",
        )
        # credit_add wrote the row (and the balance); the admin's confirmation shows that row.
        obj.__dict__.update({k: v for k, v in entry.__dict__.items() if not k.startswith("_")})


admin.site.register(
    ChainCursor,
    type(
        "ChainCursorAdmin",
        (ReadOnlyAdmin,),
        {"list_display": ["name", "block_number", "block_hash", "updated_at"]},
    ),
)

# Admins of billing's subpackages (bounties, transactions from a prompt).
import billing.bounties.admin  # noqa: E402, F401
import billing.txgen.admin  # noqa: E402, F401
