"""The payment front (billing/front/) on HTTP: what a request brought, and a result as an
HTTP answer. Shared by every HTTP surface that sells a call: the paid REST routes, the chat
and the marketplace's execute."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import QueryDict
from rest_framework.request import Request
from rest_framework.response import Response
from x402.http.constants import PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, X_PAYMENT_RESPONSE_HEADER
from x402.http.utils import encode_payment_response_header

from billing.front import DEFAULT_ACCEPTS, Brought, Charge, Refused, Sale, Sold
from billing.paid_call import Offer
from billing.rails.base import CreditReceipt, ReplayReceipt, SessionReceipt, X402Receipt
from billing.rails.credits import credit_headers
from billing.x402.challenge import Challenge, challenge_body, challenge_header


def http_brought(request: Request) -> Brought:
    return Brought(headers=request.headers)


def http_sale(
    request: Request,
    offer: Offer,
    *,
    accepts: tuple[str, ...] = DEFAULT_ACCEPTS,
    resource_url: str = "",
    asking: str = "",
) -> Sale:
    """A sale on this request: the ledger reference and an Idempotency-Key's path are the
    request's path, and the same call is the same method, path, query and body."""
    return Sale(
        offer=offer,
        resource_url=resource_url or request.build_absolute_uri(),
        accepts=accepts,
        reference=request.path,
        fingerprint=call_fingerprint(request),
        asking=asking,
    )


def call_fingerprint(request: Request) -> str:
    """What makes two calls the same call: method, path (with its path parameters), every
    query parameter (order of names ignored) and the JSON body."""
    body: Any = None
    if request.method not in ("GET", "HEAD"):
        body = request.data.dict() if isinstance(request.data, QueryDict) else request.data
    canonical = json.dumps(
        [request.method, request.path, sorted(request.query_params.lists()), body],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def receipt_headers(charge: Charge) -> dict[str, str]:
    """The charge as HTTP headers (a replay: the first answer's, as stored)."""
    receipt = charge.receipt
    if isinstance(receipt, X402Receipt):
        header = encode_payment_response_header(receipt.settlement)
        if receipt.version == 1:  # v1 clients read X-PAYMENT-RESPONSE
            return {PAYMENT_RESPONSE_HEADER: header, X_PAYMENT_RESPONSE_HEADER: header}
        return {PAYMENT_RESPONSE_HEADER: header}
    if isinstance(receipt, CreditReceipt):
        return credit_headers(receipt.charged_atomic, receipt.balance_atomic)
    if isinstance(receipt, ReplayReceipt):
        return dict(receipt.headers)
    if isinstance(receipt, SessionReceipt):
        return {"X-Session-Calls-Remaining": str(receipt.calls_remaining)}
    return {}


def http_answer(result: Sold | Refused, *, base: str) -> Response:
    """The content with its receipt as headers; an x402 refusal as the 402 challenge; any other
    refusal is raised as its domain error, for the one exception handler to answer."""
    if isinstance(result, Sold):
        receipt = result.charge.receipt
        status = receipt.status_code if isinstance(receipt, ReplayReceipt) else 200
        return Response(result.content, status=status, headers=receipt_headers(result.charge))
    if result.asks_x402:
        assert result.challenge is not None
        return payment_required(result.challenge, base, result.code, result.message)
    assert result.error is not None, result
    raise result.error


def payment_required(challenge: Challenge, base: str, error: str, detail: str) -> Response:
    return Response(
        challenge_body(challenge, error=error, detail=detail, base=base),
        status=402,
        headers={PAYMENT_REQUIRED_HEADER: challenge_header(challenge, error)},
    )
