"""The agent-facing discovery documents: the A2A agent card, /.well-known/x402, the manifest,
the MCP catalog, the storefront, the index routes, the machine-to-machine, revenue and
live-desk discovery, the hero pack, the integrations and the agent-framework packs. They gather
every app's data, so they live in the top layer (the ERC-8004 files: agents/erc8004/)."""

from __future__ import annotations

import copy
import functools
from typing import Any

from django.conf import settings

from a2a_service.core.formats import iso
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.payment_routes import routes_state
from agents.discovery import schemas as s
from agents.discovery.identity import POSITIONING, SERVICE_NAME, SERVICE_VERSION
from agents.mcp import MCP_PATH
from agents.mcp.tools import mcp_tools
from billing import schemas as bs
from billing.models import BillingSettings
from billing.selectors.credits import credit_bundle, credit_onboarding
from billing.selectors.sales import sales_by_sku, sales_window
from billing.x402.challenge import challenge_build, x402_extensions, x402_schemes
from catalog.models import (
    AgentFrameworkPack,
    CatalogAgent,
    EditorialPiece,
    Integration,
    PartnerAgent,
    Sku,
)
from catalog.products.registry import product_get
from catalog.selectors.payment import absolute, facilitator_url
from catalog.selectors.skus import listed_skus, live_skus, on_sale, sku_available, sku_out
from webhooks.events import attestation_signer


def storefront(base: str) -> s.StorefrontOut:
    skus = live_skus()
    sales = sales_by_sku()
    hero = [x for x in skus if x.hero]
    storefront_skus = []
    for x in hero:
        st = sales.get(x.id)
        storefront_skus.append(
            s.StorefrontSkuOut(
                **sku_out(x).model_dump(),
                sales_30d=st.sales_30d if st else 0,
                sales_30d_by_rail=st.sales_30d_by_rail if st else {},
                revenue_30d_usdc=usdc_from_atomic(st.revenue_30d_atomic if st else 0),
                sales_all_time=st.sales_all_time if st else 0,
                revenue_all_time_usdc=usdc_from_atomic(st.revenue_all_time_atomic if st else 0),
                trust_score=st.trust_score if st else 0.0,
            )
        )
    primary = next((x.sku for x in hero if x.tier == "L"), hero[0].sku if hero else "")
    return s.StorefrontOut(
        positioning=POSITIONING,
        storefront_skus=storefront_skus,
        growth_skus=[sku_out(x) for x in skus if x.tier and not x.hero],
        prediction_entry_skus=[sku_out(x) for x in skus if x.family == "prediction"],
        primary_entry=primary,
        live_desks=absolute(base, "/api/a2a/discovery/live-desks"),
        case_study=absolute(base, "/api/a2a/discovery/case-study"),
        client_bundle=absolute(base, "/api/a2a/client-bundle"),
        credit_prepay=credit_bundle(base),
        credit_onboarding=credit_onboarding(base),
        payment_address=settings.TREASURY_ADDRESS,
        chain=settings.CHAIN_NAME,
        well_known_x402=absolute(base, "/.well-known/x402"),
        validate_hint=(
            f"Check a payment before paying: POST {facilitator_url(base)}/verify with "
            "{paymentPayload, paymentRequirements}; the facilitator's kinds are at "
            f"{absolute(base, '/api/a2a/facilitator/health')}"
        ),
    )


def manifest(base: str) -> s.ManifestOut:
    return s.ManifestOut(
        name=SERVICE_NAME,
        description=POSITIONING,
        version=SERVICE_VERSION,
        base_url=base,
        openapi=absolute(base, "/api/a2a/openapi.json"),
        agent_card=absolute(base, "/.well-known/agent.json"),
        well_known_x402=absolute(base, "/.well-known/x402"),
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        treasury_address=settings.TREASURY_ADDRESS,
        payment_routes=[bs.PaymentRouteState(**r) for r in routes_state()],
        discovery={
            "storefront": absolute(base, "/api/a2a/discovery/storefront"),
            "m2m": absolute(base, "/api/a2a/discovery/m2m"),
            "mcp_catalog": absolute(base, "/api/a2a/mcp/catalog"),
            "agents": absolute(base, "/api/a2a/agents/catalog"),
            "topup_info": absolute(base, "/api/a2a/account/topup-info"),
            "webhook_events": absolute(base, "/api/a2a/webhooks/events"),
        },
        attestation_signer=attestation_signer(),
        skus=[sku_out(x) for x in listed_skus()],
    )


