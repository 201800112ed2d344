"""What external marketplaces read: the capabilities (free or sold by a SKU), health and listing."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from agents.discovery import schemas as s
from agents.discovery.identity import POSITIONING, SERVICE_NAME
from billing.x402.bazaar import EMPTY_OBJECT, bazaar_body_declaration, model_schema, schema_example
from catalog.models import (
    Integration,
    Sku,
)
from catalog.products.registry import ProductSpec
from catalog.selectors.payment import absolute
from catalog.selectors.skus import listed_skus, sku_available, sku_out

MARKETPLACE_CAPABILITIES: dict[str, str | None] = {
    # capability -> SKU it sells (None: free)
    "telemetry_status": None,
    "sentiment": "sentiment",
    "signals": "signals",
    "news_catalog": None,
    "intel_latest": "intel_latest",
    "exchange_market_discovery": None,
    "tokenized_watchlist": None,
    "tokenized_premium_digest": "tokenized_premium",
    "market_agent_news": None,
}


def marketplace_bazaar(spec: ProductSpec) -> dict[str, Any] | None:
    """The x402 `bazaar` declaration of a SKU sold by POST /api/a2a/marketplace/execute: a JSON
    body naming the capability and the product's parameters (billing/x402/bazaar.py)."""
    capabilities = sorted(name for name, sku in MARKETPLACE_CAPABILITIES.items() if sku == spec.sku)
    if not capabilities:
        return None
    params = model_schema(spec.params) if spec.params else dict(EMPTY_OBJECT)
    body = {
        "type": "object",
        "properties": {"capability": {"type": "string", "enum": capabilities}, "params": params},
        "required": ["capability"],
    }
    example: dict[str, Any] = {"capability": capabilities[0]}
    params_example = schema_example(params)
    if params_example:
        example["params"] = params_example
    return bazaar_body_declaration(spec, body_schema=body, example=example)


def marketplace_capabilities() -> list[s.MarketplaceCapabilityOut]:
    skus = {x.sku: x for x in Sku.objects.filter(sku__in=[v for v in MARKETPLACE_CAPABILITIES.values() if v])}
    out = []
    for name, sku_name in MARKETPLACE_CAPABILITIES.items():
        sku = skus.get(sku_name) if sku_name else None
        available = True if sku_name is None else bool(sku and sku_available(sku))
        out.append(
            s.MarketplaceCapabilityOut(
                name=name, paid=sku_name is not None, sku=sku_name, available=available
            )
        )
    return out


def marketplace_health(base: str) -> s.MarketplaceHealthOut:
    caps = marketplace_capabilities()
    return s.MarketplaceHealthOut(
        status="ok" if all(c.available for c in caps if not c.paid) else "degraded",
        capabilities=caps,
        registration_targets=[
            {
                "slug": i.slug,
                "name": i.name,
                "url": absolute(base, i.docs_path) if i.docs_path.startswith("/") else i.docs_path,
            }
            for i in Integration.objects.filter(enabled=True, registration_target=True)
        ],
        execute=absolute(base, "/api/a2a/marketplace/execute"),
    )


def marketplace_listing(base: str) -> s.MarketplaceListingOut:
    return s.MarketplaceListingOut(
        name=SERVICE_NAME,
        description=POSITIONING,
        base_url=base,
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        pay_to=settings.TREASURY_ADDRESS,
        capabilities=marketplace_capabilities(),
        skus=[sku_out(x) for x in listed_skus()],
        openapi=absolute(base, "/api/a2a/openapi.json"),
    )
