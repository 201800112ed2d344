"""Reads that build the free payloads. Every figure comes from the database (or a
live probe); nothing here is a literal standing in for a measurement."""

from __future__ import annotations

import logging
import statistics
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q, QuerySet, Sum
from django.utils import timezone

from a2a_service.core.formats import iso, naive_utc
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.ratelog import log_throttled
from billing.models import BillingSettings, WhaleTier
from billing.routes import route_available, routes_state
from billing.selectors import payment_counts, revenue_atomic_since, sales_by_sku, sales_window
from catalog.api import schemas as s
from catalog.counters import counters_pending
from catalog.models import (
    AgentFrameworkPack,
    CatalogAgent,
    DailyCounter,
    DeskSignal,
    EditorialPiece,
    ExchangeMarket,
    Integration,
    NewsItem,
    PartnerAgent,
    PredictionMarket,
    RegimeSnapshot,
    RpcEndpoint,
    RpcProbe,
    Sku,
    Teaser,
    TelemetryNode,
    TokenizedAsset,
    TradingModule,
    WorkerHeartbeat,
)

SERVICE_NAME = "Agent-to-Agent Market Intelligence"
SERVICE_VERSION = "16.5.0"
POSITIONING = (
    "Market intelligence for machines: news, signals, sentiment, prediction catalogs, trading and risk "
    "desks and digests, paid per call in USDC on Base (x402), from prepaid credits or by session."
)
MARKETPLACE_CAPABILITIES: dict[str, str | None] = {
    # capability -> SKU it sells (None: free)
    "telemetry_status": None,
    "sentiment": "sentiment",
    "signals": "signals",
    "news_catalog": None,
    "intel_latest": "signals",
    "exchange_market_discovery": None,
    "tokenized_watchlist": None,
    "tokenized_premium_digest": "tokenized_session_desk",
    "market_agent_news": None,
}
KILL_DRAWDOWN_PCT = 15.0
# Statuses a listing shows besides the row's own live_x402/disabled: the SKU is switched on
# but its product is not built yet, or the x402 route that would take the payment is down.
SKU_COMING_SOON = "coming_soon"
SKU_UNAVAILABLE = "unavailable"
PREDICTION_VENUE = "predictionvenue"


def _f(value: Decimal | float | None) -> float | None:
    return float(value) if value is not None else None


def _products_built() -> set[str]:
    from catalog.products.registry import products_built

    return products_built()


# --- SKUs -----------------------------------------------------------------------------
def sku_status(sku: Sku) -> str:
    """What a listing may honestly say about a SKU. Only a SKU that answers 402 is live_x402:
    staff switched it on, its product is built and the x402 route is up."""
    if not sku.is_live:
        return Sku.Status.DISABLED.value
    if sku.sku not in _products_built():
        return SKU_COMING_SOON
    if not route_available("x402"):
        return SKU_UNAVAILABLE
    return Sku.Status.LIVE.value


def sku_out(sku: Sku) -> s.SkuOut:
    return s.SkuOut(
        sku=sku.sku,
        path=sku.path,
        env_price=sku.env_price,
        default=sku.price_base_usdc,
        status=sku_status(sku),
        marketplace_paid=sku.marketplace_paid,
        tier=sku.tier or None,
        hero=sku.hero,
        free_teaser=sku.free_teaser or None,
        headline=sku.headline,
        price_usdc=sku.price_usdc,
        price_usdc_base=sku.price_base_usdc,
        intel_only=sku.intel_only,
        product_type=sku.product_type,
        session_callable=sku.session_callable,
    )


def on_sale() -> QuerySet[Sku]:
    """SKUs that answer 402 now (the only ones a list of things for sale may name, and the
    only ones a live count counts): switched on by staff and with a built product."""
    if not route_available("x402"):
        return Sku.objects.none()
    return Sku.objects.live().filter(sku__in=_products_built())


def live_skus() -> list[Sku]:
    return list(on_sale())


def listed_skus() -> list[Sku]:
    """SKUs switched on by staff, built or not: the manifest and the marketplace listing name
    them all, each with its honest status (coming_soon until its product is built)."""
    return list(Sku.objects.live())


def sku_available(sku: Sku) -> bool:
    """On sale now: live, its product built, and a route that can take the payment."""
    return sku_status(sku) == Sku.Status.LIVE.value


# --- payment descriptions ---------------------------------------------------------------
def absolute(base: str, path: str) -> str:
    return base + path


def facilitator_url(base: str) -> str:
    """The facilitator agents are pointed at: the configured one, or this service's own."""
    return settings.FACILITATOR_URL or absolute(base, "/api/a2a/facilitator")


def payment_alternatives(base: str) -> dict[str, Any]:
    return {
        "rails": ["x402_usdc_base"],
        "x402": {
            "network": settings.X402_NETWORK,
            "facilitator": facilitator_url(base),
            "hint": "GET the /api/a2a/x402/ path, pay the 402 challenge in USDC, retry with PAYMENT-SIGNATURE "
            "(v2) or X-PAYMENT (v1)",
        },
        "skyfire": {
            "enabled": settings.SKYFIRE_RAIL_ENABLED,
            "hint": "the agent-payment network rail is not enabled on this service",
        },
    }


def credit_bundle(base: str, billing: BillingSettings | None = None) -> s.CreditBundleOut:
    billing = billing or BillingSettings.load()
    total = billing.bundle_atomic + billing.bonus_atomic
    return s.CreditBundleOut(
        bundle_usdc=billing.bundle_usdc,
        bonus_pct=float(billing.bonus_pct),
        bonus_usdc=billing.bonus_usdc,
        total_credits_usdc=usdc_from_atomic(total),
        chain=settings.CHAIN_NAME,
        token="USDC",
        register_endpoint=absolute(base, "/api/a2a/account/register"),
        topup_endpoint=absolute(base, "/api/a2a/account/topup-info"),
        instructions=(
            f"Register your wallet, then send USDC on {settings.CHAIN_NAME} ({settings.X402_NETWORK}) from it to "
            f"{settings.TREASURY_ADDRESS}. At least {billing.min_deposit_usdc} USDC is credited; a deposit of "
            f"{billing.bundle_usdc} USDC or more adds {float(billing.bonus_pct)}% bonus credits."
        ),
    )


