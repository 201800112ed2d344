"""The discovery views besides the free GETs of agents/urls.py's route table: an agent-framework
pack's SKILL.md (plain text) and the marketplace's execute."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import NotFound, ProductUnavailable
from a2a_service.core.inputs import parse_body
from a2a_service.core.schemas import ErrorOut, HTTPValidationError, ProductUnavailableOut
from a2a_service.core.views import ApiView, base_url, ok
from agents.discovery import schemas as s
from agents.discovery.documents import pack_skill_md
from agents.discovery.marketplace import MARKETPLACE_CAPABILITIES
from catalog.api.bodies import MarketplaceExecuteBody
from catalog.selectors import market, telemetry


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
    @extend_schema(
        tags=["marketplace"],
        summary="Execute a marketplace capability",
        description="Free capabilities run directly. Paid capabilities are paid through the listing marketplace "
        "or by the direct x402 path of their SKU; 503 when that product is not available here.",
        operation_id="marketplace_execute",
        request=MarketplaceExecuteBody,
        responses={200: s.MarketplaceExecuteOut, 422: HTTPValidationError, 503: ProductUnavailableOut},
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request, MarketplaceExecuteBody)
        free = FREE_CAPABILITIES.get(body.capability)
        if free is not None:
            result = free(base_url(request)).model_dump(mode="json", by_alias=True)
            return ok(s.MarketplaceExecuteOut(capability=body.capability, result=result))
        sku = MARKETPLACE_CAPABILITIES[body.capability]
        raise ProductUnavailable(
            f"capability {body.capability} is paid: buy it on {sku} through x402; marketplace-paid execution "
            "is not available on this deployment",
            extra={"sku": sku, "charged": False},
        )
