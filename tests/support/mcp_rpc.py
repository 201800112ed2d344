"""MCP JSON-RPC through the Django test client (or requests, with a URL): /mcp calls and tool calls."""

from __future__ import annotations

import json
from typing import Any

ACCEPT = "application/json, text/event-stream"


STATUS_SKU = "payments_dual_rail_status"  # 0.01 USDC, pure, always has content


def rpc(client: Any, method: str, params: dict[str, Any] | None = None, *, key: str = "") -> dict[str, Any]:
    """One JSON-RPC POST to /mcp through the Django test client (or requests, with a URL)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        body["params"] = params
    headers = {"HTTP_ACCEPT": ACCEPT, "HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}
    if key:
        headers["HTTP_X_API_KEY"] = key
    resp = client.post("/mcp", data=json.dumps(body), content_type="application/json", **headers)
    assert resp.status_code == 200, resp.content
    out = resp.json()
    assert out["id"] == 7 and "error" not in out, out
    result: dict[str, Any] = out["result"]
    return result


def call(client: Any, name: str, arguments: dict[str, Any] | None = None, *, key: str = "", meta=None):
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta is not None:
        params["_meta"] = meta
    return rpc(client, "tools/call", params, key=key)