def credit_onboarding(base: str) -> s.CreditOnboardingOut:
    b = credit_bundle(base)
    return s.CreditOnboardingOut(
        register_endpoint=b.register_endpoint, topup_endpoint=b.topup_endpoint, instructions=b.instructions
    )


def topup_steps(base: str, billing: BillingSettings) -> list[s.TopupStepOut]:
    return [
        s.TopupStepOut(
            step=1,
            title="Register your wallet",
            method="POST",
            url=absolute(base, "/api/a2a/account/register"),
            body_example={"wallet_address": "0xYourWalletAddress"},
            response_fields=["api_key", "wallet_address", "credit_balance_usdc", "treasury_address"],
            note=(
                "Every registration proves you own the wallet: this POST answers 401 ownership_proof_required "
                "with a challenge (message, nonce); sign message with the wallet (EIP-191 personal_sign; "
                "contract wallets: EIP-1271) and POST again with wallet_address, nonce and signature. "
                "The api_key is shown once; store it."
            ),
        ),
        s.TopupStepOut(
            step=2,
            title="Send USDC to the treasury",
            from_="your registered wallet",
            to=settings.TREASURY_ADDRESS,
            min_usdc=billing.min_deposit_usdc,
            note=(
                f"USDC contract {settings.USDC_ADDRESS} on {settings.CHAIN_NAME} ({settings.X402_NETWORK}). "
                f"Deposits of {billing.bundle_usdc} USDC or more earn {float(billing.bonus_pct)}% bonus."
            ),
        ),
        s.TopupStepOut(
            step=3,
            title="Watch the deposit arrive",
            method="GET",
            url=absolute(base, "/api/a2a/account"),
            header="X-API-Key",
            note="The deposit watcher credits confirmed deposits from your registered wallet.",
        ),
        s.TopupStepOut(
            step=4,
            title="Call credit endpoints",
            method="GET",
            header="X-API-Key",
            examples=[absolute(base, "/api/a2a/sentiment"), absolute(base, "/api/a2a/intel/latest")],
            note="Each call debits its price; answers carry X-Credit-Charged and X-Credit-Balance.",
        ),
    ]


def topup_examples(base: str) -> list[s.TopupExampleOut]:
    prices = {
        x.sku: x.price_usdc
        for x in Sku.objects.filter(sku__in=["news_unlock", "sentiment", "telemetry_detail"])
    }
    return [
        s.TopupExampleOut(
            name="news unlock",
            method="POST",
            url=absolute(base, "/api/a2a/news/{news_id}/unlock"),
            price_usdc_hint=prices.get("news_unlock", 0.0),
            header_required="X-API-Key",
        ),
        s.TopupExampleOut(
            name="sentiment",
            method="GET",
            url=absolute(base, "/api/a2a/sentiment"),
            price_usdc_hint=prices.get("sentiment", 0.0),
            header_required="X-API-Key",
        ),
        s.TopupExampleOut(
            name="telemetry detail",
            method="GET",
            url=absolute(base, "/api/a2a/telemetry/detail"),
            price_usdc_hint=prices.get("telemetry_detail", 0.0),
            header_required="X-API-Key",
        ),
    ]


def topup_info(base: str) -> s.TopupInfoOut:
    billing = BillingSettings.load()
    return s.TopupInfoOut(
        chain=settings.CHAIN_NAME,
        token="USDC",
        contract=settings.USDC_ADDRESS,
        treasury_address=settings.TREASURY_ADDRESS,
        min_deposit_usdc=billing.min_deposit_usdc,
        credit_bundle=credit_bundle(base, billing),
        credit_prepay_guide_url=absolute(base, "/api/a2a/account/credit-prepay-guide"),
        payment_alternatives=s.PaymentAlternatives(**payment_alternatives(base)),
        instructions=credit_bundle(base, billing).instructions,
        steps=topup_steps(base, billing),
        examples=topup_examples(base),
    )


def bundle_info(base: str) -> s.BundleInfoOut:
    billing = BillingSettings.load()
    return s.BundleInfoOut(
        credit_bundle=credit_bundle(base, billing),
        min_deposit_usdc=billing.min_deposit_usdc,
        treasury_address=settings.TREASURY_ADDRESS,
        contract=settings.USDC_ADDRESS,
        credit_billing_enabled=billing.credit_billing_enabled,
    )


def credit_prepay_guide(base: str) -> s.CreditPrepayGuideOut:
    billing = BillingSettings.load()
    return s.CreditPrepayGuideOut(
        title="Prepaid credits for agents without an x402 wallet",
        for_whom="Agents that cannot sign an x402 payment per call: deposit once, then call with X-API-Key.",
        credit_billing_enabled=billing.credit_billing_enabled,
        treasury_address=settings.TREASURY_ADDRESS,
        contract=settings.USDC_ADDRESS,
        chain=settings.CHAIN_NAME,
        min_deposit_usdc=billing.min_deposit_usdc,
        credit_bundle=credit_bundle(base, billing),
        steps=topup_steps(base, billing),
        topup_info_url=absolute(base, "/api/a2a/account/topup-info"),
        x402_alternative=absolute(base, "/.well-known/x402"),
    )


# --- storefront and discovery -------------------------------------------------------------
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
        payment_routes=[s.PaymentRouteState(**r) for r in routes_state()],
        discovery={
            "storefront": absolute(base, "/api/a2a/discovery/storefront"),
            "m2m": absolute(base, "/api/a2a/discovery/m2m"),
            "mcp_catalog": absolute(base, "/api/a2a/mcp/catalog"),
            "agents": absolute(base, "/api/a2a/agents/catalog"),
            "topup_info": absolute(base, "/api/a2a/account/topup-info"),
            "webhook_events": absolute(base, "/api/a2a/webhooks/events"),
        },
        attestation_signer=_attestation_signer(),
        skus=[sku_out(x) for x in listed_skus()],
    )


