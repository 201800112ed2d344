"""The A2A JSON-RPC binding of the hub and the catalog agents: the envelope, the methods of
protocol 1.0 (SendMessage, GetTask, CancelTask) and 0.3 (message/send, tasks/get,
tasks/cancel), parsed and answered with a2a-sdk's types, errors with its error types and codes.
Every answer is a JSON-RPC response (HTTP 200), never a 500; the one exception is an unknown
X-API-Key, refused as the rest of the service refuses it (HTTP 401, here with a JSON-RPC error).
Each answer is recorded as an AgentInteraction (surface jsonrpc)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.server.jsonrpc_models import JSONParseError, JSONRPCError
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    SendMessageRequest,
    SendMessageResponse,
    Task,
)
from a2a.utils.errors import (
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    TaskNotFoundError,
)
from a2a.utils.proto_utils import validate_proto_required_fields
from django.conf import settings
from pydantic import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import ApiError, BodyTooLarge, Unauthorized, database_unavailable
from a2a_service.core.parsers import JsonTooDeep, JsonTooLarge, json_loads_bounded, unstorable_text_at
from a2a_service.core.views import base_url
from agents.a2a import flows
from agents.a2a.extension import ACTIVATION_HEADERS, X402_EXTENSION_URI
from agents.a2a.proto import ParseError, from_json, plain_json, to_json
from agents.a2a.store import a2a_task_get
from agents.models import A2aTask
from agents.services import agent_interaction_record
from catalog.models import CatalogAgent

logger = logging.getLogger(__name__)

HUB = "agenthub"
V1, V03 = "1.0", "0.3"
METHODS: dict[str, tuple[str, str]] = {
    "SendMessage": (V1, "send"),
    "GetTask": (V1, "get"),
    "CancelTask": (V1, "cancel"),
    "message/send": (V03, "send"),
    "tasks/get": (V03, "get"),
    "tasks/cancel": (V03, "cancel"),
}
# The HTTP-equivalent outcome of each JSON-RPC error, for AgentInteraction.
ERROR_STATUS = {-32700: 400, -32600: 400, -32601: 404, -32602: 422, -32001: 404, -32002: 409, -32004: 409}


def jsonrpc_requested(request: Request) -> bool:
    """Whether a POST to an agent endpoint is JSON-RPC (a body with "jsonrpc") rather than chat.
    Unparseable JSON that mentions "jsonrpc" is JSON-RPC too, so it gets its -32700. (A body
    over the size limit never gets here: ApiView refused it, see body_too_large_answer.)"""
    raw = request.body
    try:
        body = json_loads_bounded(raw, max_bytes=settings.API_MAX_BODY_BYTES)
    except ValueError:
        return b'"jsonrpc"' in raw
    if isinstance(body, list):
        return bool(body) and all(isinstance(item, dict) and "jsonrpc" in item for item in body)
    return isinstance(body, dict) and "jsonrpc" in body


# How much of an oversized body is read to tell JSON-RPC from chat: a JSON-RPC client writes
# "jsonrpc" first or near it (a2a-sdk does), and the rest is never read.
SNIFF_BYTES = 4_096
_JSONRPC_MEMBER = re.compile(rb'"jsonrpc"\s*:')


def body_too_large_answer(request: Request, exc: BodyTooLarge, *, agent: str) -> Response | None:
    """The 413 of a body over the size limit at an agent endpoint, if the body's start shows a
    JSON-RPC request: a JSON-RPC error (-32600, HTTP 413), recorded like every JSON-RPC answer.
    None for any other body (the caller answers as chat)."""
    if not _JSONRPC_MEMBER.search(request.read(SNIFF_BYTES)):
        return None
    _record(flows.Ctx(request=request, agent=agent, catalog_agent=None, base="", status=413), time.monotonic())
    error = InvalidRequestError(f"Payload too large: {exc.detail}", data={"limit": str(exc.limit)})
    return Response(_error(None, error, V1), status=413)


class RpcError(Exception):
    """A JSON-RPC error answered before the method is known (no protocol version yet)."""

    def __init__(
        self, error: A2AError | JSONRPCError, http_status: int = 200, request_id: str | int | None = None
    ) -> None:
        super().__init__(str(error))
        self.error = error
        self.http_status = http_status
        self.request_id = request_id


def jsonrpc_answer(request: Request, *, agent: CatalogAgent | None) -> Response:
    started = time.monotonic()
    ctx = flows.Ctx(
        request=request, agent=agent.slug if agent else HUB, catalog_agent=agent, base=base_url(request)
    )
    request_id: str | int | None = None
    version = V1
    http_status = 200
    try:
        body = _envelope(request)
        request_id = body.get("id")
        method = body["method"]
        if method not in METHODS:
            raise RpcError(
                MethodNotFoundError(f"method {method!r} is not served here; methods: {', '.join(METHODS)}")
            )
        version, action = METHODS[method]
        params = body.get("params", {})
        if not isinstance(params, dict):
            raise RpcError(InvalidParamsError("params must be an object"))
        result = _call(ctx, version, action, params)
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": plain_json(result)}
    except RpcError as exc:
        http_status = exc.http_status
        payload = _error(request_id if request_id is not None else exc.request_id, exc.error, version)
    except A2AError as exc:
        payload = _error(request_id, exc, version)
    except Unauthorized as exc:
        http_status = 401
        payload = _error(request_id, InvalidRequestError(exc.detail, data={"reason": exc.code}), version)
    except ApiError as exc:
        error: A2AError = (
            InternalError(exc.detail) if exc.status_code >= 500 else InvalidParamsError(exc.detail)
        )
        payload = _error(request_id, error, version)
    except Exception as exc:
        lost = database_unavailable(exc)
        if lost is not None:
            # 503 with Retry-After, the error in JSON-RPC form; no interaction row (the database
            # is what failed).
            data = {"reason": lost.code, "retry_after": lost.extra["retry_after"]}
            return Response(
                _error(request_id, InternalError(lost.detail, data=data), version),
                status=lost.status_code,
                headers=lost.headers,
            )
        logger.exception("A2A JSON-RPC request failed")
        payload = _error(request_id, InternalError("internal error; nothing was charged for it"), version)
    if "error" in payload:
        code = payload["error"].get("code", -32603)
        ctx.status = http_status if http_status != 200 else ERROR_STATUS.get(code, 500)
    _record(ctx, started)
    headers = {}
    if _extension_activated(request):
        # The activated extensions are echoed back (A2A extensions: the server says which it used).
        headers = {ACTIVATION_HEADERS[1]: X402_EXTENSION_URI}
    return Response(payload, status=http_status, headers=headers)


def _extension_activated(request: Request) -> bool:
    asked = ",".join(str(request.headers.get(h, "")) for h in ACTIVATION_HEADERS)
    return X402_EXTENSION_URI in {u.strip() for u in asked.split(",")}


def _record(ctx: flows.Ctx, started: float) -> None:
    try:
        agent_interaction_record(
            agent=ctx.agent,
            surface="jsonrpc",
            status_code=ctx.status,
            latency_ms=int((time.monotonic() - started) * 1000),
            skill=ctx.skill,
        )
    except Exception:  # recording must never fail the answer it records
        logger.exception("could not record an A2A interaction")


def _envelope(request: Request) -> dict[str, Any]:
    """The JSON-RPC 2.0 request object, or the RpcError its flaw calls for."""
    try:
        body = json_loads_bounded(request.body, max_bytes=settings.API_MAX_BODY_BYTES)
    except JsonTooLarge as exc:
        raise RpcError(InvalidRequestError(f"Payload too large: {exc}"), http_status=413) from None
    except (JsonTooDeep, ValueError) as exc:
        raise RpcError(JSONParseError(message=f"Parse error: {exc}")) from None
    if isinstance(body, list):
        raise RpcError(InvalidRequestError("batch requests are not supported"))
    if not isinstance(body, dict):
        raise RpcError(InvalidRequestError("a JSON-RPC request is an object"))
    request_id = body.get("id")
    if isinstance(request_id, bool) or not (request_id is None or isinstance(request_id, str | int)):
        raise RpcError(InvalidRequestError("id must be a string, an integer or null"))
    if body.get("jsonrpc") != "2.0":
        raise RpcError(InvalidRequestError("'jsonrpc' must be exactly '2.0'"), request_id=request_id)
    if not isinstance(body.get("method"), str) or not body["method"]:
        raise RpcError(InvalidRequestError("method must be a non-empty string"), request_id=request_id)
    loc = unstorable_text_at(body)
    if loc is not None:
        where = ".".join(map(str, loc))
        raise RpcError(
            InvalidParamsError(f"text at {where} holds a NUL character or a lone surrogate"),
            request_id=request_id,
        )
    return body


def _error(request_id: str | int | None, error: A2AError | JSONRPCError, version: str) -> dict[str, Any]:
    if version == V03 and isinstance(error, A2AError):
        code = JSON_RPC_ERROR_CODE_MAP.get(type(error), -32603)
        legacy = types_v03.JSONRPCError(code=code, message=error.message, data=error.data)
        return {"jsonrpc": "2.0", "id": request_id, "error": legacy.model_dump(exclude_none=True)}
    return build_error_response(request_id, error)


# --- methods ----------------------------------------------------------------------------------
def _call(ctx: flows.Ctx, version: str, action: str, params: dict[str, Any]) -> dict[str, Any]:
    if action == "send":
        message, history_length = _message_v1(params) if version == V1 else _message_v03(params)
        task = _task(ctx, message.task_id) if message.task_id else None
        outcome = flows.send_message(ctx, message, task=task)
        if isinstance(outcome, A2aTask):
            return _task_out(task_proto(outcome, history_length), version, wrap=True)
        reply = from_json(outcome, Message())
        if version == V1:
            return to_json(SendMessageResponse(message=reply))
        return conversions.to_compat_message(reply).model_dump(mode="json", by_alias=True, exclude_none=True)
    task_id, history_length = _task_query(params, version, with_history=action == "get")
    task = _task(ctx, task_id)
    if action == "cancel":
        task = flows.cancel(ctx, task)
    else:
        ctx.skill = task.skill
    return _task_out(task_proto(task, history_length), version, wrap=False)


def _message_v1(params: dict[str, Any]) -> tuple[Message, int | None]:
    """The message sent, and how much of the task's history the answer is to carry."""
    try:
        request = from_json(params, SendMessageRequest(), ignore_unknown_fields=True)
    except ParseError as exc:
        raise InvalidParamsError(f"not a SendMessageRequest: {exc}") from None
    if not request.HasField("message"):
        raise InvalidParamsError("params.message is required")
    validate_proto_required_fields(request.message)
    config = request.configuration
    limit = config.history_length if config.HasField("history_length") else None
    return request.message, _history_length(limit)


