"""Paid routes. Both the x402 paths and the X-API-Key paths are one mechanism each,
driven by tables in billing/api/urls.py. They are HTTP adapters over the payment front
(billing/front/, on HTTP in billing/api/front_http.py): it reads what the request brought,
sells the call through billing/paid_call.py and says what it came to; a refusal other than
an x402 402 reaches the one exception handler."""

from __future__ import annotations

from typing import Any, Literal

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel, Field, RootModel
from rest_framework.request import Request
from rest_framework.response import Response
from x402.http.constants import PAYMENT_REQUIRED_HEADER

from a2a_service.core.errors import PaymentRequired, ProductUnavailable, RequestValidationError
from a2a_service.core.inputs import QueryModel, parse_body, parse_query, query_parameters, query_values
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.views import ApiView, base_url
from billing.api.auth import api_key_account
from billing.api.front_http import http_answer, http_brought, http_sale
from billing.front import Refused, payment_sell
from billing.paid_call import Offer, paid_offer
from billing.rails.base import NothingToDeliver, product_available
from billing.schemas import WhaleTokenPaysNothingOut
from billing.whale import TOKEN_HEADER as WHALE_TOKEN_HEADER
from billing.x402.challenge import x402_extensions, x402_schemes
from billing.x402.fastpath import challenge_store
from catalog.products.registry import ProductFailed, RunFn, product_get
from catalog.selectors import schemas as s

# The X-API-Key routes take credits alone (the x402 paths take the front's default schemes).
CREDIT_ROUTE = ("credits",)