def _attestation_signer() -> str:
    from webhooks.events import attestation_signer

    return attestation_signer()


def agent_skill(raw: dict[str, Any]) -> s.AgentSkillOut:
    return s.AgentSkillOut(
        id=str(raw.get("id", "")),
        name=str(raw.get("name", "")),
        description=str(raw.get("description", "")),
        tags=[str(t) for t in raw.get("tags", [])],
        examples=[str(e) for e in raw.get("examples", [])],
    )


def agent_card(base: str) -> s.AgentCardOut:
    skills: list[s.AgentSkillOut] = []
    for agent in CatalogAgent.objects.filter(enabled=True):
        skills += [agent_skill(raw) for raw in agent.skills]
    return s.AgentCardOut(
        name=SERVICE_NAME,
        description=POSITIONING,
        supportedInterfaces=[
            s.AgentInterfaceOut(
                url=absolute(base, "/api/a2a/agenthub"), protocolBinding="HTTP+JSON", protocolVersion="1.0"
            )
        ],
        provider=s.AgentProviderOut(organization=SERVICE_NAME, url=base),
        version=SERVICE_VERSION,
        documentationUrl=absolute(base, "/api/a2a/openapi.json"),
        capabilities=s.AgentCapabilitiesOut(streaming=False, pushNotifications=False),
        defaultInputModes=["application/json", "text/plain"],
        defaultOutputModes=["application/json"],
        skills=skills,
    )


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
        )
        for x in live_skus()
    ]
    return s.WellKnownX402Out(
        x402Version=2,
        facilitator=facilitator_url(base),
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        payTo=settings.TREASURY_ADDRESS,
        payment_headers={"v2": "PAYMENT-SIGNATURE", "v1": "X-PAYMENT", "challenge": "PAYMENT-REQUIRED"},
        resources=resources,
    )


def catalog_agent_out(base: str, agent: CatalogAgent) -> s.CatalogAgentOut:
    return s.CatalogAgentOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=[agent_skill(r) for r in agent.skills],
        skus=[x.sku for x in agent.skus.all()],
        enabled=agent.enabled,
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
        status=absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
        manifest=absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
    )


def partner_out(p: PartnerAgent) -> s.PartnerAgentOut:
    return s.PartnerAgentOut(
        slug=p.slug,
        name=p.name,
        description=p.description,
        url=p.url,
        agent_card_url=p.agent_card_url or None,
        skills=list(p.skills),
    )


def federated_agents(base: str) -> s.FederatedAgentsOut:
    local = [
        catalog_agent_out(base, a) for a in CatalogAgent.objects.filter(enabled=True).prefetch_related("skus")
    ]
    partners = [partner_out(p) for p in PartnerAgent.objects.filter(enabled=True)]
    return s.FederatedAgentsOut(local_agents=local, partner_agents=partners, count=len(local) + len(partners))


def partner_catalog(base: str) -> s.PartnerCatalogOut:
    partners = [partner_out(p) for p in PartnerAgent.objects.filter(enabled=True)]
    # The federation SKU is named with its honest status (coming_soon until it is built).
    fed = Sku.objects.live().filter(sku="federation_signal_resale").first()
    return s.PartnerCatalogOut(
        partners=partners,
        count=len(partners),
        federation_sku=sku_out(fed) if fed else None,
        how_to_join="Publish an A2A agent card and ask the operators to list it; partner signals are resold "
        "through the federation SKU with attribution.",
    )


def teaser_availability(sku: Sku | None) -> tuple[bool, str]:
    """Whether a teaser's paid product would deliver now, and why not: on sale, then the
    product's own cheap content check (a query, never a run of the product)."""
    from catalog.products.registry import product_has_content

    if sku is None:
        return False, "this teaser has no paid product"
    status = sku_status(sku)
    if status == SKU_COMING_SOON:
        return False, f"{sku.sku} is not built yet (coming soon)"
    if status == Sku.Status.DISABLED:
        return False, f"{sku.sku} is switched off"
    if status == SKU_UNAVAILABLE:
        return False, "the x402 payment route is not available"
    return product_has_content(sku.sku)


def _teaser_out(teaser: Teaser) -> s.TeaserOut:
    sku = teaser.sku
    available, reason = teaser_availability(sku)
    return s.TeaserOut(
        name=teaser.name,
        title=teaser.title,
        summary=teaser.summary,
        highlights=[str(h) for h in teaser.highlights],
        sku=sku.sku if sku else None,
        paid_path=sku.path if sku else None,
        price_usdc=sku.price_usdc if sku else None,
        credit_path=teaser.credit_path or None,
        session_callable=bool(sku and sku.session_callable),
        available=available,
        unavailable_reason=reason or None,
        updated_at=iso(teaser.updated_at) or "",
    )


def teaser(base: str, name: str) -> s.TeaserOut:
    from a2a_service.core.errors import NotFound

    obj = Teaser.objects.select_related("sku").filter(name=name).first()
    if obj is None:
        raise NotFound(f"unknown teaser {name!r}; see /api/a2a/discovery/storefront for the teasers")
    return _teaser_out(obj)


def grants_readiness(base: str) -> s.TeaserOut:
    return teaser(base, "grant-scout")


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
        payment_routes=[s.PaymentRouteState(**r) for r in routes_state()],
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


def pack_skill_md(base: str, pack_id: str) -> str:
    from a2a_service.core.errors import NotFound

    pack = AgentFrameworkPack.objects.filter(pack_id=pack_id, enabled=True).first()
    if pack is None:
        raise NotFound(f"unknown agent-framework pack {pack_id!r}")
    return pack.skill_md.replace("{base_url}", base)


def editorial_out(p: EditorialPiece) -> s.EditorialOut:
    return s.EditorialOut(
        id=p.id, kind=p.kind, title=p.title, summary=p.summary, published_at=iso(p.published_at)
    )


