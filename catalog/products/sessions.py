"""The session packs are products too: buying one (by x402, or with credits on the same path)
creates a prepaid session and returns its token."""

from __future__ import annotations

from typing import Any

from catalog.products.registry import ProductCall, ProductFailed, register


def _pack_ready(call: ProductCall) -> None:
    from sessions_app.models import SessionPack

    if not SessionPack.objects.filter(sku=call.sku).exists():
        raise ProductFailed(f"no session pack is configured for {call.sku.sku}; nothing is charged")


def _pack(call: ProductCall) -> dict[str, Any]:
    from sessions_app.services import session_create

    _pack_ready(call)
    session = session_create(pack_sku=call.sku, buyer=call.payer or "")
    skus = list(session.pack.covered_skus.filter(status="live_x402").values_list("sku", flat=True))
    return {
        "token": session.token,
        "pack": call.sku.sku,
        "calls_total": session.calls_total,
        "window_hours": session.pack.window_hours,
        "expires_at": session.expires_at.isoformat(),
        "skus": sorted(skus),
        "how_to_call": {
            "call": call.base_url + "/api/a2a/session/call/{sku}",
            "header": "X-Session-Token",
            "status": call.base_url + "/api/a2a/session/status?token=" + session.token,
        },
    }


# A session is an effect: bought by x402, it is created only once the payment has settled.
register("m2m_session_desk", effects=True, ready=_pack_ready)(_pack)
register("m2m_session_enterprise", effects=True, ready=_pack_ready)(_pack)
