"""The MCP tools: one function (`mcp_tools`) that both `tools/list` on /mcp and the free catalog
document /api/a2a/mcp/catalog read, so the two can never disagree on names, prices or schemas.

- A free tool is one of the free catalog routes (a FreeGet row of catalog/api/urls.py): its
  query model is the tool's inputSchema, its response model the outputSchema, and a call runs
  the row's selector exactly as the REST route does.
- A paid tool is a product on sale (catalog.selectors.skus.live_skus): name = SKU, inputSchema
  from the product's params model, outputSchema from its output model, price from the SKU row."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel

from a2a_service.core.freeviews import FreeGet
from catalog.api.urls import FREE_GETS
from catalog.products.registry import product_get
from catalog.selectors.payment import absolute
from catalog.selectors.skus import live_skus

EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

# Free tool name -> the free catalog route it answers like. The names of the first three are the
# ones the MCP catalog has always listed; the others are the marketplace's free capabilities
# (agents/discovery/views.py FREE_CAPABILITIES).
FREE_TOOL_ROUTES: dict[str, str] = {
    "strategies": "api/mcp/strategies",
    "regime": "api/mcp/regime",
    "news_catalog": "api/a2a/news/catalog",
    "telemetry_status": "api/a2a/telemetry/status",
    "exchange_market_discovery": "api/a2a/exchange/markets",
    "tokenized_watchlist": "api/a2a/tokenized/watchlist",
    "market_agent_news": "api/a2a/market-agents/news",
}


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    paid: bool
    price_usdc: float | None
    # The REST twin of the tool: the same content over plain HTTP.
    http: dict[str, str]


@cache
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, built once per process (building every product's takes a few
    hundred milliseconds; the models do not change). Callers only serialize it."""
    return model.model_json_schema()


@cache
def free_tool_rows() -> dict[str, FreeGet]:
    rows = {row.route: row for row in FREE_GETS}
    return {name: rows[route] for name, route in FREE_TOOL_ROUTES.items()}


def free_tool(name: str) -> FreeGet | None:
    return free_tool_rows().get(name)


def _free_tools(base: str) -> list[McpTool]:
    return [
        McpTool(
            name=name,
            description=f"{row.summary} (free).",
            input_schema=json_schema(row.query) if row.query else EMPTY_OBJECT,
            output_schema=json_schema(row.response),
            paid=False,
            price_usdc=None,
            http={"method": "GET", "url": absolute(base, "/" + row.route)},
        )
        for name, row in free_tool_rows().items()
    ]


def paid_tool_description(headline: str, price_usdc: float) -> str:
    return (
        f"{headline}. {price_usdc:g} USDC per call. Pay with the X-API-Key header on the HTTP request "
        "(prepaid credits, or the calls of a managed MCP pack), or with x402: call without payment to "
        "get the payment requirements, then call again with the signed PaymentPayload in "
        "_meta['x402/payment']."
    )


def mcp_tools(base: str) -> list[McpTool]:
    """Every MCP tool: the free ones, then one per product on sale (display order)."""
    tools = _free_tools(base)
    for sku in live_skus():
        product = product_get(sku.sku)
        if product is None:  # on_sale() lists built products only; a spec removed since
            continue
        price = sku.price_usdc
        tools.append(
            McpTool(
                name=sku.sku,
                description=paid_tool_description(sku.headline, price),
                input_schema=json_schema(product.params) if product.params else EMPTY_OBJECT,
                output_schema=json_schema(product.output) if product.output else None,
                paid=True,
                price_usdc=price,
                http={"method": "GET", "url": absolute(base, sku.path)},
            )
        )
    return tools
