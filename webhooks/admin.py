from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest

from a2a_service.core.admin_base import ReadOnlyAdmin
from webhooks.models import DeliveryAttempt, WebhookDelivery, WebhookEvent, WebhookSubscription
from webhooks.services import delivery_replay


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(admin.ModelAdmin):
    list_display = ["id", "account", "url", "is_active", "disabled_reason", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["url", "account__wallet_address"]
    exclude = ["secret"]


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "kind", "id"]
    list_filter = ["kind"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "event",
        "subscription",
        "state",
        "attempts",
        "last_status",
        "next_attempt_at",
    ]
    list_filter = ["state"]
    actions = ["replay"]

    @admin.action(description="Replay selected dead-lettered deliveries", permissions=["operate"])
    def replay(self, request: HttpRequest, queryset) -> None:
        ids = list(queryset.filter(state=WebhookDelivery.State.DEAD).values_list("id", flat=True))
        for delivery_id in ids:
            delivery_replay(delivery_id=delivery_id)
        self.message_user(request, f"{len(ids)} delivery(ies) queued again", messages.SUCCESS)


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(ReadOnlyAdmin):
    list_display = ["attempted_at", "delivery", "status_code", "latency_ms", "error"]
    list_filter = ["status_code"]


from webhooks.models import EventPrice, PushEntitlement  # noqa: E402


@admin.register(EventPrice)
class EventPriceAdmin(admin.ModelAdmin):
    list_display = ["kind", "price_atomic"]


@admin.register(PushEntitlement)
class PushEntitlementAdmin(admin.ModelAdmin):
    list_display = ["account", "expires_at", "kinds", "created_at"]
    search_fields = ["account__wallet_address"]


# --- execution delegation and the coordination pool (read-only: written by their services) -----
from webhooks.models import (  # noqa: E402
    DelegatedFill,
    DelegatedOrder,
    Delegation,
    PoolDelivery,
    PoolMembership,
)


@admin.register(Delegation)
class DelegationAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "desk",
        "symbols",
        "max_notional_per_signal_atomic",
        "max_notional_total_atomic",
        "expires_at",
        "revoked_at",
        "status",
    ]
    list_filter = ["desk"]
    search_fields = ["account__wallet_address", "desk"]


@admin.register(DelegatedOrder)
class DelegatedOrderAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "delegation", "signal", "symbol", "side", "size", "notional_atomic"]
    list_filter = ["desk", "side"]
    search_fields = ["symbol", "delegation__account__wallet_address"]


@admin.register(DelegatedFill)
class DelegatedFillAdmin(ReadOnlyAdmin):
    list_display = [
        "filled_at",
        "order",
        "desk",
        "symbol",
        "side",
        "price",
        "size",
        "notional_atomic",
        "fee_atomic",
    ]
    list_filter = ["desk", "side", "venue"]
    search_fields = ["symbol", "tx_hash", "delegation__account__wallet_address"]


@admin.register(PoolMembership)
class PoolMembershipAdmin(ReadOnlyAdmin):
    list_display = ["joined_at", "account", "desk", "max_size_atomic", "share", "left_at"]
    list_filter = ["desk"]
    search_fields = ["account__wallet_address"]


@admin.register(PoolDelivery)
class PoolDeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "membership",
        "signal",
        "slot",
        "allocation_atomic",
        "published_size_atomic",
    ]
