"""The MCP server: the official SDK's low-level `Server` (tools/list, tools/call) behind its
streamable HTTP transport, stateless with JSON responses, answering one Django request.

Why a bridge, and why this one: the web server runs Django under WSGI (granian's wsgi mode, and
pytest-django's live_server), while the SDK's transport is an ASGI app. For each POST to /mcp the
view builds the ASGI scope from the Django request, runs the SDK's handler for that one request
under asgiref's `async_to_sync`, collects the response it sends and returns it as an
HttpResponse. So the same code runs under granian, live_server and the test client.

- Stateless: every request is self-contained (no Mcp-Session-Id, nothing kept between
  requests), so nothing needs a long-lived event loop: `async_to_sync` gives the request a fresh
  loop and the SDK's session manager lives for that request only (its `run()` is a task group
  and an empty lifespan). The whole bridge (loop, manager, transport, JSON-RPC parsing) costs a
  few milliseconds per request, about what a free REST GET costs in all. A process-wide loop
  would save the loop creation, but its handlers could not reach the ORM on the request's
  thread, where the request's database connection (and a test's transaction) is.
- The handlers reach the ORM through `sync_to_async` (thread-sensitive): asgiref runs them back
  on the request's own thread, with its connection.
- The `Server` and its tool handlers are built once per process; the tool list is read from the
  database on each tools/list (prices and the SKUs on sale are staff-edited)."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import mcp_types as types
from asgiref.sync import async_to_sync, sync_to_async
from django.http import HttpResponse
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from rest_framework.request import Request

from a2a_service.core.views import base_url
from agents.discovery.identity import SERVICE_NAME, SERVICE_VERSION
from agents.mcp.calls import ToolAnswer, mcp_tool_call
from agents.mcp.tools import McpTool, mcp_tools

# Where the Django request rides in the ASGI scope, for the handlers (ctx.request is the SDK's
# Starlette request over that scope; its `state` is the scope's "state" dict).
SCOPE_STATE_KEY = "django_request"

INSTRUCTIONS = (
    "Market intelligence for automated agents. Free tools answer directly. Paid tools (name = SKU) cost "
    "the USDC price in their description: send your API key as the X-API-Key HTTP header (prepaid "
    "credits, or the calls of the managed MCP pack mcp_managed_pack), or pay with x402: a call "
    "without payment answers a tool error whose structuredContent is the x402 PaymentRequired; sign it "
    "and call again with the PaymentPayload in _meta['x402/payment']. The receipt is in the result's "
    "_meta['x402/payment-response']."
)


def _django_request(ctx: ServerRequestContext[Any, Any]) -> Request:
    if ctx.request is None:  # only HTTP reaches this server (mcp_handle)
        raise RuntimeError("the MCP server answers HTTP requests only")
    request: Request = ctx.request.state.django_request  # set by mcp_handle (_scope)
    return request


def _tool(tool: McpTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
    )


async def _list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    request = _django_request(ctx)
    tools = await sync_to_async(mcp_tools)(base_url(request))
    return types.ListToolsResult(tools=[_tool(t) for t in tools])


def _result(answer: ToolAnswer) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=answer.text)],
        structured_content=answer.structured,
        is_error=answer.is_error,
        _meta=answer.meta or None,
    )


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    answer = await sync_to_async(mcp_tool_call)(
        request=_django_request(ctx),
        name=params.name,
        arguments=params.arguments,
        meta=dict(params.meta or {}),
    )
    return _result(answer)


SERVER: Server[Any] = Server(
    SERVICE_NAME,
    version=SERVICE_VERSION,
    instructions=INSTRUCTIONS,
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


def _scope(request: Request, body: bytes) -> dict[str, Any]:
    """The ASGI HTTP scope of a Django request."""
    meta = request.META
    # WSGI header values are latin-1 strings (PEP 3333); anything else (only a test client can
    # send it) is replaced rather than failing the request.
    headers = [
        (name.lower().encode("latin-1", "replace"), value.encode("latin-1", "replace"))
        for name, value in request.headers.items()
    ]
    if "content-length" not in request.headers:
        headers.append((b"content-length", str(len(body)).encode()))
    host = request.get_host()
    server_name, sep, server_port = host.rpartition(":")
    if not sep or not server_port.isdigit():  # no port ("example.com", "[::1]")
        server_name, server_port = host, ""
    client = meta.get("REMOTE_ADDR") or "0.0.0.0"  # noqa: S104 - an address, not a bind
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8", "replace"),
        "root_path": "",
        "query_string": meta.get("QUERY_STRING", "").encode("latin-1", "replace"),
        "headers": headers,
        "client": (client, 0),
        "server": (server_name, int(server_port or (443 if request.is_secure() else 80))),
        "state": {SCOPE_STATE_KEY: request},
    }


async def _serve(scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Run the SDK's streamable HTTP handler on one request; return status, headers and body."""
    manager = StreamableHTTPSessionManager(app=SERVER, stateless=True, json_response=True)
    sent = False
    status = 500
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []

    async def receive() -> MutableMapping[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = message["status"]
            headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(chunks)


def jsonrpc_refusal(message: str) -> dict[str, Any]:
    """A request refused as a JSON-RPC error, invalid request (id null: no id was read)."""
    refusal = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=types.INVALID_REQUEST, message=message)
    )
    body: dict[str, Any] = refusal.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return body


def mcp_handle(request: Request) -> HttpResponse:
    """Answer one HTTP request to /mcp with the SDK's transport."""
    body = request.body
    status, headers, content = async_to_sync(_serve)(_scope(request, body), body)
    fields = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in headers}
    fields.pop("content-length", None)
    if status >= 400 and not fields.get("content-type", "").startswith("application/json"):
        # The transport refuses a few requests in plain text (e.g. a POST that is not JSON); every
        # answer of this API is JSON, so the refusal is told as a JSON-RPC error.
        content = json.dumps(jsonrpc_refusal(content.decode("utf-8", "replace"))).encode()
        fields["content-type"] = "application/json"
    response = HttpResponse(content, status=status)
    for key, value in fields.items():
        response[key] = value
    return response
