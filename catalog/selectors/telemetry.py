"""Free telemetry reads: node counts and map, the telemetry catalog, and the RPC speed index
from the service's own probes (catalog/feeds/rpcprobe/). Each read of ingested rows carries
`as_of` and its `sources` (which feed, whether from the local replay)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import timedelta
from typing import Any

import numpy as np
from django.db.models import Max
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.models import (
    RpcEndpoint,
    RpcProbe,
    Sku,
    TelemetryNode,
)
from catalog.selectors import schemas as s
from catalog.selectors.market import ingested_sources
from catalog.selectors.payment import absolute

RPC_INDEX_WINDOW = timedelta(hours=24)
# At most this many probes per endpoint are read for the window (a probe a minute fills 24 h
# with 1440): a bound on the read, not on the measurements.
RPC_INDEX_MAX_PROBES = 2000
RPC_PROBE_SOURCE = "rpc_probes"
RPC_INDEX_METHOD = (
    "the service's own probes over the last 24 h: eth_blockNumber latency of each endpoint "
    "(connection setup included), success rate, median and 95th percentile latency of the "
    "successful probes, lag behind the best head of the same network in the same pass; "
    "ranked by median latency, endpoints without a successful probe unranked"
)


def _probe_sources(probes: list[dict[str, Any]]) -> list[s.CatalogSourceOut]:
    """The probes' provenance: one source (the probe feed), split by replay."""
    groups: dict[bool, list[dict[str, Any]]] = defaultdict(list)
    for p in probes:
        groups[p["replay"]].append(p)
    return [
        s.CatalogSourceOut(
            name=RPC_PROBE_SOURCE,
            replay=replay,
            items=len(rows),
            as_of=iso(max(r["probed_at"] for r in rows)),
        )
        for replay, rows in sorted(groups.items())
    ]


def _rounded(value: float | None, places: int = 2) -> float | None:
    return None if value is None else round(float(value), places)


def rpc_entry(ep: RpcEndpoint, probes: list[dict[str, Any]]) -> s.RpcIndexEntryOut:
    """One endpoint's figures from its probes of the window, newest first."""
    ok = [p for p in probes if p["ok"] and p["latency_ms"] is not None]
    latencies = np.array([p["latency_ms"] for p in ok], dtype=np.float64)
    lags = [p["lag_blocks"] for p in probes if p["ok"] and p["lag_blocks"] is not None]
    last = probes[0] if probes else None
    last_ok = next((p for p in probes if p["ok"]), None)
    return s.RpcIndexEntryOut(
        name=ep.name,
        url=ep.url,
        affiliate_url=ep.affiliate_url or None,
        region=ep.region,
        country=ep.country,
        chain_id=last_ok["chain_id"] if last_ok else None,
        client_version=(last_ok["client_version"] or None) if last_ok else None,
        probes_24h=len(probes),
        success_rate_24h=round(100.0 * len(ok) / len(probes), 1) if probes else None,
        median_latency_ms_24h=_rounded(float(np.median(latencies))) if ok else None,
        p95_latency_ms_24h=_rounded(float(np.percentile(latencies, 95))) if ok else None,
        last_block=last_ok["block_number"] if last_ok else None,
        last_lag_blocks=last["lag_blocks"] if last else None,
        median_lag_blocks_24h=_rounded(statistics.median(lags), 1) if lags else None,
        last_ok=last["ok"] if last else None,
        last_error=(last["error"] or None) if last else None,
        last_probed_at=iso(last["probed_at"]) if last else None,
        replay=any(p["replay"] for p in probes),
    )


def rpc_index(base: str) -> s.RpcIndexOut:
    since = timezone.now() - RPC_INDEX_WINDOW
    endpoints = list(RpcEndpoint.objects.filter(enabled=True))
    by_endpoint: dict[int, list[dict[str, Any]]] = defaultdict(list)
    fields = ("endpoint_id", "ok", "latency_ms", "block_number", "lag_blocks", "chain_id")
    rows = (
        RpcProbe.objects.filter(endpoint__in=endpoints, probed_at__gte=since)
        .order_by("-probed_at", "-id")
        .values(*fields, "client_version", "error", "replay", "probed_at")
    )
    for row in rows.iterator():
        kept = by_endpoint[row["endpoint_id"]]
        if len(kept) < RPC_INDEX_MAX_PROBES:
            kept.append(row)
    entries = [rpc_entry(ep, by_endpoint[ep.id]) for ep in endpoints]
    ranked = sorted(
        (e for e in entries if e.median_latency_ms_24h is not None),
        key=lambda e: (e.median_latency_ms_24h or 0.0, e.name),  # never None here (filtered)
    )
    read = [p for probes in by_endpoint.values() for p in probes]
    return s.RpcIndexOut(
        endpoints=entries,
        ranking=[e.name for e in ranked],
        window_hours=int(RPC_INDEX_WINDOW.total_seconds() // 3600),
        method=RPC_INDEX_METHOD,
        as_of=iso(max((p["probed_at"] for p in read), default=None)),
        sources=_probe_sources(read),
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


def _node_sources() -> list[s.CatalogSourceOut]:
    return ingested_sources(TelemetryNode.objects.all(), venue_field=None, seen_field="last_seen_at")


def telemetry_status(base: str) -> s.TelemetryStatusOut:
    nodes = TelemetryNode.objects.all()
    online = nodes.filter(online=True)
    latencies = [x for x in online.values_list("latency_ms", flat=True) if x is not None]
    last_seen = iso(nodes.aggregate(m=Max("last_seen_at"))["m"])
    return s.TelemetryStatusOut(
        nodes_total=nodes.count(),
        nodes_online=online.count(),
        regions=nodes.exclude(region="").values("region").distinct().count(),
        countries=nodes.exclude(country="").values("country").distinct().count(),
        median_latency_ms=round(statistics.median(latencies), 2) if latencies else None,
        last_seen_at=last_seen,
        as_of=last_seen,
        sources=_node_sources(),
    )


def telemetry_nodes(base: str) -> s.TelemetryNodesOut:
    rows = list(TelemetryNode.objects.values("region", "country", "online")[:1000])
    return s.TelemetryNodesOut(
        nodes=[s.TelemetryNodeOut(**r) for r in rows],
        count=len(rows),
        as_of=iso(TelemetryNode.objects.aggregate(m=Max("last_seen_at"))["m"]),
        sources=_node_sources(),
    )