def case_study(base: str) -> s.CaseStudyOut:
    piece = EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.CASE_STUDY).first()
    return s.CaseStudyOut(
        metrics=s.SalesFigures(**sales_window(days=30)),
        partner_playbook=editorial_out(piece) if piece else None,
        playbook_body=piece.body if piece else None,
    )


def roadmap(base: str) -> s.RoadmapOut:
    items = [
        editorial_out(p) for p in EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.ROADMAP)
    ]
    return s.RoadmapOut(items=items, count=len(items))


def erc8004_registry(base: str) -> s.Erc8004RegistryOut:
    return s.Erc8004RegistryOut(
        standard="ERC-8004",
        chain=settings.CHAIN_NAME,
        chain_id=settings.CHAIN_ID,
        identity_registry=settings.ERC8004_IDENTITY_REGISTRY or None,
        agent_id=settings.ERC8004_AGENT_ID or None,
        registered=bool(settings.ERC8004_IDENTITY_REGISTRY and settings.ERC8004_AGENT_ID),
        agent_card=absolute(base, "/api/a2a/registry/erc8004/agent-card"),
        agent_wallet=f"eip155:{settings.CHAIN_ID}:{settings.TREASURY_ADDRESS}",
    )


def erc8004_agent_card(base: str) -> s.Erc8004AgentCardOut:
    registrations = []
    if settings.ERC8004_IDENTITY_REGISTRY and settings.ERC8004_AGENT_ID:
        registrations.append(
            {
                "agentId": settings.ERC8004_AGENT_ID,
                "agentRegistry": f"eip155:{settings.CHAIN_ID}:{settings.ERC8004_IDENTITY_REGISTRY}",
            }
        )
    return s.Erc8004AgentCardOut(
        type="https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        name=SERVICE_NAME,
        description=POSITIONING,
        image="",
        endpoints=[
            s.Erc8004EndpointOut(
                name="A2A", endpoint=absolute(base, "/.well-known/agent.json"), version="1.0"
            ),
            s.Erc8004EndpointOut(name="MCP", endpoint=absolute(base, "/api/a2a/mcp/catalog")),
            s.Erc8004EndpointOut(
                name="OpenAPI", endpoint=absolute(base, "/api/a2a/openapi.json"), version="3.1.0"
            ),
            s.Erc8004EndpointOut(
                name="agentWallet", endpoint=f"eip155:{settings.CHAIN_ID}:{settings.TREASURY_ADDRESS}"
            ),
        ],
        registrations=registrations,
        supportedTrust=["reputation"],
    )


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
    from catalog.products.registry import product_get

    tools = [
        s.McpToolOut(
            name="strategies",
            description="Trading modules, live or scout (free).",
            inputSchema={"type": "object", "properties": {}},
            paid=False,
            price_usdc=None,
            http={"method": "GET", "url": absolute(base, "/api/mcp/strategies")},
        ),
        s.McpToolOut(
            name="regime",
            description="Current market regime (free).",
            inputSchema={"type": "object", "properties": {}},
            paid=False,
            price_usdc=None,
            http={"method": "GET", "url": absolute(base, "/api/mcp/regime")},
        ),
        s.McpToolOut(
            name="news_catalog",
            description="News teasers with unlock prices (free).",
            inputSchema={
                "type": "object",
                "properties": {"limit": {"type": "integer"}, "category": {"type": "string"}},
            },
            paid=False,
            price_usdc=None,
            http={"method": "GET", "url": absolute(base, "/api/a2a/news/catalog")},
        ),
    ]
    for x in live_skus():
        product = product_get(x.sku)
        schema = (
            product.params.model_json_schema()
            if product and product.params
            else {"type": "object", "properties": {}}
        )
        tools.append(
            s.McpToolOut(
                name=x.sku,
                description=f"{x.headline} ({x.price_usdc} USDC)",
                inputSchema=schema,
                paid=True,
                price_usdc=x.price_usdc,
                http={"method": "GET", "url": absolute(base, x.path)},
            )
        )
    return s.McpCatalogOut(tools=tools, count=len(tools))


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


def conversion(base: str) -> s.ConversionOut:
    days = 30
    since = timezone.now().date() - timedelta(days=days - 1)
    hits = dict(
        DailyCounter.objects.filter(day__gte=since)
        .values_list("metric")
        .annotate(n=Sum("count"))
        .values_list("metric", "n")
    )
    for metric, n in counters_pending(since=since).items():
        hits[metric] = hits.get(metric, 0) + n
    counts = payment_counts(days=days)
    challenges = int(hits.get("challenge", 0))
    return s.ConversionOut(
        window_days=days,
        generated_at=iso(timezone.now()) or "",
        hits={"free": int(hits.get("hit", 0)), "teaser": int(hits.get("teaser", 0)), "challenge": challenges},
        payment_attempts=counts["attempts"],
        sales=counts["sales"],
        challenge_to_sale_pct=round(100.0 * counts["sales"] / challenges, 2) if challenges else None,
        skus_live=on_sale().count(),
        skus_activated=counts["skus_activated"],
        revenue_usdc={
            "24h": usdc_from_atomic(revenue_atomic_since(hours=24)),
            "7d": usdc_from_atomic(revenue_atomic_since(hours=24 * 7)),
            "30d": usdc_from_atomic(revenue_atomic_since(hours=24 * 30)),
        },
    )


def monetization_status(base: str) -> s.MonetizationStatusOut:
    return s.MonetizationStatusOut(
        credit_billing_enabled=BillingSettings.load().credit_billing_enabled,
        payment_routes=[s.PaymentRouteState(**r) for r in routes_state()],
        skus_live=on_sale().count(),
        skus_disabled=Sku.objects.exclude(status=Sku.Status.LIVE).count(),
        network=settings.X402_NETWORK,
        treasury_address=settings.TREASURY_ADDRESS,
        facilitator=facilitator_url(base),
    )


def client_bundle(base: str) -> s.ClientBundleOut:
    skus = list(on_sale().filter(client_bundle=True))
    return s.ClientBundleOut(
        skus=[sku_out(x) for x in skus],
        total_price_usdc=usdc_from_atomic(sum(x.price_atomic for x in skus)),
        note="Curated by the operators; each SKU is bought on its own path, or all of them inside a desk session.",
    )


