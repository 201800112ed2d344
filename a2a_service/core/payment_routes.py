"""What payment routes this deployment accepts now. Every endpoint that describes
payment routes reads this, so none claims a route that is not wired. A registry: the app that
wires a route (billing, when ready) marks it available; the catalog reads it to say whether a
SKU is live, without importing billing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


@dataclass(frozen=True)
class PaymentRoute:
    name: str
    how: str


ROUTES: dict[str, PaymentRoute] = {
    "x402": PaymentRoute(
        "x402", "GET a paid /api/a2a/x402/ path, pay the 402 challenge in USDC, retry with the proof"
    ),
    "credits": PaymentRoute(
        "credits", "register a wallet, deposit USDC to the treasury, call with X-API-Key"
    ),
    "sessions": PaymentRoute(
        "sessions", "buy a session pack by x402, call /api/a2a/session/call/{sku} with the token"
    ),
}

# Routes whose handlers are wired in this build. A route module adds its name when it
# is built; until then the route is described as unavailable and its paths answer 503.
_AVAILABLE: set[str] = set()


def route_mark_available(name: str) -> None:
    _AVAILABLE.add(name)


def route_available(name: str) -> bool:
    return name in _AVAILABLE


class RouteState(TypedDict):
    name: str
    available: bool
    how: str


def routes_state() -> list[RouteState]:
    return [{"name": r.name, "available": r.name in _AVAILABLE, "how": r.how} for r in ROUTES.values()]
