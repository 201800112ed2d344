"""A2A JSON-RPC through the Django test client: messages naming a skill, sent to the hub."""

from __future__ import annotations

import uuid
from typing import Any

from a2a.types import SendMessageResponse
from google.protobuf.json_format import ParseDict

HUB = "/api/a2a/agenthub"
BRIEF_SKU = "morning_brief"


def rpc(api, method: str, params: dict[str, Any], path: str = HUB, rid: Any = 1, **headers: str) -> Any:
    return api.post(
        path, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, format="json", **headers
    )


def data_message(skill: str, params: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"skill": skill}
    if params is not None:
        data["params"] = params
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"data": data}], **extra}


def send(api, skill: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    resp = rpc(api, "SendMessage", {"message": data_message(skill, params)}, **headers)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert "result" in body, body
    ParseDict(body["result"], SendMessageResponse())  # a valid 1.0 SendMessageResponse
    return body["result"]["task"]


def status_meta(task: dict[str, Any]) -> dict[str, Any]:
    return task["status"]["message"].get("metadata", {})
