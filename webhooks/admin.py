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
