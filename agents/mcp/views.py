"""POST /mcp: the MCP server's one HTTP route (agents/mcp/server.py runs the SDK on it)."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import BodyTooLarge
from a2a_service.core.views import ApiView


class JsonRpcRequestIn(BaseModel):
    jsonrpc: Literal["2.0"]
    id: int | str | None = Field(None, description="absent for a notification")
    method: str = Field(description="initialize, tools/list, tools/call, ping, ...")
    params: dict[str, Any] | None = Field(
        None,
        description="tools/call: {name, arguments, _meta}; pay by x402 with the signed PaymentPayload in "
        "_meta['x402/payment']",
    )


class JsonRpcErrorOut(BaseModel):
    code: int
    message: str
    data: Any = None


class JsonRpcResponseOut(BaseModel):
    jsonrpc: Literal["2.0"]
    id: int | str | None
    result: dict[str, Any] | None = Field(
        None,
        description="tools/list: {tools}; tools/call: {content, structuredContent, isError, _meta} (a paid "
        "tool's receipt in _meta['x402/payment-response'] or _meta['a2a/receipt'])",
    )
    error: JsonRpcErrorOut | None = None


class McpView(ApiView):
    metric = "mcp"
    http_method_names = ["post", "options"]

    @extend_schema(
        tags=["mcp"],
        summary="MCP server (streamable HTTP, stateless, JSON responses)",
        operation_id="mcp",
        description=(
            "Model Context Protocol over streamable HTTP: one JSON-RPC 2.0 message per POST, answered with "
            "JSON (send Accept: application/json, text/event-stream). tools/list gives the free tools and "
            "one paid tool per SKU on sale (inputSchema from its parameters, outputSchema from its "
            "content); /api/a2a/mcp/catalog is the same list. A paid tools/call is paid with the "
            "X-API-Key header (prepaid credits, or the calls of a managed MCP pack) or by x402 in the "
            "call's _meta['x402/payment']; unpaid, the tool result is an error whose structuredContent is "
            "the x402 PaymentRequired. Tool errors carry isError and the HTTP-equivalent status in "
            "structuredContent.status (402, 422 naming the argument, 503 uncharged)."
        ),
        request=JsonRpcRequestIn,
        parameters=[
            OpenApiParameter(
                "X-API-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="pays paid tools from prepaid credits (or a managed MCP pack's calls)",
            ),
        ],
        responses={
            200: JsonRpcResponseOut,
            202: OpenApiResponse(description="a notification, accepted"),
            400: OpenApiResponse(
                JsonRpcResponseOut, description="not a JSON-RPC message, or the body is not application/json"
            ),
            406: OpenApiResponse(JsonRpcResponseOut, description="the Accept header does not accept JSON"),
            413: OpenApiResponse(JsonRpcResponseOut, description="the body is too large"),
            415: OpenApiResponse(JsonRpcResponseOut, description="the body is not application/json"),
        },
    )
    def post(self, request: Request) -> HttpResponse:
        self.count_hit("mcp")
        # The SDK (about 550 pydantic models, a second of CPU) loads on the first MCP call, not in
        # every process's start: the web's other routes, the workers and manage.py never need it.
        from agents.mcp.server import mcp_handle

        return mcp_handle(request)

    def body_too_large(self, request: Request, exc: BodyTooLarge) -> Response:
        # As the SDK's transport refuses a body over its own (larger) cap: -32600, HTTP 413.
        from agents.mcp.server import jsonrpc_refusal

        return Response(jsonrpc_refusal(f"Payload too large: {exc.detail}"), status=413)
