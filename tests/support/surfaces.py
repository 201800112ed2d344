"""The five surfaces that sell through the payment front (billing/front/), driven over HTTP
against the live stack the way each protocol's clients do: the REST x402 route, the chat, the
marketplace's execute, the MCP tool (`_meta`) and the A2A skill (the a2a-x402 extension's
message metadata). Each surface shows its challenge (`ask`) and takes payment material in its
own place (`send`): an x402 PaymentPayload, a sign-in-with-x header, or an X-API-Key. Its answer
is read into one shape (`Answer`) so a test compares the surfaces side by side."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X
from x402.http.utils import (
    decode_payment_required_header,
    decode_payment_response_header,
    encode_payment_signature_header,
)
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.schemas import PaymentPayload, PaymentRequired

from agents.a2a import extension as x

SURFACES = ("rest", "chat", "marketplace", "mcp", "a2a")
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
    "Content-Type": "application/json",
}


@dataclass
class Asked:
    """A surface's challenge: the x402 PaymentRequired, the URL the client saw it at (the SDK's
    sign-in hook checks the challenge is bound to its origin), and the A2A task it is on."""

    required: PaymentRequired
    request_url: str
    task_id: str = ""


@dataclass
class Answer:
    """One paid call's answer as its protocol carries it: whether the product answered, the x402
    settlement (PAYMENT-RESPONSE, `_meta['x402/payment-response']`, the task's receipt), the credit
    receipt (atomic USDC charged and the balance after), and a refusal's x402 error."""

    ok: bool
    content: Any = None
    settled: dict[str, Any] | None = None
    credits: tuple[int, int] | None = None
    refusal: str = ""
    raw: Any = field(default=None, repr=False)


def _atomic(value: Any) -> int:
    return round(float(value) * 1_000_000)


def _http_answer(resp: requests.Response, content: Any) -> Answer:
    if resp.status_code == 402:
        required = decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])
        return Answer(False, refusal=str(required.error or ""), raw=resp)
    if resp.status_code != 200:
        return Answer(False, refusal=str(resp.json().get("code", resp.status_code)), raw=resp)
    settled = resp.headers.get("PAYMENT-RESPONSE")
    credits = None
    if "X-Credit-Charged" in resp.headers:
        credits = (_atomic(resp.headers["X-Credit-Charged"]), _atomic(resp.headers["X-Credit-Balance"]))
    return Answer(
        True,
        content=content,
        settled=decode_payment_response_header(settled).model_dump(by_alias=True, exclude_none=True)
        if settled
        else None,
        credits=credits,
        raw=resp,
    )


