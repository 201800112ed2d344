"""Catalog agents and the agent-network hub: status, manifest and chat."""

from __future__ import annotations

import time

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from pydantic import RootModel
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import ApiError, BodyTooLarge, NotFound
from a2a_service.core.inputs import parse_body
from a2a_service.core.schemas import ErrorOut, HTTPValidationError, PaymentRequiredOut, ProductUnavailableOut
from a2a_service.core.views import ApiView, base_url, ok
from agents.a2a import schemas as a2a_s
from agents.a2a.rpc import HUB, body_too_large_answer, jsonrpc_answer, jsonrpc_requested
from agents.chat.answer import chat_answer, paid_answer
from agents.chat.pay import chat_payment, paid_run
from agents.discovery import schemas as s
from agents.discovery.catalog_agents import UNKNOWN_AGENT, agent_status, agenthub_status, catalog_agent
from agents.services import agent_interaction_record
from billing.api.views import IDEMPOTENCY_KEY_HEADER
from catalog.api.bodies import ChatBody
from catalog.models import CatalogAgent

CHAT_RESPONSES = {
    200: s.ChatOut,
    401: ErrorOut,
    402: PaymentRequiredOut,
    403: ErrorOut,
    404: ErrorOut,
    422: HTTPValidationError,
    503: ProductUnavailableOut,
}
CHAT_DESCRIPTION = (
    "The message is understood as one SKU and its parameters (intent and entities: symbols, amounts, "
    "venues, time windows). Unpaid, the answer is 200: a free excerpt of the product's current answer to "
    "the question (its teaser cut), the price and the exact next call by each route (x402 URL, X-API-Key "
    "credit routes, session). With X-API-Key (credits), X-Session-Token (session) or an x402 proof "
    "(PAYMENT-SIGNATURE / X-PAYMENT) on this request, the product runs, paid exactly like its own routes, "
    "and `result` carries its content and `charged` the payment; a refused payment answers 401/402/403, a "
    "product with nothing fresh 503 uncharged. A question no SKU answers is a 200 saying so, with suggestions."
)


CHAT_HEADERS = [
    OpenApiParameter(
        "X-API-Key", str, OpenApiParameter.HEADER, required=False,
        description="pay the understood SKU from prepaid credits; the reply's `result` is its content",
    ),
    IDEMPOTENCY_KEY_HEADER,
    OpenApiParameter(
        "X-Session-Token", str, OpenApiParameter.HEADER, required=False,
        description="pay with one call of a prepaid session (session-callable SKUs)",
    ),
    OpenApiParameter(
        "PAYMENT-SIGNATURE", str, OpenApiParameter.HEADER, required=False,
        description="x402 v2 proof for the understood SKU's price (from the 402 of next_call.x402.url)",
    ),
    OpenApiParameter(
        "X-PAYMENT", str, OpenApiParameter.HEADER, required=False, description="x402 v1 proof, likewise"
    ),
]  # fmt: skip


def _chat_slug(request: Request, slug: str) -> Response:
    """The chat of the agent `slug`; an unknown one is a 404, recorded like every answer."""
    try:
        agent = _agent(slug)
    except NotFound:
        agent_interaction_record(agent=slug, surface="chat", status_code=404)
        raise
    return _chat(request, agent)


# The POSTs that also speak A2A JSON-RPC (agents/a2a/): a body with "jsonrpc" is a JSON-RPC request.
JSONRPC_DESCRIPTION = (
    'A body with a "jsonrpc" member is an A2A JSON-RPC 2.0 request (agents/a2a/rpc.py; methods SendMessage, '
    "GetTask, CancelTask and 0.3's message/send, tasks/get, tasks/cancel; see /.well-known/agent-card.json); "
    "any other body is a chat message. Paid skills: the a2a-x402 extension (x402.payment.* message metadata) "
    "or an X-API-Key header (credits). JSON-RPC answers are HTTP 200 with result or error, except an unknown "
    "X-API-Key (HTTP 401)."
)


class ErrorOrJsonRpcOut(RootModel[ErrorOut | a2a_s.JsonRpcResponseOut]):
    """A chat's error, or the JSON-RPC response (an unknown X-API-Key)."""


AGENT_POST_RESPONSES = {**CHAT_RESPONSES, 200: a2a_s.ChatOrJsonRpcOut, 401: ErrorOrJsonRpcOut}


def _agent(slug: str) -> CatalogAgent:
    agent = catalog_agent(slug)
    if agent is None:
        raise NotFound(UNKNOWN_AGENT.format(slug=slug))
    return agent


def _enabled_agent(slug: str) -> CatalogAgent:
    agent = _agent(slug)
    if not agent.enabled:
        raise NotFound(f"agent {agent.slug} is disabled")
    return agent


def _chat(request: Request, agent: CatalogAgent | None) -> Response:
    """One chat message answered, and recorded (agent_interaction_record, whatever the outcome).
    Unpaid: 200 with the understood SKU, a free excerpt and the exact call that buys it.
    With X-API-Key, X-Session-Token or an x402 proof: the product runs, paid like its own
    routes, and `result` carries its content (a refused payment answers 401/402/403)."""
    started = time.monotonic()
    slug, skill, status = agent.slug if agent else "agenthub", "", 500
    try:
        body = parse_body(request, ChatBody)
        if agent is None and body.agent:
            agent = _agent(body.agent)
            slug = agent.slug
        if agent is not None and not agent.enabled:
            raise NotFound(f"agent {agent.slug} is disabled")
        base = base_url(request)
        rail = chat_payment(request)
        out, intent = chat_answer(agent=agent, message=body.message, base=base, free=rail is None)
        skill = intent.sku or ""
        if rail is None or intent.sku is None or intent.missing:
            status = 200
            return ok(out)
        paid, charge = paid_run(request, sku=intent.sku, params=intent.params)
        status = paid.status_code
        if paid.status_code != 200:
            return paid
        paid_answer(out, agent=agent, content=paid.data, charge=charge)
        headers = {k: v for k, v in paid.items() if k.lower() != "content-type"}
        return Response(out.model_dump(mode="json", by_alias=True), headers=headers)
    except ApiError as exc:
        status = exc.status_code
        raise
    finally:
        agent_interaction_record(
            agent=slug,
            surface="chat",
            skill=skill,
            status_code=status,
            latency_ms=int((time.monotonic() - started) * 1000),
        )


