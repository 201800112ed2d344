"""Staff post bounties and decide submissions (accept pays the reward through the service)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from a2a_service.core.admin_base import ReadOnlyAdmin
from a2a_service.core.errors import Conflict
from a2a_service.core.money import usdc_from_atomic
from billing.bounties.models import Bounty, BountyClaim
from billing.bounties.services import claim_accept, claim_reject


@admin.register(Bounty)
class BountyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic only in the stubs
    list_display = [
        "title",
        "kind",
        "reward_usdc",
        "auto_check",
        "awarded_count",
        "max_awards",
        "status",
        "opens_at",
        "expires_at",
    ]
    list_filter = ["kind", "status", "auto_check"]
    search_fields = ["title", "description"]
    readonly_fields = ["awarded_count", "created_by", "created_at"]

    @admin.display(description="reward (USDC)")
    def reward_usdc(self, obj: Bounty) -> str:
        return f"{usdc_from_atomic(obj.reward_atomic):g}"

    def save_model(
        self, request: HttpRequest, obj: Bounty, form: forms.ModelForm[Bounty], change: bool
    ) -> None:
        if not change and request.user.is_authenticated:
            obj.created_by_id = request.user.pk
        super().save_model(request, obj, form, change)

    def has_delete_permission(self, request: HttpRequest, obj: Bounty | None = None) -> bool:
        return False  # its claims (and their reward rows) point to it


@admin.register(BountyClaim)
class BountyClaimAdmin(ReadOnlyAdmin):
    """Claims are written by agents; staff decide them with the actions (accept pays once)."""

    list_display = ["claimed_at", "bounty", "account", "status", "submitted_at", "decided_by", "reward_entry"]
    list_filter = ["status", "bounty__kind"]
    search_fields = ["account__wallet_address", "bounty__title"]
    actions = ["accept", "reject"]

    @admin.action(description="Accept selected submissions (pays each reward once)", permissions=["operate"])
    def accept(self, request: HttpRequest, queryset: QuerySet[BountyClaim]) -> None:
        self._decide(request, queryset, accept=True)

    @admin.action(description="Reject selected claims", permissions=["operate"])
    def reject(self, request: HttpRequest, queryset: QuerySet[BountyClaim]) -> None:
        self._decide(request, queryset, accept=False)

    def _decide(self, request: HttpRequest, queryset: QuerySet[BountyClaim], *, accept: bool) -> None:
        staff_id = request.user.pk if request.user.is_authenticated else None
        done, refused = 0, []
        for claim_id in queryset.values_list("pk", flat=True):
            try:
                if accept:
                    claim = claim_accept(claim_id=claim_id, staff_id=staff_id, reason="accepted by staff")
                else:
                    claim = claim_reject(claim_id=claim_id, staff_id=staff_id, reason="rejected by staff")
            except Conflict as exc:
                refused.append(f"{claim_id}: {exc}")
                continue
            done += 1
            self.log_change(request, claim, f"{claim.status} by staff")
        verb = "accepted (reward paid)" if accept else "rejected"
        self.message_user(request, f"{done} claim(s) {verb}", messages.SUCCESS)
        if refused:
            self.message_user(request, "not changed: " + "; ".join(refused), messages.WARNING)