class Shop:
    """The five surfaces of one live service selling one product (no parameters)."""

    def __init__(self, url: str, *, sku: str, path: str, capability: str, chat_message: str) -> None:
        self.url, self.sku, self.path = url, sku, path
        self.capability, self.chat_message = capability, chat_message
        self.http = requests.Session()

    def close(self) -> None:  # keep-alive connections would hold live-server threads at shutdown
        self.http.close()

    # --- the challenge each surface shows -------------------------------------------------------
    def ask(self, surface: str) -> Asked:
        if surface in ("rest", "chat"):
            # The chat's unpaid answer names the exact call that buys it: the product's x402 URL.
            url = self.url + self.path
            if surface == "chat":
                unpaid = self._chat({})
                assert unpaid.status_code == 200 and unpaid.json()["intent"] == self.sku, unpaid.text
                url = unpaid.json()["next_call"]["x402"]["url"]
            resp = self.http.get(url, timeout=30)
            assert resp.status_code == 402, resp.text
            return Asked(decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"]), url)
        if surface == "marketplace":
            resp = self._execute({})
            assert resp.status_code == 402, resp.text
            return Asked(decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"]), resp.url)
        if surface == "mcp":
            result = self._mcp({})
            required = extract_payment_required_from_result(
                MCPToolResult(
                    content=result["content"], is_error=True, structured_content=result["structuredContent"]
                )
            )
            assert required is not None, result
            return Asked(required, self.url + "/mcp")
        assert surface == "a2a"
        task = self._a2a({"parts": [{"data": {"skill": self.sku}}]})
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        required = PaymentRequired.model_validate(task["status"]["message"]["metadata"][x.REQUIRED])
        return Asked(required, self.url + self.path, task_id=task["id"])

    # --- the material each surface carries, where its protocol puts it ---------------------------
    def send(
        self,
        surface: str,
        asked: Asked | None = None,
        *,
        payload: PaymentPayload | None = None,
        sign_in: str = "",
        key: str = "",
    ) -> Answer:
        headers: dict[str, str] = {"X-API-Key": key} if key else {}
        if surface in ("rest", "chat", "marketplace"):  # HTTP: the headers the SDK's clients send
            if payload is not None:
                headers["PAYMENT-SIGNATURE"] = encode_payment_signature_header(payload)
            if sign_in:
                headers[SIGN_IN_WITH_X] = sign_in
            if surface == "rest":
                resp = self.http.get(self.url + self.path, headers=headers, timeout=60)
                return _http_answer(resp, resp.json() if resp.status_code == 200 else None)
            if surface == "marketplace":
                resp = self._execute(headers)
                return _http_answer(resp, resp.json()["result"] if resp.status_code == 200 else None)
            return self._chat_answer(self._chat(headers))
        if surface == "mcp":  # the tool call's _meta
            meta: dict[str, Any] = {}
            if payload is not None:
                meta[MCP_PAYMENT_META_KEY] = payload.model_dump(mode="json", by_alias=True, exclude_none=True)
            if sign_in:
                meta[SIGN_IN_WITH_X] = sign_in
            return self._mcp_answer(self._mcp(meta, key=key))
        assert surface == "a2a"  # the a2a-x402 extension's message metadata, on the task
        metadata: dict[str, Any] = {}
        if payload is not None:
            metadata = {
                x.STATUS: x.PAYMENT_SUBMITTED,
                x.PAYLOAD: payload.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
        if sign_in:
            metadata[SIGN_IN_WITH_X] = sign_in
        task_id = asked.task_id if asked is not None else ""
        message: dict[str, Any] = (
            {"taskId": task_id, "parts": [{"text": "paid"}], "metadata": metadata}
            if task_id
            else {"parts": [{"data": {"skill": self.sku}}]}
        )
        return self._a2a_answer(self._a2a(message, key=key))

    # --- each protocol on the wire ----------------------------------------------------------------
    def _chat(self, headers: dict[str, str]) -> requests.Response:
        return self.http.post(
            self.url + "/api/a2a/agenthub/chat",
            json={"message": self.chat_message},
            headers=headers,
            timeout=60,
        )

    def _chat_answer(self, resp: requests.Response) -> Answer:
        if resp.status_code != 200:
            return _http_answer(resp, None)
        body = resp.json()
        answer = _http_answer(resp, body["result"])
        charged = body.get("charged") or {}
        answer.ok = body["result"] is not None
        if charged.get("rail") == "credits":
            answer.credits = (_atomic(charged["amount_usdc"]), _atomic(charged["balance_usdc"]))
        return answer

    def _execute(self, headers: dict[str, str]) -> requests.Response:
        return self.http.post(
            self.url + "/api/a2a/marketplace/execute",
            json={"capability": self.capability},
            headers=headers,
            timeout=60,
        )

    def _mcp(self, meta: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.sku, "arguments": {}}
        if meta:
            params["_meta"] = meta
        headers = {**MCP_HEADERS, **({"X-API-Key": key} if key else {})}
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        resp = self.http.post(self.url + "/mcp", data=json.dumps(body), headers=headers, timeout=60)
        assert resp.status_code == 200, resp.text
        result: dict[str, Any] = resp.json()["result"]
        return result

    def _mcp_answer(self, result: dict[str, Any]) -> Answer:
        meta = result.get("_meta") or {}
        if result["isError"]:
            required = extract_payment_required_from_result(
                MCPToolResult(
                    content=result["content"], is_error=True, structured_content=result["structuredContent"]
                )
            )
            refusal = required.error if required is not None else result["structuredContent"].get("code")
            return Answer(False, refusal=str(refusal or ""), raw=result)
        receipt = meta.get("a2a/receipt") or {}
        credits = None
        if receipt.get("rail") == "credits":
            credits = (_atomic(receipt["charged_usdc"]), _atomic(receipt["balance_usdc"]))
        return Answer(
            True,
            content=result["structuredContent"],
            settled=meta.get(MCP_PAYMENT_RESPONSE_META_KEY),
            credits=credits,
            raw=result,
        )

    def _a2a(self, message: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", **message}
        body = {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": message}}
        resp = self.http.post(
            self.url + "/api/a2a/agenthub", json=body, headers={"X-API-Key": key} if key else {}, timeout=60
        )
        assert resp.status_code == 200, resp.text
        task: dict[str, Any] = resp.json()["result"]["task"]
        return task

    def _a2a_answer(self, task: dict[str, Any]) -> Answer:
        metadata = (task["status"].get("message") or {}).get("metadata") or {}
        if task["status"]["state"] != "TASK_STATE_COMPLETED":
            required = metadata.get(x.REQUIRED) or {}
            return Answer(False, refusal=str(metadata.get(x.ERROR) or required.get("error") or ""), raw=task)
        receipts = metadata.get(x.RECEIPTS) or []
        credits = metadata.get("credits")
        return Answer(
            True,
            content=task["artifacts"][0]["parts"],
            settled=receipts[0] if receipts else None,
            credits=(_atomic(credits["charged_usdc"]), _atomic(credits["balance_usdc"])) if credits else None,
            raw=task,
        )
