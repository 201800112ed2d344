"""Telemetry detail: the full node table the telemetry catalog teases (each probed RPC
endpoint's last probe, from the rpc_probes feed, and the nodes staff added)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Avg
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import TelemetryNode
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, fresh_required, product

# The probe feed runs every minute by default: a node table whose newest row is an hour old
# means the probes stopped, and what it says about latency and liveness is history.
TELEMETRY_MAX_AGE = timedelta(hours=1)
METHOD = (
    "one node per probed RPC endpoint (its newest probe: online when eth_blockNumber answered, "
    "latency of that call, version from web3_clientVersion) plus nodes staff added; "
    "mean latency over the online nodes"
)


class TelemetryNodeDetailOut(BaseModel):
    node_id: str
    region: str
    country: str
    version: str
    latency_ms: float | None
    online: bool
    last_seen_at: str
    replay: bool = Field(description="true when the node's last probe went to the local replay's stand-in")


class TelemetryDetailOut(Provenanced):
    nodes: list[TelemetryNodeDetailOut]
    count: int
    mean_latency_ms_online: float | None


def _has_telemetry() -> tuple[bool, str]:
    if TelemetryNode.objects.exists():
        return True, ""
    return False, "no telemetry has been ingested yet"


@product(
    sku="telemetry_detail",
    path="/telemetry/detail",
    headline="Telemetry detail: the full node table with latency, versions and regions",
    price="0.04",
    family="telemetry",
    tier="L",
    hero=True,
    rank=12,
    credit_routes=(
        CreditRoute(
            route="api/a2a/telemetry/detail",
            operation_id="telemetry_detail_credit",
            summary="Telemetry detail (X-API-Key)",
            tag="telemetry",
        ),
    ),
    output=TelemetryDetailOut,
    pure=True,
    available=_has_telemetry,
)
def telemetry_detail(call: ProductCall) -> dict[str, Any]:
    nodes = list(TelemetryNode.objects.all())
    if not nodes:
        raise ProductFailed("no telemetry has been ingested yet; nothing is charged")
    prov = Provenance(method=METHOD, max_age=TELEMETRY_MAX_AGE)
    for node in nodes:
        prov.add(source=node.source, replay=node.replay, as_of=node.last_seen_at)
    fresh_required(prov, "telemetry")
    avg = TelemetryNode.objects.filter(online=True).aggregate(a=Avg("latency_ms"))["a"]
    return {
        "nodes": [
            {
                "node_id": n.node_id,
                "region": n.region,
                "country": n.country,
                "version": n.version,
                "latency_ms": n.latency_ms,
                "online": n.online,
                "last_seen_at": iso(n.last_seen_at) or "",
                "replay": n.replay,
            }
            for n in nodes
        ],
        "count": len(nodes),
        "mean_latency_ms_online": round(avg, 2) if avg is not None else None,
        **prov.out(),
    }
