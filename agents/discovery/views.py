"""The discovery views besides the free GETs of agents/urls.py's route table: an agent-framework
pack's SKILL.md (plain text) and the marketplace's execute."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import NotFound
from a2a_service.core.inputs import parse_body
from a2a_service.core.schemas import ErrorOut, HTTPValidationError, PaymentRequiredOut, ProductUnavailableOut
from a2a_service.core.views import ApiView, base_url, ok
from agents.discovery import schemas as s
from agents.discovery.documents import pack_skill_md
from agents.discovery.marketplace import MARKETPLACE_CAPABILITIES
from agents.discovery.status import HUB
from agents.models import AgentInteraction
from agents.services import agent_interaction_record
from billing.api.front_http import http_answer, http_brought, http_sale, receipt_headers
from billing.front import Sold, payment_sell
from billing.paid_call import paid_offer
from catalog.api.bodies import MarketplaceExecuteBody
from catalog.selectors import market, telemetry

logger = logging.getLogger(__name__)


class AgentFrameworkPackView(ApiView):
    @extend_schema(
        tags=["discovery"],
        summary="SKILL.md of one agent-framework pack (plain text)",
        operation_id="agent_framework_pack",
        responses={
            (200, "text/markdown"): OpenApiResponse(
                {"type": "string"}, description="SKILL.md text that teaches an agent to call this service"
            ),
            404: ErrorOut,
        },
    )
    def get(self, request: Request, pack_id: str) -> HttpResponse:
        text = pack_skill_md(base_url(request), pack_id)
        if text is None:
            raise NotFound(f"unknown agent-framework pack {pack_id!r}")
        self.count_hit("pack")
        return HttpResponse(text, content_type="text/markdown; charset=utf-8")


FREE_CAPABILITIES: dict[str, Callable[[str], BaseModel]] = {
    "telemetry_status": telemetry.telemetry_status,
    "news_catalog": lambda base: market.news_catalog(base, limit=40, category=""),
    "exchange_market_discovery": market.exchange_markets,
    "tokenized_watchlist": market.tokenized_watchlist,
    "market_agent_news": lambda base: market.market_agent_news(base, limit=20),
}


class MarketplaceExecuteView(ApiView):
    """Every answer, whatever its outcome (200, 402, 422, 503), is recorded as one of the hub's
    (agent "agenthub", surface "marketplace"): the hub's status is measured from them."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        self._started = time.perf_counter()
        self._capability = ""
        return super().dispatch(request, *args, **kwargs)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method == "POST":
            try:
                agent_interaction_record(
                    agent=HUB,
                    surface=AgentInteraction.Surface.MARKETPLACE,
                    status_code=response.status_code,
                    latency_ms=round((time.perf_counter() - self._started) * 1000),
                    skill=self._capability,
                )
            except Exception:  # recording must never fail the answer it records
                logger.exception("marketplace: could not record the answer")
        return response

    @extend_schema(
        tags=["marketplace"],
        summary="Execute a marketplace capability",
        description="Free capabilities run directly. A paid capability runs its SKU's product, paid like the "
        "SKU's own routes: X-API-Key (credits) or an x402 proof on this request; unpaid, 402 with the "
        "challenge and the other ways to pay; 503 uncharged when the product has nothing fresh to sell.",
        operation_id="marketplace_execute",
        request=MarketplaceExecuteBody,
        responses={
            200: s.MarketplaceExecuteOut,
            402: PaymentRequiredOut,
            422: HTTPValidationError,
            503: ProductUnavailableOut,
        },
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request, MarketplaceExecuteBody)
        self._capability = body.capability
        free = FREE_CAPABILITIES.get(body.capability)
        if free is not None:
            result = free(base_url(request)).model_dump(mode="json", by_alias=True)
            return ok(s.MarketplaceExecuteOut(capability=body.capability, result=result))
        sku = MARKETPLACE_CAPABILITIES[body.capability]
        assert sku is not None  # a capability is free or sold by a SKU
        return marketplace_paid(request, capability=body.capability, sku=sku, params=body.params)


def marketplace_paid(request: Request, *, capability: str, sku: str, params: dict[str, Any]) -> Response:
    """A paid capability runs its product through the payment front (billing/front/), like the
    SKU's own routes: X-API-Key debits credits, an x402 proof settles; without either, 402 with
    the challenge and the other ways to pay. The product's content is the result."""
    base = base_url(request)
    offer = paid_offer(product=sku, params=params, base_url=base, params_in="body")
    price = offer.price
    asking = (
        f"capability {capability} runs {sku}: it costs {price} atomic USDC; pay it "
        f"and retry (or buy it directly at {base}{offer.product.full_path})"
    )
    result = payment_sell(
        brought=http_brought(request), sale=http_sale(request, offer, asking=asking)
    )
    if not isinstance(result, Sold):
        return http_answer(result, base=base)
    out = s.MarketplaceExecuteOut(capability=capability, result=result.content)
    return Response(out.model_dump(mode="json", by_alias=True), headers=receipt_headers(result.charge))
