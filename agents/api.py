"""Catalog agents and the agent-network hub: status, manifest and chat."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import NotFound
from a2a_service.core.inputs import parse_body
from a2a_service.core.schemas import ErrorOut, HTTPValidationError
from a2a_service.core.views import ApiView, base_url, ok
from agents.a2a import schemas as a2a_s
from agents.a2a.rpc import jsonrpc_answer, jsonrpc_requested
from agents.chat import chat_reply
from agents.discovery import schemas as s
from agents.discovery.catalog_agents import UNKNOWN_AGENT, agent_status, agenthub_status, catalog_agent
from catalog.api.bodies import ChatBody
from catalog.models import CatalogAgent

CHAT_RESPONSES = {200: s.ChatOut, 404: ErrorOut, 422: HTTPValidationError}
# The POSTs that also speak A2A JSON-RPC (agents/a2a/): a body with "jsonrpc" is a JSON-RPC request.
JSONRPC_DESCRIPTION = (
    'A body with a "jsonrpc" member is an A2A JSON-RPC 2.0 request (agents/a2a/rpc.py; methods SendMessage, '
    "GetTask, CancelTask and 0.3's message/send, tasks/get, tasks/cancel; see /.well-known/agent-card.json); "
    "any other body is a chat message. Paid skills: the a2a-x402 extension (x402.payment.* message metadata) "
    "or an X-API-Key header (credits). JSON-RPC answers are HTTP 200 with result or error, except an unknown "
    "X-API-Key (HTTP 401)."
)
AGENT_POST_RESPONSES = {
    200: a2a_s.ChatOrJsonRpcOut,
    401: a2a_s.JsonRpcResponseOut,
    404: ErrorOut,
    422: HTTPValidationError,
}


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
    body = parse_body(request, ChatBody)
    if agent is None and body.agent:
        agent = _agent(body.agent)
    if agent is not None and not agent.enabled:
        raise NotFound(f"agent {agent.slug} is disabled")
    return ok(chat_reply(agent=agent, message=body.message, base=base_url(request)))


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
        description=JSONRPC_DESCRIPTION,
        operation_id="agent_post",
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request, slug: str) -> Response:
        if jsonrpc_requested(request):
            return jsonrpc_answer(request, agent=_enabled_agent(slug))
        return _chat(request, _agent(slug))


class AgentChatView(ApiView):
    @extend_schema(
        tags=["agents"],
        summary="Chat with a catalog agent",
        operation_id="agent_chat",
        request=ChatBody,
        responses=CHAT_RESPONSES,
    )
    def post(self, request: Request, slug: str) -> Response:
        return _chat(request, _agent(slug))


class AgentHubView(ApiView):
    """/api/a2a/agenthub (and with a trailing slash): GET status, POST chat, HEAD."""

    http_method_names = ["get", "post", "head", "options"]

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
        description=JSONRPC_DESCRIPTION,
        operation_id="agenthub_post",
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        if jsonrpc_requested(request):
            return jsonrpc_answer(request, agent=None)
        return _chat(request, None)

    def head(self, request: Request) -> HttpResponse:
        return HttpResponse(status=200, content_type="application/json")


class AgentHubChatView(AgentHubView):
    """POST (and HEAD) only: /api/a2a/agenthub/chat and /api/a2a/agenthub/."""

    http_method_names = ["post", "head", "options"]

    @extend_schema(
        tags=["marketplace"], summary="Chat through the agent hub", request=ChatBody, responses=CHAT_RESPONSES
    )
    def post(self, request: Request) -> Response:
        return _chat(request, None)


class AgentHubSlashView(AgentHubChatView):
    """POST (and HEAD) /api/a2a/agenthub/: chat, or A2A JSON-RPC as /api/a2a/agenthub."""

    @extend_schema(
        tags=["marketplace"],
        summary="Chat through the agent hub, or call it by A2A JSON-RPC",
        description=JSONRPC_DESCRIPTION,
        request=a2a_s.ChatOrJsonRpcIn,
        responses=AGENT_POST_RESPONSES,
    )
    def post(self, request: Request) -> Response:
        if jsonrpc_requested(request):
            return jsonrpc_answer(request, agent=None)
        return _chat(request, None)
