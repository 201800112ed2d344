"""Paid routes. Both the x402 paths and the X-API-Key paths are one mechanism each,
driven by tables in billing/api/urls.py; each runs the SKU's registered product."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response

from billing.api.auth import api_key_account
from billing.routes import route_available
from catalog.api import schemas as s
from catalog.api.bodies import A2aRegisterBody
from catalog.api.errors import NotFound, ProductUnavailable, RequestValidationError
from catalog.api.inputs import QueryModel, parse_body, parse_query, query_parameters
from catalog.api.views import ApiView, base_url
from catalog.models import Sku
from catalog.products.registry import ProductCall, product_get

API_KEY_HEADER = OpenApiParameter(
    "X-API-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="API key from /api/a2a/account/register",
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
    """GET on /api/a2a/x402/<sku path>: HTTP 402 until paid."""

    sku_name: str = ""
    metric = "challenge"

    def get(self, request: Request) -> Response:
        sku = sku_on_sale(self.sku_name)
        product_prepare(sku, request, base_url(request))
        if not route_available("x402"):
            raise ProductUnavailable(
                "x402 payments are not accepted by this deployment yet; nothing was charged",
                extra={"sku": sku.sku, "charged": False},
            )
        raise ProductUnavailable("unreachable", extra={"sku": sku.sku})


def x402_view(sku_name: str, headline: str, params: type[QueryModel] | None) -> type[X402PaidView]:
    def get(self: X402PaidView, request: Request) -> Response:
        return X402PaidView.get(self, request)

    schema = extend_schema(
        tags=["x402"],
        summary=headline,
        operation_id=f"x402_{sku_name}",
        description=f"Paid SKU `{sku_name}`. Unpaid calls answer 402 with the payment requirements "
        "(PAYMENT-REQUIRED header, x402 v2; JSON body, x402 v1). Retry with PAYMENT-SIGNATURE or X-PAYMENT.",
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
        ],
        responses={
            200: OpenApiResponse({"type": "object"}, description="the product's content"),
            402: OpenApiResponse({"type": "object"}, description="payment required: x402 requirements"),
            404: s.ErrorOut,
            422: s.HTTPValidationError,
            503: s.ProductUnavailableOut,
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
        api_key_account(request)
        if self.query_model:
            parse_query(request, self.query_model)
        if self.body_model:
            parse_body(request, self.body_model)
        if "news_id" in path:
            _news_id(path["news_id"])
        raise ProductUnavailable(
            "this credit route is not available yet; nothing was charged",
            extra={"sku": self.product_sku, "charged": False},
        )


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
        parameters=[*(query_parameters(query) if query else []), API_KEY_HEADER],
        responses={
            200: OpenApiResponse({"type": "object"}, description="the product's content"),
            401: s.UnauthorizedOut,
            402: OpenApiResponse(
                {"type": "object"}, description="not enough credit: balance, price, top-up steps"
            ),
            404: s.ErrorOut,
            422: s.HTTPValidationError,
            503: s.ProductUnavailableOut,
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


class AccountRegisterView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Register a wallet for prepaid credits",
        operation_id="account_register",
        request=A2aRegisterBody,
        responses={
            201: OpenApiResponse({"type": "object"}),
            409: s.ErrorOut,
            422: s.HTTPValidationError,
            503: s.ProductUnavailableOut,
        },
    )
    def post(self, request: Request) -> Response:
        parse_body(request, A2aRegisterBody)
        raise ProductUnavailable(
            "credit accounts are not open on this deployment yet; pay per call with x402 instead",
            extra={"sku": None, "charged": False},
        )