def indexer_teaser(base: str) -> s.TeaserOut:
    return teaser(base, "feeds-indexer")


def partner_feed_teaser(base: str) -> s.TeaserOut:
    return teaser(base, "prediction-partner-feed")


def latest_regime() -> RegimeSnapshot | None:
    return RegimeSnapshot.objects.order_by("-computed_at").first()


def pricing_surge(base: str) -> s.SurgeOut:
    regime = latest_regime()
    return s.SurgeOut(
        regime=regime.regime if regime else None,
        regime_as_of=iso(regime.computed_at) if regime else None,
        skus=[
            s.SurgeSkuOut(
                sku=x.sku,
                price_usdc=x.price_usdc,
                price_usdc_base=x.price_base_usdc,
                surge_multiplier=round(x.price_atomic / x.price_base_atomic, 4)
                if x.price_base_atomic
                else 1.0,
            )
            for x in live_skus()
        ],
    )


def whale_catalog(base: str) -> s.WhaleCatalogOut:
    return s.WhaleCatalogOut(
        tiers=[
            s.WhaleTierOut(
                name=t.name,
                min_balance_usdc=usdc_from_atomic(t.min_balance_atomic),
                bonus_pct=float(t.bonus_pct),
                perks=[str(p) for p in t.perks],
            )
            for t in WhaleTier.objects.all()
        ],
        status_endpoint=absolute(base, "/api/a2a/account/whale/status"),
        token_endpoint=absolute(base, "/api/a2a/account/whale/token"),
    )


def facilitator_health(base: str) -> s.FacilitatorHealthOut:
    from a2a_service.core.http import outbound_request

    url = settings.FACILITATOR_URL + "/supported"
    started = time.perf_counter()
    supported: list[dict[str, Any]] = []
    error = None
    reachable = False
    if not settings.FACILITATOR_URL:
        # In process: ask the self-hosted facilitator itself, not this server over HTTP.
        from billing.facilitator.service import facilitator_get

        facilitator = facilitator_get()
        if facilitator is None:
            error = "no facilitator: FACILITATOR_PRIVATE_KEY and FACILITATOR_URL are both empty"
        else:
            reachable = True
            dumped = facilitator.get_supported().model_dump(by_alias=True, exclude_none=True, mode="json")
            supported = [k for k in dumped.get("kinds", []) if isinstance(k, dict)]
        return s.FacilitatorHealthOut(
            facilitator=facilitator_url(base),
            reachable=reachable,
            latency_ms=round((time.perf_counter() - started) * 1000, 1) if reachable else None,
            supported=supported,
            error=error,
            checked_at=iso(timezone.now()) or "",
        )
    try:
        resp = outbound_request("GET", url, timeout=settings.FACILITATOR_TIMEOUT_SECONDS)
        reachable = resp.status_code < 500
        if resp.ok:
            body = resp.json()
            kinds = body.get("kinds", []) if isinstance(body, dict) else []
            supported = [k for k in kinds if isinstance(k, dict)]
        else:
            error = f"HTTP {resp.status_code}"
    except Exception:  # any transport or decoding failure is reported, not raised
        # The kind of failure only: the exception names internal hosts and ports (logged).
        log_throttled(health_logger, "health-facilitator", "health check: facilitator %s failed", url)
        error = "unreachable" if not reachable else "invalid response"
    latency = round((time.perf_counter() - started) * 1000, 1)
    return s.FacilitatorHealthOut(
        facilitator=facilitator_url(base),
        reachable=reachable,
        latency_ms=latency if reachable else None,
        supported=supported,
        error=error,
        checked_at=iso(timezone.now()) or "",
    )


def platform_stats(base: str) -> s.PlatformStatsOut:
    all_time = sales_window(days=None)
    return s.PlatformStatsOut(
        generated_at=iso(timezone.now()) or "",
        skus_live=on_sale().count(),
        skus_total=Sku.objects.count(),
        news_items=NewsItem.objects.count(),
        news_items_24h=NewsItem.objects.filter(ingested_at__gte=timezone.now() - timedelta(hours=24)).count(),
        catalog_agents=CatalogAgent.objects.filter(enabled=True).count(),
        partner_agents=PartnerAgent.objects.filter(enabled=True).count(),
        prediction_markets=PredictionMarket.objects.count(),
        exchange_markets=ExchangeMarket.objects.count(),
        telemetry_nodes_online=TelemetryNode.objects.filter(online=True).count(),
        sales_all_time=all_time["sales"],
        revenue_all_time_usdc=all_time["revenue_usdc"],
        paying_wallets=all_time["paying_wallets"],
    )


def rpc_index(base: str) -> s.RpcIndexOut:
    since = timezone.now() - timedelta(hours=24)
    entries = []
    for ep in RpcEndpoint.objects.filter(enabled=True):
        probes = list(
            RpcProbe.objects.filter(endpoint=ep, probed_at__gte=since).order_by("-probed_at")[:2000]
        )
        ok = [p for p in probes if p.ok and p.latency_ms is not None]
        last = probes[0] if probes else None
        entries.append(
            s.RpcIndexEntryOut(
                name=ep.name,
                url=ep.url,
                affiliate_url=ep.affiliate_url or None,
                probes_24h=len(probes),
                success_rate_24h=round(100.0 * len(ok) / len(probes), 1) if probes else None,
                median_latency_ms_24h=round(
                    statistics.median(p.latency_ms for p in ok if p.latency_ms is not None), 2
                )
                if ok
                else None,
                last_block=next((p.block_number for p in probes if p.block_number is not None), None),
                last_probed_at=iso(last.probed_at) if last else None,
            )
        )
    ranked = sorted(
        (e for e in entries if e.median_latency_ms_24h is not None),
        key=lambda e: e.median_latency_ms_24h or 0.0,  # never None here (filtered); 0.0 satisfies the type
    )
    return s.RpcIndexOut(endpoints=entries, ranking=[e.name for e in ranked])


