from __future__ import annotations

from typing import Any

from django.db.models import Avg

from billing.routes import routes_state
from catalog.models import TelemetryNode
from catalog.products.registry import ProductCall, ProductFailed, register


def _has_telemetry() -> tuple[bool, str]:
    if TelemetryNode.objects.exists():
        return True, ""
    return False, "no telemetry has been ingested yet"


@register("telemetry_detail", pure=True, available=_has_telemetry)
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


@register("payments_dual_rail_status", pure=True)
def payments_dual_rail_status(call: ProductCall) -> dict[str, Any]:
    from catalog.selectors import payment_alternatives

    return {"routes": routes_state(), "payment_alternatives": payment_alternatives(call.base_url)}
