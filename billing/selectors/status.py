"""Billing's public state: the conversion funnel, monetization and x402 status, platform sales
statistics and the payment facilitator's readiness (a live probe)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from a2a_service.core.formats import iso
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.payment_routes import routes_state
from a2a_service.core.ratelog import log_throttled
from billing import schemas as s
from billing.models import BillingSettings
from billing.selectors.sales import payment_counts, revenue_atomic_since, sales_window
from catalog.counters import counters_pending
from catalog.models import (
    CatalogAgent,
    DailyCounter,
    ExchangeMarket,
    NewsItem,
    PartnerAgent,
    PredictionMarket,
    Sku,
    TelemetryNode,
)
from catalog.selectors.payment import facilitator_url
from catalog.selectors.skus import live_skus, on_sale, products_built, sku_out

# The health log's channel, shared with program health (agents/discovery/health.py): it says which
# part failed and why, which the public answer never does.
health_logger = logging.getLogger("catalog.health")


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
    window = sales_window(days=days)
    challenges = int(hits.get("challenge", 0))
    return s.ConversionOut(
        window_days=days,
        generated_at=iso(timezone.now()) or "",
        hits={"free": int(hits.get("hit", 0)), "teaser": int(hits.get("teaser", 0)), "challenge": challenges},
        payment_attempts=counts["attempts"],
        sales=counts["sales"],
        sales_by_rail=window["by_rail"],
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
        sales_by_rail=all_time["by_rail"],
    )


def x402_status(base: str) -> s.X402StatusOut:
    skus = live_skus()
    return s.X402StatusOut(
        live_skus=len(skus),
        coming_soon=[x.sku for x in Sku.objects.live().exclude(sku__in=products_built())],
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        pay_to=settings.TREASURY_ADDRESS,
        facilitator=facilitator_url(base),
        skus=[sku_out(x) for x in skus],
        performance_30d=s.SalesFigures(**sales_window(days=30)),
    )
