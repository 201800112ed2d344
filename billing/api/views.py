"""Paid routes. Both the x402 paths and the X-API-Key paths are one mechanism each,
driven by tables in billing/api/urls.py; each runs the SKU's registered product."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import QueryDict
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response
from x402.http.constants import PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER, X_PAYMENT_RESPONSE_HEADER
from x402.http.utils import encode_payment_response_header

from a2a_service.core.errors import NotFound, PaymentRequired, ProductUnavailable, RequestValidationError
from a2a_service.core.inputs import QueryModel, parse_body, parse_query, query_parameters
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.views import ApiView, base_url
from billing.api.auth import api_key_account
from billing.credits import InsufficientCredit, credit_call_commit_relax, credit_debit
from billing.models import BillingSettings, IdempotentCall, NewsUnlock
from billing.x402.challenge import Challenge, challenge_body, challenge_build, challenge_header
from billing.x402.fastpath import challenge_store
from billing.x402.paid_call import x402_call, x402_payment_of
from billing.x402.proof import PaymentRejected, proof_check, proof_decode, proof_header
from catalog.api import schemas as s
from catalog.models import Sku
from catalog.products.registry import ProductCall, ProductFailed, product_get

API_KEY_HEADER = OpenApiParameter(
    "X-API-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="API key from /api/a2a/account/register",
)
IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "maxLength": 200},
    OpenApiParameter.HEADER,
    required=False,
    description="with X-API-Key: a retry with the same key and the same call (method, path, query, body) "
    "replays the first answer without charging again; the same key on another call is refused "
    "(422 idempotency_key_reused)",
)


def sku_on_sale(name: str) -> Sku:
    sku = Sku.objects.filter(sku=name).first()
    if sku is None or not sku.is_live:
        raise NotFound(f"SKU {name} is not for sale")
    return sku


def product_prepare(sku: Sku, request: Request, base: str) -> tuple[Any, ProductCall, int]:
    """Everything that must hold before any payment: the product exists, the parameters
    are valid, the item exists. Returns the product, the call and the price to charge."""
    product = product_get(sku.sku)
    if product is None:
        raise ProductUnavailable(
            f"{sku.sku} is not available yet; nothing was charged", extra={"sku": sku.sku, "charged": False}
        )
    params = parse_query(request, product.params) if product.params else None
    call = ProductCall(sku=sku, params=params, base_url=base)
    price = product.price_for(call) if product.price_for else None
    return product, call, sku.price_atomic if price is None else price


class X402PaidView(ApiView):
    """GET on /api/a2a/x402/<sku path>: HTTP 402 until paid, then the product's content.

    Inputs are validated and the product is checked before any payment is looked at; the
    proof is checked locally; then billing.x402.paid_call.x402_call holds, runs, settles or
    releases (its docstring says in which order, and why)."""

    sku_name: str = ""
    metric = "challenge"
    # No HEAD: Django would answer it with get(), which settles a payment proof or debits
    # credits for a response whose body is then dropped. 405 with Allow: GET, OPTIONS.
    http_method_names = ["get", "options"]

    def get(self, request: Request) -> Response:
        sku = sku_on_sale(self.sku_name)
        base = base_url(request)
        product, call, price = product_prepare(sku, request, base)
        challenge = challenge_build(
            sku=sku.sku,
            description=sku.headline,
            price_atomic=price,
            resource_url=request.build_absolute_uri(),
        )
        raw = proof_header(request)
        if raw is None and request.headers.get("X-API-Key"):
            # The credit route on the same path: same product, paid from prepaid credits.
            return credit_serve(request=request, account=api_key_account(request), sku=sku, path_params=None)
        if raw is None:
            self.count_hit(sku.sku)
            response = payment_required(
                challenge,
                base,
                "payment_required",
                f"this resource costs {challenge.price_atomic} atomic USDC; pay it and retry",
            )
            if not request.headers.get("Origin") and _query_is_canonical(request, product):
                challenge_store(
                    host=request.get_host(),
                    path=request.path,
                    query=request.META.get("QUERY_STRING", ""),
                    sku=sku.sku,
                    header=response[PAYMENT_REQUIRED_HEADER],
                    body=response.data,
                )
            return response
        try:
            payload = proof_decode(raw)
            paid = x402_payment_of(payload, sku)
            if paid is not None:
                # A proof that already paid for this SKU (pending, or settled and not yet
                # delivered): check it against what it paid, not today's price or clock.
                challenge = challenge_build(
                    sku=sku.sku,
                    description=sku.headline,
                    price_atomic=paid.amount_atomic,
                    resource_url=request.build_absolute_uri(),
                )
            proof = proof_check(payload, challenge, check_window=paid is None)
            call.payer = proof.payer
            result = x402_call(sku=sku, product=product, call=call, challenge=challenge, proof=proof)
        except PaymentRejected as exc:
            return payment_required(challenge, base, exc.reason, exc.message)
        headers = {PAYMENT_RESPONSE_HEADER: encode_payment_response_header(result.settlement)}
        if proof.version == 1:
            headers[X_PAYMENT_RESPONSE_HEADER] = headers[PAYMENT_RESPONSE_HEADER]
        return Response(result.content, headers=headers)


def _query_is_canonical(request: Request, product: Any) -> bool:
    """Store a challenge only under the query it depends on, so that made-up query strings
    cannot fill Redis with copies."""
    allowed = set(product.params.model_fields) if product.params else set()
    keys = list(request.query_params.keys())
    return set(keys) <= allowed and all(len(request.query_params.getlist(k)) == 1 for k in keys)


def payment_required(challenge: Challenge, base: str, error: str, detail: str) -> Response:
    return Response(
        challenge_body(challenge, error=error, detail=detail, base=base),
        status=402,
        headers={PAYMENT_REQUIRED_HEADER: challenge_header(challenge, error)},
    )


class SettlementCollectOut(BaseModel):
    method: str
    url: str
    header: str


class SettlementPendingOut(BaseModel):
    detail: str
    code: Literal["settlement_pending"]
    sku: str | None
    transaction: str = Field(description="settlement transaction hash; empty when not yet known")
    network: str
    payer: str
    retry_after: int
    collect: SettlementCollectOut


def x402_view(sku_name: str, headline: str, params: type[QueryModel] | None) -> type[X402PaidView]:
    def get(self: X402PaidView, request: Request) -> Response:
        return X402PaidView.get(self, request)

    schema = extend_schema(
        tags=["x402"],
        summary=headline,
        operation_id=f"x402_{sku_name}",
        description=f"Paid SKU `{sku_name}`. Unpaid calls answer 402 with the payment requirements "
        "(PAYMENT-REQUIRED header, x402 v2; JSON body, x402 v1). Retry with PAYMENT-SIGNATURE or X-PAYMENT "
        f"(at most {settings.PAYMENT_HEADER_MAX_BYTES} bytes; a longer or malformed header is refused as 402 "
        "invalid_payload). HEAD is not answered (405): nothing is paid or charged for a response without "
        "a body.",
        parameters=[
            *(query_parameters(params) if params else []),
            OpenApiParameter(
                "PAYMENT-SIGNATURE",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="x402 v2 payment payload, base64 JSON",
            ),
            OpenApiParameter(
                "X-PAYMENT",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="x402 v1 payment payload, base64 JSON",
            ),
            OpenApiParameter(
                "X-API-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="instead of x402: debit the price from prepaid credits",
            ),
            IDEMPOTENCY_KEY_HEADER,
        ],
        responses={
            200: OpenApiResponse({"type": "object"}, description="the product's content"),
            202: OpenApiResponse(
                SettlementPendingOut,
                description="paid, settlement not confirmed yet (see Retry-After): send the same request with "
                "the same payment header again to collect the content once it confirms; nothing is lost",
            ),
            401: s.UnauthorizedOut,
            402: OpenApiResponse(
                s.X402PathRefusal,
                description="payment required, the proof was refused, or (with X-API-Key) not enough credit",
            ),
            404: s.ErrorOut,
            422: s.HTTPValidationError,
            429: OpenApiResponse(s.RateLimitedOut, description="rate limited; see Retry-After"),
            503: OpenApiResponse(
                s.PaidCallUnavailable,
                description="the product is not available yet (nothing charged), or the charge could not be "
                "confirmed (charge_unconfirmed: see the ledger reference before retrying)",
            ),
        },
    )
    return type(
        f"X402{sku_name.title().replace('_', '')}View",
        (X402PaidView,),
        {"sku_name": sku_name, "get": schema(get)},
    )


class CreditRouteView(ApiView):
    """An X-API-Key route: authenticate, validate, run the product, debit its price."""

    product_sku: str | None = None
    query_model: type[QueryModel] | None = None
    body_model: type[BaseModel] | None = None
    metric = "credit"

    def handle(self, request: Request, **path: Any) -> Response:
        account = api_key_account(request)
        if self.query_model:
            parse_query(request, self.query_model)
        if self.body_model:
            parse_body(request, self.body_model)
        params = {"news_id": _news_id(path["news_id"])} if "news_id" in path else None
        if self.product_sku is None:
            raise ProductUnavailable(
                "this product is not available yet; nothing was charged",
                extra={"sku": None, "charged": False},
            )
        sku = sku_on_sale(self.product_sku)
        return credit_serve(request=request, account=account, sku=sku, path_params=params)


def credit_serve(*, request: Request, account: Any, sku: Sku, path_params: dict[str, Any] | None) -> Response:
    """Run the SKU's product for a credit account and debit its price, atomically: the
    debit, the product and the ledger row commit together or not at all."""
    product = product_get(sku.sku)
    if product is None:
        raise ProductUnavailable(
            f"{sku.sku} is not available yet; nothing was charged", extra={"sku": sku.sku, "charged": False}
        )
    params: QueryModel | None
    if path_params is not None and product.params is not None:
        params = product.params.model_validate(path_params)
    else:
        params = parse_query(request, product.params) if product.params else None
    call = ProductCall(
        sku=sku, params=params, base_url=base_url(request), payer=account.wallet_address, account=account
    )
    price = product.price_for(call) if product.price_for else None
    price = sku.price_atomic if price is None else price
    news_id = getattr(params, "news_id", None) if sku.sku == "news_unlock" else None
    if news_id is not None and NewsUnlock.objects.filter(account=account, news_item_id=news_id).exists():
        price = 0  # unlocked before: free again
    idempotency_key = _idempotency_key(request)
    fingerprint = call_fingerprint(request) if idempotency_key else ""
    if idempotency_key:
        done = IdempotentCall.objects.filter(account=account, key=idempotency_key).first()
        if done is not None:
            return _replay(done, fingerprint)
    charge = price if BillingSettings.load().credit_billing_enabled else 0
    try:
        with transaction.atomic():
            balance = account.credit_balance_atomic
            if charge:
                credit_call_commit_relax()
                balance = credit_debit(
                    account_id=account.id, amount_atomic=charge, sku_id=sku.id, reference=request.path
                )
            content = product.run(call)
            if news_id is not None:
                NewsUnlock.objects.get_or_create(account=account, news_item_id=news_id)
            headers = {
                "X-Credit-Charged": f"{usdc_from_atomic(charge):g}",
                "X-Credit-Balance": f"{usdc_from_atomic(balance):g}",
            }
            if idempotency_key:
                IdempotentCall.objects.create(
                    account=account,
                    key=idempotency_key,
                    path=request.path[:300],
                    fingerprint=fingerprint,
                    status_code=200,
                    body=content,
                    headers=headers,
                )
    except InsufficientCredit as exc:
        raise PaymentRequired(
            f"not enough credit: {usdc_from_atomic(exc.balance_atomic):g} USDC for a price of "
            f"{usdc_from_atomic(exc.price_atomic):g} USDC",
            extra={
                "code": "insufficient_credit",
                "balance_usdc": usdc_from_atomic(exc.balance_atomic),
                "price_usdc": usdc_from_atomic(exc.price_atomic),
                "topup": {
                    "topup_info": "/api/a2a/account/topup-info",
                    "treasury_address": settings.TREASURY_ADDRESS,
                    "min_deposit_usdc": BillingSettings.load().min_deposit_usdc,
                    "steps": "send USDC from your registered wallet to the treasury; it is credited after "
                    "its confirmations (see /api/a2a/account)",
                },
                "x402_alternative": sku.path,
            },
        ) from None
    except ProductFailed as exc:
        raise ProductUnavailable(str(exc), extra={"sku": sku.sku, "charged": False}) from exc
    except IntegrityError:
        # The same Idempotency-Key committed first in a concurrent request: answer as it did.
        done = IdempotentCall.objects.get(account=account, key=idempotency_key)
        return _replay(done, fingerprint)
    return Response(content, headers=headers)


IDEMPOTENCY_KEY_MAX = 200


def _idempotency_key(request: Request) -> str:
    key = request.headers.get("Idempotency-Key", "").strip()
    if len(key) > IDEMPOTENCY_KEY_MAX:
        # Not truncated: two long keys sharing their first characters must not be one key.
        raise RequestValidationError.single(
            ["header", "Idempotency-Key"],
            f"String should have at most {IDEMPOTENCY_KEY_MAX} characters",
            "string_too_long",
        )
    return key


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


def _replay(done: IdempotentCall, fingerprint: str) -> Response:
    """The stored answer, if the key was first sent with this same call; a key reused for
    another call would otherwise be answered with that call's (paid) content."""
    if done.fingerprint != fingerprint:
        raise RequestValidationError.single(
            ["header", "Idempotency-Key"],
            f"this Idempotency-Key was first used for another call ({done.path} or other parameters); "
            "nothing was charged. Send a new key for a new call.",
            "idempotency_key_reused",
        )
    return Response(done.body, status=done.status_code, headers=done.headers)