def _desk_score(desk: str, pnls: list[float]) -> s.DeskScoreOut:
    if not pnls:
        return s.DeskScoreOut(
            desk=desk,
            trades=0,
            wins=0,
            losses=0,
            win_rate=None,
            expectancy_pct=None,
            max_drawdown_pct=None,
            kill_state="no_data",
        )
    wins = sum(1 for p in pnls if p > 0)
    equity = peak = 0.0
    drawdown = 0.0
    for p in pnls:
        equity += p
        peak = max(peak, equity)
        drawdown = max(drawdown, peak - equity)
    return s.DeskScoreOut(
        desk=desk,
        trades=len(pnls),
        wins=wins,
        losses=len(pnls) - wins,
        win_rate=round(wins / len(pnls), 4),
        expectancy_pct=round(sum(pnls) / len(pnls), 4),
        max_drawdown_pct=round(drawdown, 4),
        kill_state="killed" if drawdown >= KILL_DRAWDOWN_PCT else "active",
    )


def _closed_pnls(days: int) -> dict[str, list[float]]:
    since = timezone.now() - timedelta(days=days)
    by_desk: dict[str, list[float]] = {}
    rows = DeskSignal.objects.filter(closed_at__gte=since, pnl_pct__isnull=False).order_by("closed_at")
    for desk, pnl in rows.values_list("desk", "pnl_pct"):
        if pnl is not None:  # excluded by the query; the check narrows the type
            by_desk.setdefault(desk, []).append(float(pnl))
    return by_desk


def scorecard(base: str) -> s.ScorecardOut:
    by_desk = _closed_pnls(30)
    return s.ScorecardOut(
        window_days=30,
        generated_at=iso(timezone.now()) or "",
        kill_drawdown_pct=KILL_DRAWDOWN_PCT,
        overall=_desk_score("all", [p for v in by_desk.values() for p in v]),
        desks=[_desk_score(d, v) for d, v in sorted(by_desk.items())],
    )


def performance(base: str) -> s.PerformanceOut:
    overall = _desk_score("all", [p for v in _closed_pnls(30).values() for p in v])
    return s.PerformanceOut(
        window_days=30,
        closed_trades=overall.trades,
        win_rate=overall.win_rate,
        expectancy_pct=overall.expectancy_pct,
        scorecard=absolute(base, "/api/a2a/program/scorecard-30d"),
        note="Computed from the desks' closed signals; empty until signals close.",
    )


def x402_status(base: str) -> s.X402StatusOut:
    skus = live_skus()
    return s.X402StatusOut(
        live_skus=len(skus),
        coming_soon=[x.sku for x in Sku.objects.live().exclude(sku__in=_products_built())],
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        pay_to=settings.TREASURY_ADDRESS,
        facilitator=facilitator_url(base),
        skus=[sku_out(x) for x in skus],
        performance_30d=s.SalesFigures(**sales_window(days=30)),
    )


def strategies(base: str) -> s.StrategiesOut:
    mods = list(TradingModule.objects.select_related("sku"))
    return s.StrategiesOut(
        strategies=[
            s.StrategyOut(
                slug=m.slug,
                name=m.name,
                description=m.description,
                mode=m.mode,
                sku=m.sku.sku if m.sku else None,
                paid_path=absolute(base, m.sku.path) if m.sku else None,
            )
            for m in mods
        ],
        live=sum(1 for m in mods if m.mode == TradingModule.Mode.LIVE),
        scout=sum(1 for m in mods if m.mode == TradingModule.Mode.SCOUT),
    )


REGIME_GATES = {"risk_on": "open", "risk_off": "closed", "neutral": "reduced", "high_volatility": "reduced"}


def regime(base: str) -> s.RegimeOut:
    snap = latest_regime()
    if snap is None:
        return s.RegimeOut(regime="unknown", confidence=None, as_of=None, inputs={}, gate="unknown")
    return s.RegimeOut(
        regime=snap.regime,
        confidence=snap.confidence,
        as_of=iso(snap.computed_at),
        inputs=dict(snap.inputs),
        gate=REGIME_GATES.get(snap.regime, "unknown"),
    )


# --- market data ----------------------------------------------------------------------
def news_item_out(base: str, item: NewsItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "teaser": item.teaser,
        "price_usdc": item.price_usdc,
        "ingested_at": naive_utc(item.ingested_at),
        "unlock": f"/api/a2a/x402/news/unlock?news_id={item.id}",
    }


def news_catalog(base: str, *, limit: int, category: str) -> s.NewsCatalogOut:
    qs = NewsItem.objects.order_by("-id")
    if category:
        qs = qs.filter(category=category)
    billing = BillingSettings.load()
    digest = Sku.objects.filter(sku="news_digest").first()
    if billing.credit_billing_enabled:
        unlock_hint = (
            "POST /api/a2a/news/{news_id}/unlock with header X-API-Key debits the item's price_usdc from your "
            "prepaid credits (register at /api/a2a/account/register)."
        )
    else:
        unlock_hint = "Credit billing is off: the full text requires x402 (see x402_unlock_hint)."
    return s.NewsCatalogOut(
        items=[s.NewsItemOut(**news_item_out(base, i)) for i in qs[:limit]],
        credit_billing_enabled=billing.credit_billing_enabled,
        teaser_only=True,
        unlock_hint=unlock_hint,
        x402_unlock_hint="GET the item's unlock path (/api/a2a/x402/news/unlock?news_id=ID); it answers 402 with "
        "the item's price; pay it in USDC and retry with the payment header.",
        payment_alternatives=s.PaymentAlternatives(**payment_alternatives(base)),
        news_digest_x402=absolute(base, digest.path if digest else "/api/a2a/x402/news/digest"),
        news_digest_price_usdc=digest.price_usdc if digest else 0.0,
        agentverse_news=settings.AGENTVERSE_NEWS_AGENT,
    )


