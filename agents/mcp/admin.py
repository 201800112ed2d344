"""Staff views of the managed MCP allowances and the calls they paid (read-only: code writes them)."""

from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from agents.models import McpAllowance, McpAllowanceCall


@admin.register(McpAllowance)
class McpAllowanceAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "paid_by", "calls_used", "calls_total", "expires_at"]
    search_fields = ["account__wallet_address", "paid_by"]
    list_select_related = ["account"]


@admin.register(McpAllowanceCall)
class McpAllowanceCallAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "allowance", "sku"]
    list_filter = ["sku"]
    list_select_related = ["allowance", "sku"]
