"""Free endpoints. One mechanism: a FreeView subclass per operation, generated from
the route table in catalog/api/urls.py (path -> selector -> response model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import ProductUnavailable, Unauthorized
from a2a_service.core.fastcache import ENVIRON_FIELD
from a2a_service.core.inputs import QueryModel, parse_body, parse_query, query_parameters
from a2a_service.core.views import ERRORS_COMMON, ApiView, base_url, ok
from catalog import selectors
from catalog.api import schemas as s
from catalog.api.bodies import MarketplaceExecuteBody, SpreadSnapshotIngest
from catalog.models import SpreadSnapshot
from catalog.signals import spreads_ingested

# Free documents whose answer depends only on the shop's data (rows and settings), never on
# the clock, the caller or live probes: their 200 answers are stored and served in front of
# Django (a2a_service/core/fastcache.py) until a write changes them. tests/test_free_fastpath.py checks
# that none of them reads a table whose writes do not invalidate them.
CACHEABLE_ROUTES = frozenset(
    {
        ".well-known/agent.json",
        ".well-known/x402",
        "api/a2a/ai-agent.json",
        "api/a2a/news/catalog",
        "api/a2a/equity/catalog",
        "api/a2a/teaser/<str:name>",
        "api/a2a/agents/catalog",
        "api/a2a/mcp/catalog",
        "api/a2a/discovery/agent-frameworks",
        "api/a2a/discovery/integrations",
        "api/a2a/partner/catalog",
        "api/a2a/account/whale/catalog",
    }
)


class FreeView(ApiView):
    selector: Callable[..., BaseModel]
    query_model: type[QueryModel] | None = None

    def get(self, request: Request, **path_params: Any) -> Response:
        query = parse_query(request, self.query_model).model_dump() if self.query_model else {}
        payload = type(self).selector(base_url(request), **path_params, **query)
        route = request.resolver_match.route if request.resolver_match else request.path
        self.count_hit(route)
        if route in CACHEABLE_ROUTES:
            # The WSGI layer in front stores this answer (if it is a 200 without cookies) and
            # counts the hits it serves under the same counter field.
            request.META[ENVIRON_FIELD] = f"{self.metric}|{route[:120]}"
        return ok(payload)


def free_view(
    selector: Callable[..., BaseModel],
    response: type[BaseModel],
    *,
    tag: str,
    summary: str,
    query: type[QueryModel] | None = None,
    metric: str = "hit",
    operation_id: str | None = None,
) -> type[FreeView]:
    responses: dict[int, Any] = {200: response, **ERRORS_COMMON}

    def get(self: FreeView, request: Request, **path_params: Any) -> Response:
        return FreeView.get(self, request, **path_params)

    attrs = {
        "selector": staticmethod(selector),
        "query_model": query,
        "metric": metric,
        "get": extend_schema(
            tags=[tag],
            summary=summary,
            responses=responses,
            parameters=query_parameters(query) if query else None,
            operation_id=operation_id,
        )(get),
    }
    return type(f"{selector.__name__.title().replace('_', '')}View", (FreeView,), attrs)


class AgentFrameworkPackView(ApiView):
    @extend_schema(
        tags=["discovery"],
        summary="SKILL.md of one agent-framework pack (plain text)",
        operation_id="agent_framework_pack",
        responses={
            (200, "text/markdown"): OpenApiResponse(
                {"type": "string"}, description="SKILL.md text that teaches an agent to call this service"
            ),
            404: s.ErrorOut,
        },
    )
    def get(self, request: Request, pack_id: str) -> HttpResponse:
        text = selectors.pack_skill_md(base_url(request), pack_id)
        self.count_hit("pack")
        return HttpResponse(text, content_type="text/markdown; charset=utf-8")


class SpreadSnapshotIngestView(ApiView):
    """Internal: a spread radar pushes readings here with X-Ingest-Token."""

    @extend_schema(
        tags=["market-data"],
        summary="Ingest a spread snapshot (internal, X-Ingest-Token)",
        operation_id="internal_spread_snapshot_ingest",
        request=SpreadSnapshotIngest,
        parameters=[OpenApiParameter("X-Ingest-Token", str, OpenApiParameter.HEADER, required=True)],
        responses={201: s.SpreadSnapshotAcceptedOut, 401: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        import secrets

        from django.utils import timezone

        token = request.headers.get("X-Ingest-Token", "")
        if not settings.INGEST_TOKEN or not secrets.compare_digest(
            token.encode(), settings.INGEST_TOKEN.encode()
        ):
            raise Unauthorized("missing or wrong X-Ingest-Token")
        body = parse_body(request, SpreadSnapshotIngest)
        with transaction.atomic():
            rows = SpreadSnapshot.objects.bulk_create(
                SpreadSnapshot(
                    symbol=r.symbol,
                    venue_a=r.venue_a,
                    venue_b=r.venue_b,
                    spread_bps=round(r.spread_bps, 3),
                    captured_at=r.captured_at or timezone.now(),
                )
                for r in body.readings
            )
            # bulk_create sends no post_save: listeners hear of the rows here, in the same
            # transaction (an alert is never raised for readings that rolled back).
            spreads_ingested.send(sender=SpreadSnapshot, rows=rows)
        ids = [r.pk for r in rows if r.pk is not None]
        return ok(s.SpreadSnapshotAcceptedOut(accepted=len(rows), ids=ids), status=201)


FREE_CAPABILITIES: dict[str, Callable[[str], BaseModel]] = {
    "telemetry_status": selectors.telemetry_status,
    "news_catalog": lambda base: selectors.news_catalog(base, limit=40, category=""),
    "exchange_market_discovery": selectors.exchange_markets,
    "tokenized_watchlist": selectors.tokenized_watchlist,
    "market_agent_news": lambda base: selectors.market_agent_news(base, limit=20),
}


class MarketplaceExecuteView(ApiView):
    @extend_schema(
        tags=["marketplace"],
        summary="Execute a marketplace capability",
        description="Free capabilities run directly. Paid capabilities are paid through the listing marketplace "
        "or by the direct x402 path of their SKU; 503 when that product is not available here.",
        operation_id="marketplace_execute",
        request=MarketplaceExecuteBody,
        responses={200: s.MarketplaceExecuteOut, 422: s.HTTPValidationError, 503: s.ProductUnavailableOut},
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request, MarketplaceExecuteBody)
        free = FREE_CAPABILITIES.get(body.capability)
        if free is not None:
            result = free(base_url(request)).model_dump(mode="json", by_alias=True)
            return ok(s.MarketplaceExecuteOut(capability=body.capability, result=result))
        sku = selectors.MARKETPLACE_CAPABILITIES[body.capability]
        raise ProductUnavailable(
            f"capability {body.capability} is paid: buy it on {sku} through x402; marketplace-paid execution "
            "is not available on this deployment",
            extra={"sku": sku, "charged": False},
        )
