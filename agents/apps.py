from __future__ import annotations

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        from agents.mcp.managed import ManagedScheme, managed_owned  # (and the pack, as a product spec)
        from agents.models import A2aTask, AgentInteraction
        from billing.front import ownership_register, scheme_register
        from catalog.feeds.retention import retention_register

        # MCP's X-API-Key pays from a managed pack's allowance first (billing/front/).
        scheme_register(ManagedScheme())
        # A signed-in wallet's managed pack pays its MCP calls too (sign-in-with-x).
        # Only calls on /mcp: never a REST call the sign-in fast path serves.
        ownership_register("mcp_managed_pack", managed_owned, owned_sql="FALSE")
        from agents.discovery.marketplace import marketplace_bazaar
        from billing.x402.bazaar import bazaar_route_register

        # The marketplace's 402s declare its POST body for discovery (x402 bazaar).
        bazaar_route_register("/api/a2a/marketplace/execute", marketplace_bazaar)

        # Anyone may open A2A tasks and every answer of an agent surface is recorded: each row is
        # bounded (agents/a2a/store.py), and the feeds' pruning pass bounds how many are kept.
        retention_register(model=A2aTask, time_field="created_at", days_setting="A2A_TASK_RETENTION_DAYS")
        retention_register(
            model=AgentInteraction, time_field="at", days_setting="AGENT_INTERACTION_RETENTION_DAYS"
        )
