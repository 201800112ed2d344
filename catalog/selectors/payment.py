"""How a catalog page tells an agent to pay: links and the payment alternatives, from settings.
The payment routes themselves are billing's (a2a_service/core/payment_routes.py says which are up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

# Whether X-API-Key credit billing is on is billing's setting (BillingSettings), which catalog
# pages mention. Billing registers its reader when it is ready: the catalog imports no billing.
_CREDIT_BILLING_READERS: list[Callable[[], bool]] = []


def credit_billing_reader_register(reader: Callable[[], bool]) -> None:
    _CREDIT_BILLING_READERS[:] = [reader]


def credit_billing_enabled() -> bool:
    """Off when no app registered a reader: without billing there are no credits to spend."""
    return any(reader() for reader in _CREDIT_BILLING_READERS)


def absolute(base: str, path: str) -> str:
    return base + path


def facilitator_url(base: str) -> str:
    """The facilitator agents are pointed at: the configured one, or this service's own."""
    return settings.FACILITATOR_URL or absolute(base, "/api/a2a/facilitator")


def payment_alternatives(base: str) -> dict[str, Any]:
    return {
        "rails": ["x402_usdc_base"],
        "x402": {
            "network": settings.X402_NETWORK,
            "facilitator": facilitator_url(base),
            "hint": "GET the /api/a2a/x402/ path, pay the 402 challenge in USDC, retry with PAYMENT-SIGNATURE "
            "(v2) or X-PAYMENT (v1)",
        },
        "skyfire": {
            "enabled": settings.SKYFIRE_RAIL_ENABLED,
            "hint": "the agent-payment network rail is not enabled on this service",
        },
    }