def equity_catalog(base: str, *, limit: int) -> s.EquityCatalogOut:
    items = list(NewsItem.objects.filter(category=NewsItem.Category.EQUITY).order_by("-id")[:limit])
    from catalog.models.news import DEFAULT_NEWS_PRICE_ATOMIC

    return s.EquityCatalogOut(
        items=[
            s.EquityItemOut(**news_item_out(base, i), source=i.source, category=i.category) for i in items
        ],
        count=len(items),
        unlock_price_usdc=usdc_from_atomic(DEFAULT_NEWS_PRICE_ATOMIC["equity"]),
        digest_x402=absolute(base, "/api/a2a/x402/equity/news/digest"),
    )


def market_agent_news(base: str, *, limit: int) -> s.MarketAgentNewsOut:
    qs = NewsItem.objects.exclude(market_group="")
    items = list(qs.order_by("-id")[:limit])
    groups = dict(qs.values_list("market_group").annotate(n=Count("id")).values_list("market_group", "n"))
    return s.MarketAgentNewsOut(
        items=[s.MarketAgentNewsItemOut(**news_item_out(base, i), group=i.market_group) for i in items],
        groups=groups,
        digest_x402=absolute(base, "/api/a2a/x402/intel/market-groups-digest"),
    )


def prediction_market_out(m: PredictionMarket) -> s.PredictionMarketOut:
    yes = _f(m.yes_price)
    return s.PredictionMarketOut(
        venue=m.venue,
        id=m.external_id,
        question=m.question,
        category=m.category,
        yes_price=yes,
        no_price=round(1 - yes, 6) if yes is not None else None,
        volume_usd=_f(m.volume_usd),
        closes_at=iso(m.closes_at),
        url=m.url,
    )


def prediction_paid() -> list[s.SkuOut]:
    return [sku_out(x) for x in on_sale().filter(family="prediction")]


def predictionvenue_catalog(base: str, *, limit: int) -> s.PredictionVenueCatalogOut:
    qs = PredictionMarket.objects.filter(venue=PREDICTION_VENUE).filter(
        Q(closes_at__isnull=True) | Q(closes_at__gte=timezone.now())
    )
    markets = [prediction_market_out(m) for m in qs.order_by("closes_at", "id")[:limit]]
    return s.PredictionVenueCatalogOut(
        venue=PREDICTION_VENUE, markets=markets, count=len(markets), paid=prediction_paid()
    )


def prediction_catalog(base: str, *, limit: int, venue: str | None) -> s.PredictionCatalogOut:
    qs = PredictionMarket.objects.all()
    if venue:
        qs = qs.filter(venue=venue)
    venues = dict(
        PredictionMarket.objects.values_list("venue").annotate(n=Count("id")).values_list("venue", "n")
    )
    markets = [prediction_market_out(m) for m in qs.order_by("-volume_usd", "id")[:limit]]
    return s.PredictionCatalogOut(venues=venues, markets=markets, count=len(markets), paid=prediction_paid())


def exchange_markets(base: str) -> s.ExchangeMarketsOut:
    rows = list(ExchangeMarket.objects.all()[: settings.CATALOG_LIMIT_MAX])
    return s.ExchangeMarketsOut(
        markets=[
            s.ExchangeMarketOut(
                exchange=m.exchange,
                symbol=m.symbol,
                base=m.base,
                quote=m.quote,
                last_price=_f(m.last_price),
                volume_24h_usd=_f(m.volume_24h_usd),
                spread_bps=_f(m.spread_bps),
                updated_at=iso(m.updated_at) or "",
            )
            for m in rows
        ],
        exchanges=sorted(set(ExchangeMarket.objects.values_list("exchange", flat=True))),
        count=len(rows),
    )


def tokenized_watchlist(base: str) -> s.TokenizedWatchlistOut:
    assets = TokenizedAsset.objects.filter(on_watchlist=True)
    return s.TokenizedWatchlistOut(
        watchlist=[
            s.TokenizedAssetOut(
                symbol=a.symbol,
                name=a.name,
                venue=a.venue,
                underlying=a.underlying,
                last_price=_f(a.last_price),
                change_24h_pct=_f(a.change_24h_pct),
                updated_at=iso(a.updated_at) or "",
            )
            for a in assets
        ],
        trading_api={
            "auto_route": "manual routing only",
            "session_desk": absolute(base, "/api/a2a/x402/tokenized/session-desk"),
        },
        paid=[sku_out(x) for x in on_sale().filter(family="tokenized")],
    )


def morning_brief(base: str) -> s.MorningBriefOut:
    piece = EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.MORNING_BRIEF).first()
    sku = Sku.objects.filter(sku="morning_brief").first()
    return s.MorningBriefOut(
        # Available only when the paid brief would be delivered: a piece exists and it is on sale.
        available=piece is not None and sku is not None and sku_available(sku),
        id=piece.id if piece else None,
        title=piece.title if piece else None,
        summary=piece.summary if piece else None,
        published_at=iso(piece.published_at) if piece else None,
        full_x402=absolute(base, "/api/a2a/x402/morning-brief"),
        price_usdc=sku.price_usdc if sku else 0.0,
        pro_x402=absolute(base, "/api/a2a/x402/morning-brief/pro"),
    )


def telemetry_catalog(base: str) -> s.TelemetryCatalogOut:
    detail = Sku.objects.filter(sku="telemetry_detail").first()
    price = detail.price_usdc if detail else 0.0
    return s.TelemetryCatalogOut(
        links={
            "status": absolute(base, "/api/a2a/telemetry/status"),
            "nodes": absolute(base, "/api/a2a/telemetry/nodes"),
            "detail_credits": absolute(base, "/api/a2a/telemetry/detail"),
            "detail_x402": absolute(base, "/api/a2a/x402/telemetry/detail"),
        },
        feeds=["status", "nodes", "detail"],
        prices={"status": 0.0, "nodes": 0.0, "detail": price},
    )


def telemetry_status(base: str) -> s.TelemetryStatusOut:
    nodes = TelemetryNode.objects.all()
    online = nodes.filter(online=True)
    latencies = [x for x in online.values_list("latency_ms", flat=True) if x is not None]
    return s.TelemetryStatusOut(
        nodes_total=nodes.count(),
        nodes_online=online.count(),
        regions=nodes.exclude(region="").values("region").distinct().count(),
        countries=nodes.exclude(country="").values("country").distinct().count(),
        median_latency_ms=round(statistics.median(latencies), 2) if latencies else None,
        last_seen_at=iso(nodes.aggregate(m=Max("last_seen_at"))["m"]),
    )


