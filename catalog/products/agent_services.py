"""Services for agents (subcontracting, bounties, managed MCP access). Specs only: built with the account features and protocols (issues 14 and 15); 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import CreditRoute, ProductSpec, TeaserSpec, register

register(
    ProductSpec(
        sku="agent_subcontract_desk",
        path="/agent/subcontract-desk",
        headline="Agent subcontract desk: delegate a research or execution task to the desk",
        price="0.22",
        family="agent",
        tier="A",
        hero=True,
        rank=10,
        teaser="execution-delegation",
        teasers=(
            TeaserSpec(
                name="execution-delegation",
                title="Execution delegation",
                summary="Delegate execution to the desk and report fills back.",
                highlights=("activate", "report fill"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="bounties",
        path="/bounties",
        headline="Open bounties for agents",
        price="0.05",
        family="agent",
        rank=42,
        credit_routes=(
            CreditRoute(route="api/a2a/bounties", operation_id="bounties", summary="Open bounties"),
        ),
    )
)

register(
    ProductSpec(
        sku="mcp_managed_pack",
        path="/mcp/managed-pack",
        headline="MCP managed pack: hosted MCP tools for this catalog",
        price="0.5",
        family="mcp",
        rank=39,
    )
)