def output_schema(sku: str) -> dict[str, Any] | None:
    """The JSON schema of a product's 200 answer, from its spec's output model (a copy: the
    caller may change it)."""
    schema = _output_schema(sku)
    return copy.deepcopy(schema) if schema is not None else None


@functools.lru_cache(maxsize=256)
def _output_schema(sku: str) -> dict[str, Any] | None:
    # The specs are fixed for the process's life, and pydantic takes about 13 ms a model to
    # generate a schema: /.well-known/x402 lists every product's.
    product = product_get(sku)
    return product.output.model_json_schema() if product and product.output else None


def _x402_offer(x: Sku, base: str) -> dict[str, Any]:
    """What this resource's 402 offers: its version 2 requirements and its extensions' names
    (the declarations themselves are in the 402: a sign-in challenge is not for a document)."""
    challenge = challenge_build(
        sku=x.sku, description=x.headline, price_atomic=x.price_atomic, resource_url=absolute(base, x.path)
    )
    return {
        "accepts": [r.model_dump(by_alias=True, exclude_none=True, mode="json") for r in challenge.accepts],
        "extensions": sorted(challenge.extensions),
    }


def well_known_x402(base: str) -> s.WellKnownX402Out:
    resources = [
        s.WellKnownResourceOut(
            sku=x.sku,
            resource=absolute(base, x.path),
            method="GET",
            description=x.headline,
            mimeType="application/json",
            price_usdc=x.price_usdc,
            amount=str(x.price_atomic),
            scheme="exact",
            network=settings.X402_NETWORK,
            asset=settings.USDC_ADDRESS,
            payTo=settings.TREASURY_ADDRESS,
            status="available" if sku_available(x) else "unavailable",
            outputSchema=output_schema(x.sku),
            **_x402_offer(x, base),
        )
        for x in live_skus()
    ]
    return s.WellKnownX402Out(
        x402Version=2,
        facilitator=facilitator_url(base),
        discovery=absolute(base, "/api/a2a/facilitator/discovery/resources"),
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        payTo=settings.TREASURY_ADDRESS,
        payment_headers={
            "v2": "PAYMENT-SIGNATURE",
            "v1": "X-PAYMENT",
            "challenge": "PAYMENT-REQUIRED",
            # The 402's sign-in-with-x message, signed: instead of paying (billing/front/signin.py).
            "sign_in": "SIGN-IN-WITH-X",
        },
        schemes=x402_schemes(),
        extensions=x402_extensions(),
        resources=resources,
    )


CREDIT_ENDPOINTS = [
    ("GET", "/api/a2a/signals", "signals"),
    ("GET", "/api/a2a/sentiment", "sentiment"),
    ("GET", "/api/a2a/intel/latest", "signals"),
    ("GET", "/api/a2a/telemetry/detail", "telemetry_detail"),
    ("POST", "/api/a2a/news/{news_id}/unlock", "news_unlock"),
    ("POST", "/api/a2a/txgen/transaction", None),
]