API_KEY_HEADER = OpenApiParameter(
    "X-API-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="API key from /api/a2a/account/register",
)
WHALE_TOKEN_PARAMETER = OpenApiParameter(
    WHALE_TOKEN_HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="a whale token (POST /api/a2a/account/whale/token): the account's tier rate limit; it pays "
    "for nothing (alone on a paid route: 402 with how to pay). Expired, revoked or forged: 401",
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


class X402PaidView(ApiView):
    """GET on /api/a2a/x402/<sku path>: HTTP 402 until paid, then the product's content.

    Inputs are validated and the product is checked before any payment is looked at
    (paid_offer); the proof is checked locally (x402_payment); then paid_call holds, runs,
    settles or releases (billing/rails/x402.py says in which order, and why)."""

    sku_name: str = ""
    metric = "challenge"
    # No HEAD: Django would answer it with get(), which settles a payment proof or debits
    # credits for a response whose body is then dropped. 405 with Allow: GET, OPTIONS.
    http_method_names = ["get", "options"]

    def get(self, request: Request) -> Response:
        base = base_url(request)
        offer = paid_offer(product=self.sku_name, params=query_values(request), base_url=base)
        result = payment_sell(brought=http_brought(request), sale=http_sale(request, offer))
        response = http_answer(result, base=base)
        if isinstance(result, Refused) and result.kind == "unpaid":
            self.count_hit(offer.name)
            if not request.headers.get("Origin") and _query_is_canonical(request, offer):
                challenge_store(
                    host=request.get_host(),
                    path=request.path,
                    query=request.META.get("QUERY_STRING", ""),
                    sku=offer.name,
                    header=response[PAYMENT_REQUIRED_HEADER],
                    body=response.data,
                    availability_checked=offer.product.available is not None,
                )
        return response


def _query_is_canonical(request: Request, offer: Offer) -> bool:
    """Store a challenge only under the query it depends on, so that made-up query strings
    cannot fill Redis with copies."""
    params = offer.product.params
    allowed = set(params.model_fields) if params else set()
    keys = list(request.query_params.keys())
    return set(keys) <= allowed and all(len(request.query_params.getlist(k)) == 1 for k in keys)


class SettlementCollectOut(BaseModel):
    method: str
    url: str
    header: str


class SettlementStatusLinkOut(BaseModel):
    method: str
    url: str = Field(description="GET /api/a2a/x402/settlement?payer=&nonce= (free): state and current transaction")


class SettlementPendingOut(BaseModel):
    detail: str
    code: Literal["settlement_pending"]
    sku: str | None
    transaction: str = Field(
        description="settlement transaction hash as last known; empty when not yet known. It may be replaced "
        "(re-sent with more gas) before it is mined: `status` shows the current one"
    )
    network: str
    payer: str
    nonce: str = Field(description="the EIP-3009 authorization's nonce: with payer, the payment's identity")
    retry_after: int
    collect: SettlementCollectOut
    status: SettlementStatusLinkOut


def content_response(product_sku: str | None, description: str = "the product's content") -> OpenApiResponse:
    """The documented 200 answer of a route selling this product: its output model when it
    declares one (Product.output), else an object."""
    product = product_get(product_sku) if product_sku else None
    if product is not None and product.output is not None:
        return OpenApiResponse(product.output, description=description)
    if product is None:
        # Coming soon: the route answers 503 uncharged until the product is built, and its
        # spec's output model documents this answer from then on.
        description = "not built yet: this route answers 503 (nothing charged) until the product is built"
    return OpenApiResponse({"type": "object"}, description=description)


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
        f"a body. x402 schemes a 402 may offer (version 2): {', '.join(x402_schemes())}; extensions it may "
        f"declare: {', '.join(x402_extensions()) or 'none'} (per resource: /.well-known/x402).",
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
            OpenApiParameter(
                "SIGN-IN-WITH-X",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="instead of paying: the 402's sign-in-with-x message signed by the wallet "
                "(x402 SDK clients send it; base64 JSON). What the wallet owns comes free, else its "
                "verified credit account pays; one call per signed message",
            ),
            WHALE_TOKEN_PARAMETER,
            IDEMPOTENCY_KEY_HEADER,
        ],
        responses={
            200: content_response(sku_name),
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


class CreditRefusal(RootModel[s.InsufficientCreditOut | WhaleTokenPaysNothingOut]):
    """402 on an X-API-Key route: not enough credit, or only a whale token (which pays nothing)."""


class CreditRouteView(ApiView):
    """An X-API-Key route: authenticate, validate, run the product, debit its price."""

    product_sku: str | None = None
    query_model: type[QueryModel] | None = None
    body_model: type[BaseModel] | None = None
    # The route's free tier (CreditRoute.free): served to a caller who does not pay here.
    free_run: RunFn | None = None
    metric = "credit"
    deprecated: bool = False
    successor: str = ""

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.deprecated:
            # Every answer of a deprecated route (refusals too) says so, and where to go instead:
            # `Deprecation: true` (RFC 9745 would want the date it was deprecated, which nobody
            # recorded) and an RFC 8288 link to the successor.
            response["Deprecation"] = "true"
            if self.successor:
                response["Link"] = f'<{base_url(request)}{self.successor}>; rel="successor-version"'
        return response

    def handle(self, request: Request, **path: Any) -> Response:
        free = self.free_run
        if (
            free is not None
            and self.product_sku is not None
            and not request.headers.get("X-API-Key", "").strip()
        ):
            # The route's free tier: a caller without a key gets the free content, uncharged.
            return free_serve(free, self._offer(request, path))
        if (
            self.product_sku is not None
            and not request.headers.get("X-API-Key", "").strip()
            and request.headers.get(WHALE_TOKEN_HEADER, "").strip()
        ):
            # A whale token (checked by the rate limiter before this view) pays for nothing.
            if self.query_model:
                parse_query(request, self.query_model)
            if self.body_model:
                parse_body(request, self.body_model)
            offer = self._offer(request, path)
            product_available(offer)  # nothing to deliver: 503, not how to pay
            raise whale_token_pays_nothing(offer)
        api_key_account(request)  # 401 before anything about the call
        if self.query_model:
            parse_query(request, self.query_model)
        body = parse_body(request, self.body_model) if self.body_model else None
        if self.product_sku is None:
            raise ProductUnavailable(
                "this product is not available yet; nothing was charged",
                extra={"sku": None, "charged": False},
            )
        offer = self._offer(request, path, body)
        if free is None:
            return credit_serve(request=request, offer=offer)
        try:
            return credit_serve(request=request, offer=offer)
        except (PaymentRequired, NothingToDeliver):
            # Not enough credit (nothing was charged; NothingToDeliver: and the paid content
            # has nothing to deliver anyway): the free tier instead of a 402 or a 503.
            return free_serve(free, offer)

    def _offer(self, request: Request, path: dict[str, Any], body: BaseModel | None = None) -> Offer:
        params: dict[str, Any]
        if body is not None:
            # A POST route whose JSON body is the request: the body's fields are the product's
            # parameters (validated again by its params model; errors at loc ["body", field]).
            params, where = body.model_dump(exclude_unset=True), "body"
        elif "news_id" in path:
            params, where = {"news_id": _news_id(path["news_id"])}, "path"
        else:
            params, where = query_values(request), "query"
        assert self.product_sku is not None  # routes without a product answer 503 before
        return paid_offer(
            product=self.product_sku, params=params, base_url=base_url(request), params_in=where
        )


def whale_token_pays_nothing(offer: Offer) -> PaymentRequired:
    """402 for a paid call that carries only a whale token: how to pay for it."""
    return PaymentRequired(
        f"a whale token gives the tier's rate limit, it does not pay: this call costs "
        f"{usdc_from_atomic(offer.price):g} USDC. Send X-API-Key to pay from prepaid credits (with the token "
        "or instead of it), or pay per call with x402 on the product's path.",
        extra={
            "code": "whale_token_pays_nothing",
            "price_usdc": usdc_from_atomic(offer.price),
            "x402_alternative": offer.sku.path if offer.sku is not None else None,
            "topup": {
                "register_endpoint": "/api/a2a/account/register",
                "topup_info": "/api/a2a/account/topup-info",
                "header": "X-API-Key",
            },
        },
    )


def free_serve(free: RunFn, offer: Offer) -> Response:
    """A route's free tier: the product's free content for an offer, charged to nobody."""
    try:
        content = free(offer.call)
    except ProductFailed as exc:
        raise ProductUnavailable(str(exc), extra={"sku": offer.name, "charged": False}) from exc
    return Response(content, headers={"X-Tier": "free"})


def credit_serve(*, request: Request, offer: Offer) -> Response:
    """Run the offer's product for the request's credit account and debit its price,
    atomically: the debit, the product and the ledger row commit together or not at all."""
    result = payment_sell(brought=http_brought(request), sale=http_sale(request, offer, accepts=CREDIT_ROUTE))
    return http_answer(result, base=base_url(request))


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
    successor: str = "",
    header_optional_null: bool = False,
    free: RunFn | None = None,
) -> type[CreditRouteView]:
    def handler(self: CreditRouteView, request: Request, **path: Any) -> Response:
        return self.handle(request, **path)

    schema = extend_schema(
        tags=[tag],
        summary=summary,
        description=(
            "Free tier: without X-API-Key, or when the key's credit does not cover the price, the answer is "
            "the free content (header X-Tier: free), charged to nobody; with enough credit, the full content "
            "and its price debited."
            if free is not None
            else None
        ),
        operation_id=name,
        deprecated=deprecated,
        request=body,
        parameters=[
            *(query_parameters(query) if query else []),
            API_KEY_HEADER,
            WHALE_TOKEN_PARAMETER,
            IDEMPOTENCY_KEY_HEADER,
        ],
        responses={
            200: content_response(product_sku),
            401: s.UnauthorizedOut,
            402: OpenApiResponse(
                CreditRefusal,
                description="not enough credit: balance, price, top-up steps; or (whale_token_pays_nothing) "
                "only an X-Whale-Token was sent: it raises the rate limit, it does not pay",
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
            "deprecated": deprecated,
            "successor": successor,
            "free_run": staticmethod(free) if free is not None else None,
            "http_method_names": [method.lower(), "options"],
            method.lower(): schema(handler),
        },
    )
