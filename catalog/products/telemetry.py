"""Telemetry detail: the full node table the telemetry catalog teases."""

from __future__ import annotations

from typing import Any

from django.db.models import Avg
from pydantic import BaseModel

from catalog.models import TelemetryNode
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, product


class TelemetryNodeDetailOut(BaseModel):
    node_id: str
    region: str
    country: str
    version: str
    latency_ms: float | None
    online: bool
    last_seen_at: str


class TelemetryDetailOut(BaseModel):
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
                "last_seen_at": n.last_seen_at.isoformat(),
            }
            for n in nodes
        ],
        "count": len(nodes),
        "mean_latency_ms_online": avg,
    }
