from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from sessions_app.models import PrepaidSession, SessionCall, SessionPack


@admin.register(SessionPack)
class SessionPackAdmin(admin.ModelAdmin):
    list_display = ["sku", "calls_total", "window_hours"]
    filter_horizontal = ["covered_skus"]


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(PrepaidSession)
class PrepaidSessionAdmin(ReadOnly):
    list_display = ["created_at", "pack", "buyer", "calls_used", "calls_total", "expires_at"]
    search_fields = ["buyer"]
    list_filter = ["pack"]


@admin.register(SessionCall)
class SessionCallAdmin(ReadOnly):
    list_display = ["created_at", "session", "sku"]
    list_filter = ["sku"]