def m2m_discovery(base: str) -> s.M2MDiscoveryOut:
    billing = BillingSettings.load()
    prices = {x.sku: x.price_usdc for x in Sku.objects.all()}
    credit_endpoints = []
    for method, path, sku in CREDIT_ENDPOINTS:
        price = prices.get(sku, 0.0) if sku else 0.30
        credit_endpoints.append(
            {
                "method": method,
                "url": absolute(base, path),
                "header": "X-API-Key",
                "price_usdc": price if billing.credit_billing_enabled else 0.0,
                "note": "debited from credits"
                if billing.credit_billing_enabled
                else "free with a valid key (credit billing is off)",
            }
        )
    packs = Sku.objects.filter(family="session")
    return s.M2MDiscoveryOut(
        service=SERVICE_NAME,
        version=SERVICE_VERSION,
        payment_routes=[bs.PaymentRouteState(**r) for r in routes_state()],
        free_endpoints=[absolute(base, p) for p in FREE_DISCOVERY_PATHS],
        credit_endpoints=credit_endpoints,
        session={
            "packs": [
                {"sku": p.sku, "path": absolute(base, p.path), "price_usdc": p.price_usdc} for p in packs
            ],
            "status": absolute(base, "/api/a2a/session/status?token={token}"),
            "call": absolute(base, "/api/a2a/session/call/{sku}"),
            "header": "X-Session-Token",
        },
        x402={
            "network": settings.X402_NETWORK,
            "asset": settings.USDC_ADDRESS,
            "pay_to": settings.TREASURY_ADDRESS,
            "facilitator": facilitator_url(base),
            "well_known": absolute(base, "/.well-known/x402"),
        },
        paid_sku_count=on_sale().count(),
    )


FREE_DISCOVERY_PATHS = [
    "/api/a2a/discovery/storefront",
    "/api/a2a/news/catalog",
    "/api/a2a/equity/catalog",
    "/api/a2a/prediction/catalog",
    "/api/a2a/predictionvenue/catalog",
    "/api/a2a/market-agents/news",
    "/api/a2a/exchange/markets",
    "/api/a2a/tokenized/watchlist",
    "/api/a2a/telemetry/status",
    "/api/a2a/morning-brief",
    "/api/a2a/agents/catalog",
    "/api/a2a/mcp/catalog",
    "/api/mcp/strategies",
    "/api/mcp/regime",
]


def live_desk_out(x: Sku) -> s.LiveDeskOut:
    return s.LiveDeskOut(
        sku=x.sku,
        path=x.path,
        headline=x.headline,
        price_usdc=x.price_usdc,
        tier=x.tier or None,
        product_type=x.product_type,
        session_callable=x.session_callable,
        available=sku_available(x),
        free_teaser=x.free_teaser or None,
    )


def live_desks(base: str) -> s.LiveDesksOut:
    desks = [live_desk_out(x) for x in on_sale().filter(family__in=["trading", "risk"])]
    return s.LiveDesksOut(
        desks=desks, count=len(desks), session_pack=absolute(base, "/api/a2a/x402/session/desk-pack")
    )


def revenue_discovery(base: str) -> s.RevenueDiscoveryOut:
    skus = {x.sku: x for x in Sku.objects.all()}
    signal = skus.get("signal_desk_pack")
    return s.RevenueDiscoveryOut(
        hero_skus=[sku_out(x) for x in on_sale().filter(hero=True)],
        signal_desk={
            "sku": signal.sku if signal else None,
            "path": absolute(base, signal.path) if signal else None,
            "price_usdc": signal.price_usdc if signal else None,
            "events": [
                "copy_signal",
                "regime_attestation",
                "prediction_alert",
                "pair_arb_alert",
                "risk_exit_alert",
            ],
            "outcome_pricing": absolute(base, "/api/a2a/x402/webhooks/outcome-pricing"),
            "register": absolute(base, "/api/a2a/account/webhooks/register"),
        },
        session_billing=[
            {"sku": x.sku, "path": absolute(base, x.path), "price_usdc": x.price_usdc, "headline": x.headline}
            for x in on_sale().filter(family="session")
        ],
        partner_feed={
            "teaser": absolute(base, "/api/a2a/prediction/partner-feed/teaser"),
            "partners": PartnerAgent.objects.filter(enabled=True).count(),
            "resale_sku": "federation_signal_resale",
        },
    )


