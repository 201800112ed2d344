"""A chat message that brings payment buys the product it was understood as, through the
payment front (billing/front/) like the product's own routes and the marketplace's execute:
X-API-Key debits credits, an x402 proof (PAYMENT-SIGNATURE / X-PAYMENT) is checked and
settled, X-Session-Token uses one call of a prepaid session. A refused payment answers as
those routes do (401, 402, 403)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.views import base_url
from agents.discovery import schemas as s
from billing.api.front_http import http_answer, http_brought, http_sale
from billing.front import DEFAULT_ACCEPTS, Charge, Sold, payment_brought, payment_sell
from billing.paid_call import paid_offer

# The front's default schemes, and a session token: the chat sells session-callable SKUs.
ACCEPTS = (*DEFAULT_ACCEPTS, "session")


def chat_payment(request: Request) -> str | None:
    """The scheme the message pays by (a proof first: it is the most specific), or None."""
    return payment_brought(http_brought(request), ACCEPTS)


def paid_run(request: Request, *, sku: str, params: dict[str, Any]) -> tuple[Response, s.ChatChargeOut | None]:
    """(the product's paid answer, what it charged); a non-200 answer is returned as it is."""
    base = base_url(request)
    offer = paid_offer(product=sku, params=params, base_url=base, params_in="body")
    assert offer.sku is not None  # paid_offer read the row
    # The x402 requirements are the product's own (its x402 URL with the question's params), so
    # a proof made for that URL pays here too, and one made here pays once.
    resource_url = base + offer.sku.path + ("?" + urlencode(params) if params else "")
    sale = http_sale(request, offer, accepts=ACCEPTS, resource_url=resource_url)
    result = payment_sell(brought=http_brought(request), sale=sale)
    return http_answer(result, base=base), chat_charge(result.charge) if isinstance(result, Sold) else None


def chat_charge(charge: Charge) -> s.ChatChargeOut:
    def usdc(atomic: int | None) -> float | None:
        return None if atomic is None else usdc_from_atomic(atomic)

    return s.ChatChargeOut.model_validate(
        {
            "rail": charge.rail,
            "amount_usdc": usdc(charge.charged_atomic),
            "balance_usdc": usdc(charge.balance_atomic),
            "calls_remaining": charge.calls_remaining,
        }
    )
