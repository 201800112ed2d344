"""Free GET endpoints, one mechanism for every app: a route table of FreeGet rows (path ->
selector -> response model), turned into named URL patterns. The selector returns data (a
pydantic model, or None for an unknown path parameter); the view parses the query, answers 404
for None, counts the hit and marks the answers the free-document cache may store."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import NotFound
from a2a_service.core.fastcache import ENVIRON_FIELD
from a2a_service.core.inputs import QueryModel, parse_query, query_parameters
from a2a_service.core.views import ERRORS_COMMON, ApiView, base_url, ok


@dataclass(frozen=True, kw_only=True)
class FreeGet:
    route: str
    selector: Callable[..., BaseModel | None]
    response: type[BaseModel]
    tag: str
    summary: str
    query: type[QueryModel] | None = None
    # The answer depends only on the shop's data (rows and settings), never on the clock, the
    # caller or live probes: its 200 answers are stored and served in front of Django
    # (a2a_service/core/fastcache.py) until a write changes them. tests/a2a_service/core/test_free_fastpath.py checks
    # that none of them reads a table whose writes do not invalidate them.
    cacheable: bool = False
    metric: str = "hit"
    operation_id: str = ""  # default: free_ and the route's words (free_op_id)
    # The 404 detail when the selector finds nothing, formatted with the path parameters.
    not_found: str = ""

    @property
    def op_id(self) -> str:
        return self.operation_id or free_op_id(self.route)


def free_op_id(route: str) -> str:
    words = route.replace("api/a2a/", "").replace("api/", "").replace("<str:", "").replace(">", "")
    return "free_" + words.replace("/", "_").replace("-", "_").replace(".", "_")


class FreeView(ApiView):
    selector: Callable[..., BaseModel | None]
    query_model: type[QueryModel] | None = None
    cacheable = False
    not_found = ""

    def get(self, request: Request, **path_params: Any) -> Response:
        query = parse_query(request, self.query_model).model_dump() if self.query_model else {}
        payload = type(self).selector(base_url(request), **path_params, **query)
        if payload is None:
            raise NotFound(self.not_found.format(**path_params))
        route = request.resolver_match.route if request.resolver_match else request.path
        self.count_hit(route)
        if self.cacheable:
            # The WSGI layer in front stores this answer (if it is a 200 without cookies) and
            # counts the hits it serves under the same counter field.
            request.META[ENVIRON_FIELD] = f"{self.metric}|{route[:120]}"
        return ok(payload)


def free_view(row: FreeGet) -> type[FreeView]:
    responses: dict[int, Any] = {200: row.response, **ERRORS_COMMON}

    def get(self: FreeView, request: Request, **path_params: Any) -> Response:
        return FreeView.get(self, request, **path_params)

    attrs = {
        "selector": staticmethod(row.selector),
        "query_model": row.query,
        "metric": row.metric,
        "cacheable": row.cacheable,
        "not_found": row.not_found,
        "get": extend_schema(
            tags=[row.tag],
            summary=row.summary,
            responses=responses,
            parameters=query_parameters(row.query) if row.query else None,
            operation_id=row.op_id,
        )(get),
    }
    name = f"{row.selector.__name__.title().replace('_', '')}View"
    return type(name, (FreeView,), attrs)


def free_urlpatterns(rows: Iterable[FreeGet]) -> list[URLPattern]:
    """One URL pattern per row, named by its operation id."""
    return [path(row.route, free_view(row).as_view(), name=row.op_id) for row in rows]


def cacheable_routes(rows: Iterable[FreeGet]) -> frozenset[str]:
    return frozenset(row.route for row in rows if row.cacheable)