def integrations(base: str) -> s.IntegrationsOut:
    items = [
        s.IntegrationOut(
            slug=i.slug,
            name=i.name,
            category=i.category,
            description=i.description,
            url=absolute(base, i.docs_path) if i.docs_path.startswith("/") else i.docs_path,
            registration_target=i.registration_target,
        )
        for i in Integration.objects.filter(enabled=True)
    ]
    return s.IntegrationsOut(integrations=items, count=len(items))


def packs(base: str) -> s.PacksOut:
    items = [
        s.PackSummaryOut(
            pack_id=p.pack_id,
            name=p.name,
            framework=p.framework,
            description=p.description,
            skill_md=absolute(base, f"/api/a2a/discovery/agent-frameworks/{p.pack_id}"),
        )
        for p in AgentFrameworkPack.objects.filter(enabled=True)
    ]
    return s.PacksOut(packs=items, count=len(items))


def pack_skill_md(base: str, pack_id: str) -> str | None:
    """The pack's SKILL.md with this service's base URL; None for an unknown or disabled pack."""
    pack = AgentFrameworkPack.objects.filter(pack_id=pack_id, enabled=True).first()
    return pack.skill_md.replace("{base_url}", base) if pack is not None else None


def editorial_out(p: EditorialPiece) -> s.EditorialOut:
    return s.EditorialOut(
        id=p.id, kind=p.kind, title=p.title, summary=p.summary, published_at=iso(p.published_at)
    )


def case_study(base: str) -> s.CaseStudyOut:
    piece = EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.CASE_STUDY).first()
    return s.CaseStudyOut(
        metrics=bs.SalesFigures(**sales_window(days=30)),
        partner_playbook=editorial_out(piece) if piece else None,
        playbook_body=piece.body if piece else None,
    )


def roadmap(base: str) -> s.RoadmapOut:
    items = [
        editorial_out(p) for p in EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.ROADMAP)
    ]
    return s.RoadmapOut(items=items, count=len(items))


def hero_pack(base: str) -> s.HeroPackOut:
    hero = list(on_sale().filter(hero=True))
    promo = on_sale().filter(sku="morning_brief_promo").first()
    piece = EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.PROMOTION).first()
    return s.HeroPackOut(
        hero_skus=[sku_out(x) for x in hero],
        promo=sku_out(promo) if promo else None,
        promotion=editorial_out(piece) if piece else None,
        total_price_usdc=usdc_from_atomic(sum(x.price_atomic for x in hero if x.family != "session")),
        session_alternative=absolute(base, "/api/a2a/x402/session/desk-pack"),
    )


def mcp_catalog(base: str) -> s.McpCatalogOut:
    """The MCP server's tools (agents/mcp/tools.py, the function tools/list on /mcp answers with),
    each with its REST twin, and the server's endpoint."""
    tools = [
        s.McpToolOut(
            name=t.name,
            description=t.description,
            inputSchema=t.input_schema,
            outputSchema=t.output_schema,
            paid=t.paid,
            price_usdc=t.price_usdc,
            http=t.http,
        )
        for t in mcp_tools(base)
    ]
    return s.McpCatalogOut(tools=tools, count=len(tools), endpoint=absolute(base, MCP_PATH))


def index_routes(base: str) -> s.IndexRoutesOut:
    agents = []
    for agent in CatalogAgent.objects.filter(enabled=True).prefetch_related("skus"):
        skus = [x for x in agent.skus.all() if sku_available(x)]
        agents.append(
            s.IndexRouteAgentOut(
                agent=agent.slug,
                routes=[
                    {"sku": x.sku, "path": absolute(base, x.path), "price_usdc": x.price_usdc} for x in skus
                ],
                hero_skus=[x.sku for x in skus if x.hero],
            )
        )
    return s.IndexRoutesOut(agents=agents, x402_routes=on_sale().count())
