"""One `tools/call` on /mcp, answered synchronously (the ORM's side of agents/mcp/server.py).

A free tool runs its catalog route's selector. A paid tool is sold through the payment front
(billing/front/), like the SKU's own REST routes and the marketplace's execute; this module
only says where MCP carries the payment and turns the result into a tool result:

- x402 (the x402 MCP transport, x402/mcp in the x402 package): the signed PaymentPayload in the
  call's `_meta["x402/payment"]`; the settlement comes back in `_meta["x402/payment-response"]`;
- X-API-Key on the HTTP request: one call of the account's managed MCP allowance if it has one
  (agents/mcp/managed.py), else its prepaid credits;
- neither: a tool error whose structuredContent is the x402 PaymentRequired (the SKU's
  requirements, as its REST 402 states them) plus the other ways to pay.

Every failure is a tool result with isError (never a protocol error or a 500) carrying the
HTTP-equivalent status and the REST error body: 422 names the argument, 503 is uncharged."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from pydantic import ValidationError
from rest_framework.request import Request
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X
from x402.mcp.constants import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY

from a2a_service.core.errors import ApiError, NotFound, RequestValidationError, database_unavailable
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.parsers import text_is_storable, unstorable_text_at
from a2a_service.core.views import HIT_COUNTERS, base_url
from agents.mcp import MCP_PATH
from agents.mcp.managed import SKU as MANAGED_SKU
from agents.mcp.tools import free_tool
from agents.services import agent_interaction_record
from billing.front import Brought, Charge, Sale, Sold, payment_sell
from billing.paid_call import Offer, paid_offer
from billing.x402.challenge import Challenge, challenge_required_json

logger = logging.getLogger(__name__)

# Where an error's HTTP-equivalent status and our receipt ride in a result's _meta (besides the
# x402 transport's own keys).
STATUS_META_KEY = "a2a/status"
RECEIPT_META_KEY = "a2a/receipt"
ARGUMENTS = "arguments"  # the loc of a broken argument: ["arguments", <field>]
# The schemes a paid tool takes, in the order they are looked for (billing/front/): an x402
# proof in _meta, else a sign-in (SIGN-IN-WITH-X as an HTTP header or in _meta: what the wallet
# owns, else its credits), else the X-API-Key's managed allowance or credits (agents/mcp/managed.py).
ACCEPTS = ("x402", "siwx", "mcp_managed")


@dataclass
class ToolAnswer:
    """A CallToolResult, transport-free: server.py turns it into the SDK's type."""

    status_code: int
    structured: dict[str, Any]
    text: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


def tool_resource_url(name: str) -> str:
    """The x402 resource of a tool, as the x402 MCP transport names it (x402.mcp.utils
    create_tool_resource_url)."""
    return f"mcp://tool/{name}"


def mcp_tool_call(
    *, request: Request, name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None
) -> ToolAnswer:
    """Answer one tools/call and record it (agents.models.AgentInteraction)."""
    started = time.monotonic()
    try:
        answer = _answer(request, name, arguments or {}, meta or {})
    except ApiError as exc:
        answer = _api_error(exc)
    except Exception as exc:
        lost = database_unavailable(exc)
        if lost is not None:  # 503 with retry_after; no interaction row (the database failed)
            return _api_error(lost)
        # As every route answers a fault: a JSON error of ours, logged, never the exception's
        # text (the SDK would send it as the message of a code 0 error).
        logger.exception("MCP tools/call %s failed", name)
        answer = _error(500, {"detail": "Internal server error.", "code": "server_error"}, "internal error")
    agent_interaction_record(
        agent="agenthub",
        surface="mcp",
        status_code=answer.status_code,
        latency_ms=int((time.monotonic() - started) * 1000),
        # PostgreSQL stores no NUL or lone surrogate: a made-up name is kept escaped.
        skill=name if text_is_storable(name) else name.encode("unicode_escape", "backslashreplace").decode(),
    )
    return answer


