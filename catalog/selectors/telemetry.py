"""Free telemetry reads: node counts and map, the telemetry catalog, and the RPC speed index
from the service's own probes."""

from __future__ import annotations

import statistics
from datetime import timedelta

from django.db.models import Max
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.api import schemas as s
from catalog.models import (
    RpcEndpoint,
    RpcProbe,
    Sku,
    TelemetryNode,
)
from catalog.selectors.payment import absolute


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
