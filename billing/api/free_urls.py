"""Billing's free operations: path -> selector -> response model (credit guides, sales
statistics, prices, the facilitator's and the x402 route's state). The paid routes are in
billing/api/urls.py."""

from __future__ import annotations

from django.urls import URLPattern

from a2a_service.core.freeviews import FreeGet, cacheable_routes, free_urlpatterns
from billing import schemas as s
from billing.selectors import credits, pricing, settlement, status

D = "discovery"

FREE_GETS: list[FreeGet] = [
    FreeGet(
        route="api/a2a/account/bundle-info",
        selector=credits.bundle_info,
        response=s.BundleInfoOut,
        tag=D,
        summary="Credit bundle information",
    ),
    FreeGet(
        route="api/a2a/monetization/conversion",
        selector=status.conversion,
        response=s.ConversionOut,
        tag=D,
        summary="Conversion funnel snapshot",
    ),
    FreeGet(
        route="api/a2a/monetization/status",
        selector=status.monetization_status,
        response=s.MonetizationStatusOut,
        tag=D,
        summary="Monetization state",
    ),
    FreeGet(
        route="api/a2a/pricing/surge",
        selector=pricing.pricing_surge,
        response=s.SurgeOut,
        tag=D,
        summary="Live surge catalog: current over base price",
    ),
    FreeGet(
        route="api/a2a/account/whale/catalog",
        selector=pricing.whale_catalog,
        response=s.WhaleCatalogOut,
        tag=D,
        summary="Whale tier catalog",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/facilitator/health",
        selector=status.facilitator_health,
        response=s.FacilitatorHealthOut,
        tag=D,
        summary="Payment-facilitator readiness (no payment)",
    ),
    FreeGet(
        route="api/a2a/platform/stats",
        selector=status.platform_stats,
        response=s.PlatformStatsOut,
        tag=D,
        summary="Public read-only statistics",
    ),
    FreeGet(
        route="api/a2a/account/credit-prepay-guide",
        selector=credits.credit_prepay_guide,
        response=s.CreditPrepayGuideOut,
        tag=D,
        summary="Onboarding guide for agents without x402 wallets",
    ),
    FreeGet(
        route="api/a2a/account/topup-info",
        selector=credits.topup_info,
        response=s.TopupInfoOut,
        tag=D,
        summary="Top-up information",
    ),
    FreeGet(
        route="api/a2a/x402/settlement",
        selector=settlement.x402_settlement,
        response=s.SettlementStatusOut,
        query=s.SettlementQuery,
        tag=D,
        summary="One x402 payment by its payer and nonce: state and current settlement transaction",
        not_found="no payment with this payer and nonce: never claimed, or released (nothing was charged; "
        "the same proof may be sent again while it is valid)",
    ),
    FreeGet(
        route="api/a2a/x402/status",
        selector=status.x402_status,
        response=s.X402StatusOut,
        tag=D,
        summary="Commercial catalog and 30-day performance",
    ),
]

CACHEABLE_ROUTES = cacheable_routes(FREE_GETS)

urlpatterns: list[URLPattern] = free_urlpatterns(FREE_GETS)
