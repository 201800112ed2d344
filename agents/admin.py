from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from agents.models import A2aTask


@admin.register(A2aTask)
class A2aTaskAdmin(ReadOnlyAdmin):
    """A2A tasks are what agents asked and were delivered (and what they paid): read-only."""

    list_display = ["created_at", "id", "agent", "skill", "state", "price_atomic", "payer", "account"]
    list_filter = ["state", "agent"]
    search_fields = ["id", "context_id", "skill", "payer"]
    date_hierarchy = "created_at"
    raw_id_fields = ["account"]
