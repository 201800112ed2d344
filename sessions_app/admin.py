from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from sessions_app.models import PrepaidSession, SessionCall, SessionPack


@admin.register(SessionPack)
class SessionPackAdmin(admin.ModelAdmin):
    list_display = ["sku", "calls_total", "window_hours"]
    filter_horizontal = ["covered_skus"]


@admin.register(PrepaidSession)
class PrepaidSessionAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "pack", "buyer", "calls_used", "calls_total", "expires_at"]
    search_fields = ["buyer"]
    list_filter = ["pack"]


@admin.register(SessionCall)
class SessionCallAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "session", "sku"]
    list_filter = ["sku"]