def _message_v03(params: dict[str, Any]) -> tuple[Message, int | None]:
    try:
        legacy = types_v03.MessageSendParams.model_validate(params)
    except ValidationError as exc:
        raise InvalidParamsError(f"not a MessageSendParams: {exc.errors()[0]['msg']}") from None
    limit = legacy.configuration.history_length if legacy.configuration else None
    return conversions.to_core_message(legacy.message), _history_length(limit)


def _history_length(limit: int | None) -> int | None:
    """historyLength as A2A defines it: unset, no limit (the task's own bounds hold); 0, no
    history; n, the n most recent messages; negative is invalid."""
    if limit is not None and limit < 0:
        raise InvalidParamsError("historyLength must be non-negative")
    return limit


def _task_query(params: dict[str, Any], version: str, *, with_history: bool) -> tuple[str, int | None]:
    """The task id (and, for a get, how much history) a GetTask / CancelTask asks for."""
    if version == V03:
        model = types_v03.TaskQueryParams if with_history else types_v03.TaskIdParams
        try:
            legacy = model.model_validate(params)
        except ValidationError as exc:
            raise InvalidParamsError(f"invalid params: {exc.errors()[0]['msg']}") from None
        return legacy.id, _history_length(getattr(legacy, "history_length", None))
    try:
        if with_history:
            query = from_json(params, GetTaskRequest(), ignore_unknown_fields=True)
            limit = query.history_length if query.HasField("history_length") else None
            task_id = query.id
        else:
            task_id, limit = from_json(params, CancelTaskRequest(), ignore_unknown_fields=True).id, None
    except ParseError as exc:
        raise InvalidParamsError(f"invalid params: {exc}") from None
    if not task_id:
        raise InvalidParamsError("params.id (the task id) is required")
    return task_id, _history_length(limit)


def _task(ctx: flows.Ctx, task_id: str) -> A2aTask:
    task = a2a_task_get(task_id=task_id, agent=ctx.agent)
    if task is None:
        raise TaskNotFoundError(f"task {task_id} not found at this endpoint")
    return task


def task_proto(task: A2aTask, history_length: int | None = None) -> Task:
    """The stored task as an A2A 1.0 Task."""
    history = list(task.history)
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    status: dict[str, Any] = {
        "state": "TASK_STATE_" + task.state.upper().replace("-", "_"),
        "timestamp": task.updated_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    if task.status_message:
        status["message"] = task.status_message
    body = {
        "id": str(task.id),
        "contextId": task.context_id,
        "status": status,
        "artifacts": task.artifacts,
        "history": history,
        "metadata": task.metadata,
    }
    return from_json(body, Task())


def _task_out(task: Task, version: str, *, wrap: bool) -> dict[str, Any]:
    if version == V03:
        return conversions.to_compat_task(task).model_dump(mode="json", by_alias=True, exclude_none=True)
    if wrap:
        return to_json(SendMessageResponse(task=task))
    return to_json(task)
