"""Staff views of the agents app: the agents' recorded answers and the ERC-8004 registration."""

from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from agents.models import A2aTask, AgentInteraction, Erc8004Registration


@admin.register(AgentInteraction)
class AgentInteractionAdmin(ReadOnlyAdmin):
    list_display = ("at", "agent", "surface", "skill", "status_code", "latency_ms")
    list_filter = ("surface", "agent", "status_code")
    search_fields = ("agent", "skill")
    date_hierarchy = "at"


@admin.register(Erc8004Registration)
class Erc8004RegistrationAdmin(ReadOnlyAdmin):
    """Written by `manage.py erc8004_register` from what the chain answered; read here."""

    list_display = ("agent_id", "chain_id", "registry_address", "owner_address", "agent_uri", "updated_at")
    readonly_fields = (
        "chain_id",
        "registry_address",
        "agent_id",
        "agent_uri",
        "owner_address",
        "tx_hash",
        "last_tx_hash",
        "registered_at",
        "updated_at",
    )


@admin.register(A2aTask)
class A2aTaskAdmin(ReadOnlyAdmin):
    """A2A tasks are what agents asked and were delivered (and what they paid): read-only."""

    list_display = ["created_at", "id", "agent", "skill", "state", "price_atomic", "payer", "account"]
    list_filter = ["state", "agent"]
    search_fields = ["id", "context_id", "skill", "payer"]
    date_hierarchy = "created_at"
    raw_id_fields = ["account"]