def _answer(request: Request, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> ToolAnswer:
    base = base_url(request)
    # As the JSON body parser does for the REST routes: text no query can carry is refused here,
    # not as a database error.
    where = unstorable_text_at(arguments)
    if where is not None:
        raise RequestValidationError.single(
            [ARGUMENTS, *where],
            "text must not contain NUL characters or lone surrogates",
            "string_unstorable",
        )
    row = free_tool(name)
    if row is not None:
        query: dict[str, Any] = {}
        if row.query is not None:
            try:
                query = row.query.model_validate(arguments).model_dump()
            except ValidationError as exc:
                raise RequestValidationError.from_pydantic(exc, ARGUMENTS) from exc
        payload = row.selector(base, **query)
        if payload is None:
            raise NotFound(f"{name} has nothing to answer")
        return _content(payload.model_dump(mode="json", by_alias=True))
    if not _is_paid_tool(name):
        raise NotFound(f"unknown tool {name!r}; tools/list names every tool", extra={"tool": name})
    offer = paid_offer(product=name, params=arguments, base_url=base, params_in=ARGUMENTS)
    price = usdc_from_atomic(offer.price)
    sale = Sale(
        offer=offer,
        resource_url=tool_resource_url(name),
        accepts=ACCEPTS,
        reference=f"{MCP_PATH} {name}",
        asking=f"{name} costs {price:g} USDC: pay it with x402 (_meta['{MCP_PAYMENT_META_KEY}']) or send your "
        "X-API-Key",
    )
    headers: Mapping[str, str] = request.headers
    if isinstance(meta.get(SIGN_IN_WITH_X), str):  # a sign-in in _meta, for clients without headers
        headers = {**request.headers, "SIGN-IN-WITH-X": meta[SIGN_IN_WITH_X]}
    brought = Brought(headers=headers, x402_payload=meta.get(MCP_PAYMENT_META_KEY), proof_in="metadata")
    result = payment_sell(brought=brought, sale=sale)
    if isinstance(result, Sold):
        return _paid(result.charge, result.content)
    if result.kind == "unpaid":
        _count_challenge(name)
    if result.asks_x402:
        assert result.challenge is not None
        return _payment_required(result.challenge, base, offer, result.code, result.message)
    assert result.error is not None
    raise result.error  # answered as a tool error (_api_error)


def _count_challenge(sku: str) -> None:
    """An unpaid call answered with the payment requirements is a payment challenge, counted
    like the x402 route's 402s (the conversion funnel's challenges); counting never fails it."""
    for counter in HIT_COUNTERS:
        try:
            counter(metric="challenge", key=sku)
        except Exception:  # noqa: BLE001
            pass


def _is_paid_tool(name: str) -> bool:
    # paid_offer answers 404 for an SKU that is not on sale; this only keeps its message about
    # SKUs for names that could be one.
    return bool(name) and len(name) <= 64 and name.replace("_", "").isalnum()


def _content(content: dict[str, Any], meta: dict[str, Any] | None = None) -> ToolAnswer:
    return ToolAnswer(
        status_code=200,
        structured=content,
        text=json.dumps(content, ensure_ascii=False, separators=(",", ":")),
        meta=meta or {},
    )


def _paid(charge: Charge, content: dict[str, Any]) -> ToolAnswer:
    """The content, and its charge in _meta: the x402 transport's settle response, and ours."""
    meta: dict[str, Any] = {}
    if charge.settlement is not None:
        settlement = charge.settlement.model_dump(by_alias=True, exclude_none=True, mode="json")
        meta[MCP_PAYMENT_RESPONSE_META_KEY] = settlement
        meta[RECEIPT_META_KEY] = {"rail": charge.rail, "transaction": charge.transaction}
    elif charge.balance_atomic is not None:
        meta[RECEIPT_META_KEY] = {
            "rail": charge.rail,
            "charged_usdc": usdc_from_atomic(charge.charged_atomic or 0),
            "balance_usdc": usdc_from_atomic(charge.balance_atomic),
        }
    elif charge.calls_remaining is not None:  # a managed MCP pack's call (agents/mcp/managed.py)
        meta[RECEIPT_META_KEY] = {"rail": charge.rail, "charged_usdc": 0.0, "calls_remaining": charge.calls_remaining}
    return _content(content, meta)


def _payment_required(challenge: Challenge, base: str, offer: Offer, error: str, detail: str) -> ToolAnswer:
    """The x402 MCP transport's payment-required tool result: structuredContent (and its JSON
    text) is an x402 v2 PaymentRequired for the tool's resource, with our hints beside it (x402
    ignores fields it does not know)."""
    body = {
        **challenge_required_json(challenge, error),
        "detail": detail,
        "price_usdc": usdc_from_atomic(challenge.price_atomic),
        "alternatives": {
            "credits": {
                "header": "X-API-Key",
                "how": f"send your API key as the X-API-Key header of the HTTP request to {base}{MCP_PATH}: "
                "the price is debited from your prepaid credits",
                "register": base + "/api/a2a/account/register",
            },
            "managed_pack": {
                "buy": base + "/api/a2a/x402/mcp/managed-pack",
                "tool": MANAGED_SKU,
                "how": f"{settings.MCP_MANAGED_CALLS} paid tool calls in {settings.MCP_MANAGED_DAYS} days "
                "on your API key, without a per-call debit",
            },
            "rest": base + offer.product.full_path,
        },
    }
    answer = _error(402, body, json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    return answer


def _error(status: int, body: dict[str, Any], text: str) -> ToolAnswer:
    return ToolAnswer(
        status_code=status,
        structured={"status": status, **body},
        text=text,
        is_error=True,
        meta={STATUS_META_KEY: status},
    )


def _api_error(exc: ApiError) -> ToolAnswer:
    body = exc.body()
    if isinstance(exc, RequestValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or 'arguments'}: {err['msg']}" for err in exc.errors
        )
        return _error(exc.status_code, body, f"invalid arguments: {problems}")
    if exc.code == "settlement_pending":
        # The x402 rail's collect hint names the HTTP retry; over MCP it is the same tool call.
        body["collect"] = {"how": f"call the same tool again with the same _meta['{MCP_PAYMENT_META_KEY}']"}
    return _error(exc.status_code, body, exc.detail)
