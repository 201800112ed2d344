"""The session packs are products too: buying one (by x402, or with credits on the same path)
creates a prepaid session and returns its token."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from catalog.products.registry import ProductCall, ProductFailed, TeaserSpec, product
from sessions_app.models import SessionPack
from sessions_app.services import session_create


class SessionHowToCallOut(BaseModel):
    call: str = Field(description="URL template of a session call ({sku})")
    header: str = Field(description="the header that carries the token")
    status: str = Field(description="URL of the session's status")


class SessionPackOut(BaseModel):
    token: str = Field(description="the session token: send it in X-Session-Token")
    pack: str
    calls_total: int
    window_hours: int
    expires_at: str
    skus: list[str] = Field(description="the SKUs the session covers")
    how_to_call: SessionHowToCallOut


def _pack_ready(call: ProductCall) -> None:
    if not SessionPack.objects.filter(sku=call.sku).exists():
        raise ProductFailed(f"no session pack is configured for {call.sku.sku}; nothing is charged")


def _pack(call: ProductCall) -> dict[str, Any]:
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
product(
    sku="m2m_session_desk",
    path="/session/desk-pack",
    headline="Desk session pack: 40 calls in 24 hours across the brief and the trading and risk desks",
    price="1.5",
    family="session",
    tier="A",
    hero=True,
    rank=6,
    teaser="m2m-desk",
    teasers=(
        TeaserSpec(
            name="m2m-desk",
            title="Machine-to-machine desk",
            summary="A prepaid session: many desk calls, one x402 payment.",
            highlights=("40 calls / 24 h", "200 calls / 7 days"),
        ),
    ),
    output=SessionPackOut,
    effects=True,
    ready=_pack_ready,
)(_pack)
product(
    sku="m2m_session_enterprise",
    path="/session/enterprise-pack",
    headline="Enterprise session pack: 200 calls in 7 days",
    price="4.99",
    family="session",
    rank=7,
    teaser="m2m-desk",
    output=SessionPackOut,
    effects=True,
    ready=_pack_ready,
)(_pack)
