"""HTTP face of the facilitator's Bazaar catalog: GET /api/a2a/facilitator/discovery/resources,
the discovery list the x402 SDK's bazaar facilitator client reads (`with_bazaar(client)
.extensions.bazaar.list_resources(...)` calls <facilitator url>/discovery/resources). Public
and free, like every facilitator's: what it lists is what this service's 402s declare."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core import schemas as s
from a2a_service.core.inputs import QueryModel, parse_query, query_parameters
from a2a_service.core.views import ApiView
from billing.facilitator.discovery import LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, DiscoveryFilter, discovery_list


class DiscoveryQuery(QueryModel):
    type: str | None = Field(None, max_length=8, description="the protocol type: http or mcp")
    payTo: str | None = Field(None, max_length=64, description="only resources paid to this address")
    scheme: str | None = Field(
        None, max_length=32, description="only resources taking this scheme (exact, ...)"
    )
    network: str | None = Field(
        None, max_length=32, description="only resources paid on this network (CAIP-2)"
    )
    extensions: str | None = Field(None, max_length=32, description="only resources declaring this extension")
    limit: int = Field(
        LIST_LIMIT_DEFAULT, ge=1, le=LIST_LIMIT_MAX, description=f"items per page, 1..{LIST_LIMIT_MAX}"
    )
    offset: int = Field(0, ge=0, le=1_000_000, description="items skipped")


class DiscoveryItemOut(BaseModel):
    resource: str = Field(description="the resource's URL (query and fragment removed) or MCP tool URL")
    type: str = Field(description="http or mcp")
    x402Version: int
    accepts: list[dict[str, Any]] = Field(
        description="the payment requirements seen, one per scheme and network"
    )
    lastUpdated: str = Field(description="ISO 8601: when a payment for it was last seen")
    description: str | None = None
    mimeType: str | None = None
    serviceName: str | None = None
    tags: list[str] | None = None
    iconUrl: str | None = None
    extensions: dict[str, Any] = Field(
        description="the `bazaar` declaration seen (info: input and output; schema)"
    )


class DiscoveryPaginationOut(BaseModel):
    limit: int
    offset: int
    total: int


class DiscoveryListOut(BaseModel):
    x402Version: int
    items: list[DiscoveryItemOut]
    pagination: DiscoveryPaginationOut


class FacilitatorDiscoveryView(ApiView):
    @extend_schema(
        tags=["x402"],
        summary="Facilitator: discovery list (Bazaar) of the resources it has seen",
        description="The resources whose x402 `bazaar` declaration this facilitator saw in a payment it settled "
        "(this service's own), newest first: how to call each (method, input schema), what it answers (output schema "
        "and example) and how to pay it (`accepts`). The list x402's bazaar facilitator client reads "
        "(`list_resources`).",
        operation_id="facilitator_discovery_resources",
        parameters=query_parameters(DiscoveryQuery),
        responses={200: DiscoveryListOut, 422: s.HTTPValidationError},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request, DiscoveryQuery)
        wanted = DiscoveryFilter(
            type=query.type,
            pay_to=query.payTo,
            scheme=query.scheme,
            network=query.network,
            extensions=query.extensions,
            limit=query.limit,
            offset=query.offset,
        )
        return Response(discovery_list(wanted))