def _too_large(request: Request, exc: BodyTooLarge, slug: str, *, jsonrpc: bool) -> Response | None:
    """A body over the size limit at an agent endpoint: a JSON-RPC error if the endpoint speaks
    JSON-RPC and the body's start shows one (agents/a2a/rpc.py), else the chat's REST form
    (413, HTTPValidationError body_too_large: None here), recorded like every chat answer."""
    answer = body_too_large_answer(request, exc, agent=slug) if jsonrpc else None
    if answer is None:
        agent_interaction_record(agent=slug, surface="chat", status_code=413)
    return answer


class AgentView(ApiView):
    """/api/a2a/agents/{slug}: GET (and HEAD) status, POST chat."""

    @extend_schema(
        tags=["agents"],
        summary="Catalog agent status",
        operation_id="agent_get",
        responses={200: s.AgentStatusOut, 404: ErrorOut},
    )
    def get(self, request: Request, slug: str) -> Response:
        status = agent_status(base_url(request), slug)
        if status is None:
            raise NotFound(UNKNOWN_AGENT.format(slug=slug))
        return ok(status)

    @extend_schema(
        tags=["agents"],
        summary="Chat with a catalog agent, or call it by A2A JSON-RPC",
        operation_id="agent_post",
        description=JSONRPC_DESCRIPTION + " " + CHAT_DESCRIPTION,
        parameters=CHAT_HEADERS,
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request, slug: str) -> Response:
        if jsonrpc_requested(request):
            return jsonrpc_answer(request, agent=_enabled_agent(slug))
        return _chat_slug(request, slug)

    def body_too_large(self, request: Request, exc: BodyTooLarge) -> Response | None:
        return _too_large(request, exc, str(self.kwargs.get("slug", "")), jsonrpc=True)


class AgentChatView(ApiView):
    @extend_schema(
        tags=["agents"],
        summary="Chat with a catalog agent",
        operation_id="agent_chat",
        description=CHAT_DESCRIPTION,
        parameters=CHAT_HEADERS,
        request=ChatBody,
        responses=CHAT_RESPONSES,
    )
    def post(self, request: Request, slug: str) -> Response:
        return _chat_slug(request, slug)

    def body_too_large(self, request: Request, exc: BodyTooLarge) -> Response | None:
        return _too_large(request, exc, str(self.kwargs.get("slug", "")), jsonrpc=False)


class AgentHubView(ApiView):
    """/api/a2a/agenthub (and with a trailing slash): GET status, POST chat, HEAD."""

    # Its POST and its subclasses' are one implementation (_hub_post): a subclass only says
    # whether its path also speaks A2A JSON-RPC, and documents its POST.
    http_method_names = ["get", "post", "head", "options"]
    speaks_jsonrpc = True

    @extend_schema(
        tags=["marketplace"],
        summary="Agent hub status",
        operation_id="agenthub_get",
        responses={200: s.AgentHubStatusOut},
    )
    def get(self, request: Request) -> Response:
        return ok(agenthub_status(base_url(request)))

    @extend_schema(
        tags=["marketplace"],
        summary="Chat through the agent hub, or call it by A2A JSON-RPC",
        operation_id="agenthub_post",
        description=JSONRPC_DESCRIPTION + " " + CHAT_DESCRIPTION,
        parameters=CHAT_HEADERS,
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        return self._hub_post(request)

    def _hub_post(self, request: Request) -> Response:
        if self.speaks_jsonrpc and jsonrpc_requested(request):
            return jsonrpc_answer(request, agent=None)
        return _chat(request, None)

    def head(self, request: Request) -> HttpResponse:
        return HttpResponse(status=200, content_type="application/json")

    def body_too_large(self, request: Request, exc: BodyTooLarge) -> Response | None:
        return _too_large(request, exc, HUB, jsonrpc=self.speaks_jsonrpc)


class AgentHubChatView(AgentHubView):
    """POST (and HEAD) only: /api/a2a/agenthub/chat and /api/a2a/agenthub/."""

    http_method_names = ["post", "head", "options"]
    speaks_jsonrpc = False

    @extend_schema(
        tags=["marketplace"],
        summary="Chat through the agent hub",
        description=CHAT_DESCRIPTION,
        parameters=CHAT_HEADERS,
        request=ChatBody,
        responses=CHAT_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        return self._hub_post(request)


class AgentHubSlashView(AgentHubChatView):
    """POST (and HEAD) /api/a2a/agenthub/: chat, or A2A JSON-RPC as /api/a2a/agenthub."""

    speaks_jsonrpc = True

    @extend_schema(
        tags=["marketplace"],
        summary="Chat through the agent hub, or call it by A2A JSON-RPC",
        description=JSONRPC_DESCRIPTION + " " + CHAT_DESCRIPTION,
        parameters=CHAT_HEADERS,
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        return self._hub_post(request)
