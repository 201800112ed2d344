"""A chat message that brings payment buys the product it was understood as, through the one
paid-call service and the same rails as the product's own routes (agents/discovery/views.py
`marketplace_paid` does the same for the marketplace's execute): X-API-Key debits credits, an
x402 proof (PAYMENT-SIGNATURE / X-PAYMENT) is checked and settled, X-Session-Token uses one
call of a prepaid session. A refused payment answers as those routes do (401, 402, 403)."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlencode

from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.views import base_url
from agents.discovery import schemas as s
from billing.api.auth import api_key_account
from billing.api.views import credit_serve, paid_response, payment_required
from billing.paid_call import paid_call, paid_offer
from billing.rails.base import SessionReceipt, product_available
from billing.rails.x402 import x402_challenge, x402_payment
from billing.x402.proof import PaymentRejected, proof_decode, proof_header
from sessions_app.rail import session_payment

Rail = Literal["credits", "x402", "session"]


def payment_brought(request: Request) -> Rail | None:
    """Which payment the message carries (a proof first: it is the most specific)."""
    if proof_header(request) is not None:
        return "x402"
    if request.headers.get("X-API-Key"):
        return "credits"
    if request.headers.get("X-Session-Token"):
        return "session"
    return None


def paid_run(
    request: Request, *, sku: str, params: dict[str, Any], rail: Rail
) -> tuple[Response, s.ChatChargeOut | None]:
    """(the product's paid answer, what it charged); a non-200 answer is returned as it is."""
    base = base_url(request)
    offer = paid_offer(product=sku, params=params, base_url=base, params_in="body")
    assert offer.sku is not None  # paid_offer read the row
    price, path = offer.price, offer.sku.path
    if rail == "session":
        session = session_payment(token=request.headers.get("X-Session-Token", ""), sku=sku)
        offer = paid_offer(product=sku, params=params, base_url=base, params_in="body", sku=session.sku)
        paid = paid_call(product=offer, payment=session)
        assert isinstance(paid.receipt, SessionReceipt)
        remaining = paid.receipt.calls_remaining
        return (
            Response(paid.content, headers={"X-Session-Calls-Remaining": str(remaining)}),
            s.ChatChargeOut(rail="session", amount_usdc=None, calls_remaining=remaining),
        )
    if rail == "credits":
        answer = credit_serve(request=request, account=api_key_account(request), offer=offer)
        charged = answer.get("X-Credit-Charged")
        balance = answer.get("X-Credit-Balance")
        return answer, s.ChatChargeOut(
            rail="credits",
            amount_usdc=float(charged) if charged is not None else None,
            balance_usdc=float(balance) if balance is not None else None,
        )
    # x402: the requirements are the product's own (its x402 URL with the question's params),
    # so a proof made for that URL pays here too, and one made here pays once.
    raw = proof_header(request)
    assert raw is not None
    resource_url = base + path + ("?" + urlencode(params) if params else "")
    challenge = x402_challenge(offer, resource_url=resource_url)
    try:
        rail_ = x402_payment(payload=proof_decode(raw), offer=offer, resource_url=resource_url)
        answer = paid_response(paid_call(product=offer, payment=rail_))
    except PaymentRejected as exc:
        product_available(offer)  # a refused proof is not asked again for nothing
        return payment_required(exc.challenge or challenge, base, exc.reason, exc.message), None
    return answer, s.ChatChargeOut(rail="x402", amount_usdc=usdc_from_atomic(price))