def _news_id(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise RequestValidationError.single(
            ["path", "news_id"], "Input should be a valid integer", "int_parsing"
        ) from None
    if value < 1:
        raise RequestValidationError.single(
            ["path", "news_id"], "Input should be greater than 0", "greater_than"
        )
    if value > 2**63 - 1:
        raise RequestValidationError.single(
            ["path", "news_id"],
            "Input should be less than or equal to 9223372036854775807",
            "less_than_equal",
        )
    return value


def credit_view(
    *,
    method: str,
    name: str,
    summary: str,
    tag: str,
    product_sku: str | None = None,
    query: type[QueryModel] | None = None,
    body: type[BaseModel] | None = None,
    deprecated: bool = False,
    header_optional_null: bool = False,
) -> type[CreditRouteView]:
    def handler(self: CreditRouteView, request: Request, **path: Any) -> Response:
        return self.handle(request, **path)

    schema = extend_schema(
        tags=[tag],
        summary=summary,
        operation_id=name,
        deprecated=deprecated,
        request=body,
        parameters=[*(query_parameters(query) if query else []), API_KEY_HEADER, IDEMPOTENCY_KEY_HEADER],
        responses={
            200: OpenApiResponse({"type": "object"}, description="the product's content"),
            401: s.UnauthorizedOut,
            402: OpenApiResponse(
                s.InsufficientCreditOut, description="not enough credit: balance, price, top-up steps"
            ),
            404: s.ErrorOut,
            422: s.HTTPValidationError,
            429: OpenApiResponse(s.RateLimitedOut, description="rate limited; see Retry-After"),
            503: OpenApiResponse(
                s.PaidCallUnavailable,
                description="the product is not available yet (nothing charged), or the charge could not be "
                "confirmed (charge_unconfirmed: see the ledger reference before retrying)",
            ),
        },
    )
    return type(
        f"Credit{name.title().replace('_', '')}View",
        (CreditRouteView,),
        {
            "product_sku": product_sku,
            "query_model": query,
            "body_model": body,
            "http_method_names": [method.lower(), "options"],
            method.lower(): schema(handler),
        },
    )