def telemetry_nodes(base: str) -> s.TelemetryNodesOut:
    rows = list(TelemetryNode.objects.values("region", "country", "online")[:1000])
    return s.TelemetryNodesOut(nodes=[s.TelemetryNodeOut(**r) for r in rows], count=len(rows))


# --- agents ---------------------------------------------------------------------------
def catalog_agent(slug: str) -> CatalogAgent:
    from a2a_service.core.errors import NotFound

    agent = CatalogAgent.objects.filter(slug=slug).prefetch_related("skus").first()
    if agent is None:
        raise NotFound(f"unknown agent {slug!r}; see /api/a2a/agents/catalog")
    return agent


def agents_catalog(base: str) -> s.AgentsCatalogOut:
    agents = [catalog_agent_out(base, a) for a in CatalogAgent.objects.prefetch_related("skus")]
    return s.AgentsCatalogOut(agents=agents, count=len(agents))


def agent_status(base: str, slug: str) -> s.AgentStatusOut:
    agent = catalog_agent(slug)
    return s.AgentStatusOut(
        slug=agent.slug,
        name=agent.name,
        status="online" if agent.enabled else "disabled",
        skus_live=sum(1 for x in agent.skus.all() if sku_available(x)),
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
    )


def agent_manifest(base: str, slug: str) -> s.AgentManifestOut:
    agent = catalog_agent(slug)
    return s.AgentManifestOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=[agent_skill(r) for r in agent.skills],
        skus=[sku_out(x) for x in agent.skus.all() if sku_available(x)],
        endpoints={
            "chat": absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
            "status": absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
            "manifest": absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
        },
        payment_routes=[s.PaymentRouteState(**r) for r in routes_state()],
    )


def agenthub_status(base: str) -> s.AgentHubStatusOut:
    return s.AgentHubStatusOut(
        status="ok",
        agents=list(CatalogAgent.objects.filter(enabled=True).values_list("slug", flat=True)),
        chat=absolute(base, "/api/a2a/agenthub/chat"),
    )


# --- health -----------------------------------------------------------------------------
# Health answers anyone: it says which part is ok or down, never why. The exception (hosts,
# ports, driver messages) goes to the log, once per LOG_REPEAT_SECONDS per part.
health_logger = logging.getLogger("catalog.health")


def _timed(part: str, check) -> s.ComponentHealth:
    started = time.perf_counter()
    try:
        check()
    except Exception:  # a failing part is reported as down; the endpoint still answers
        log_throttled(health_logger, f"health-{part}", "health check: %s is down", part)
        return s.ComponentHealth(status="down")
    return s.ComponentHealth(status="ok", latency_ms=round((time.perf_counter() - started) * 1000, 2))


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_cache() -> None:
    key = "health:probe"
    cache.set(key, "1", 10)
    if cache.get(key) != "1":
        raise RuntimeError("cache did not return the value it was given")


def _check_broker() -> None:
    from a2a_service.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def program_health(base: str) -> s.ProgramHealthOut:
    database = _timed("database", _check_database)
    cache_h = _timed("cache", _check_cache)
    broker = _timed("broker", _check_broker)
    worker: s.WorkerHealth
    try:
        beat = WorkerHeartbeat.objects.filter(name="celery-worker").first()
        if beat is None:
            worker = s.WorkerHealth(status="unknown", detail="no heartbeat recorded yet")
        else:
            age = (timezone.now() - beat.beat_at).total_seconds()
            stale = age > 3 * settings.WORKER_HEARTBEAT_SECONDS
            # No hostname: the worker's machine name is internal.
            worker = s.WorkerHealth(
                status="stale" if stale else "ok", last_beat_at=iso(beat.beat_at), age_seconds=round(age, 1)
            )
    except Exception:
        log_throttled(health_logger, "health-worker", "health check: worker heartbeat unreadable")
        worker = s.WorkerHealth(status="down")
    try:
        catalogs = {
            "news_items": NewsItem.objects.count(),
            "prediction_markets": PredictionMarket.objects.count(),
            "exchange_markets": ExchangeMarket.objects.count(),
            "telemetry_nodes": TelemetryNode.objects.count(),
            "teasers": Teaser.objects.count(),
        }
        built = _products_built()
        skus = {
            "live": on_sale().count(),
            "disabled": Sku.objects.exclude(status=Sku.Status.LIVE).count(),
            "products_built": Sku.objects.filter(sku__in=built).count(),
            "coming_soon": Sku.objects.live().exclude(sku__in=built).count(),
        }
        agents = {
            "catalog": CatalogAgent.objects.filter(enabled=True).count(),
            "partners": PartnerAgent.objects.filter(enabled=True).count(),
        }
        venues = [
            {"venue": v["venue"], "markets": v["n"], "updated_at": iso(v["latest"])}
            for v in PredictionMarket.objects.values("venue").annotate(
                n=Count("id"), latest=Max("updated_at")
            )
        ] + [
            {"venue": v["exchange"], "markets": v["n"], "updated_at": iso(v["latest"])}
            for v in ExchangeMarket.objects.values("exchange").annotate(
                n=Count("id"), latest=Max("updated_at")
            )
        ]
    except Exception:
        log_throttled(health_logger, "health-catalogs", "health check: catalog counts unreadable")
        catalogs, skus, agents, venues = {}, {}, {}, []
    parts_ok = all(c.status == "ok" for c in (database, cache_h, broker, worker))
    return s.ProgramHealthOut(
        status="ok" if parts_ok else "degraded",
        checked_at=iso(timezone.now()) or "",
        database=database,
        cache=cache_h,
        broker=broker,
        worker=worker,
        catalogs=catalogs,
        skus=skus,
        agents=agents,
        venue_adapters=venues,
    )
