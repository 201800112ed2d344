"""Staff views of the agents app: the agents' recorded answers and the ERC-8004 registration."""

from __future__ import annotations

from django.contrib import admin

from a2a_service.core.admin_base import ReadOnlyAdmin
from agents.models import AgentInteraction, Erc8004Registration


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
