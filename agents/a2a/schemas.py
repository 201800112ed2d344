"""Bodies of the A2A routes, for the OpenAPI description: the 1.0 agent card (the JSON a2a-sdk
parses into a2a.types.AgentCard), the 0.3 card (a2a-sdk's own 0.3 model) and the JSON-RPC
envelopes (generic: the A2A objects inside are the protocol's, see the card's protocolVersion)."""

from __future__ import annotations

from typing import Any, Literal

from a2a.compat.v0_3 import types as types_v03
from pydantic import Field, RootModel

from a2a_service.core.schemas import Out
from agents.discovery.schemas import ChatOut
from catalog.api.bodies import ChatBody


# --- the 1.0 card ------------------------------------------------------------------------------
class AgentInterfaceV1(Out):
    url: str
    protocolBinding: str = Field(description="JSONRPC")
    protocolVersion: str


class AgentProviderV1(Out):
    organization: str
    url: str


class AgentExtensionV1(Out):
    uri: str
    description: str
    required: bool
    params: dict[str, Any] | None = None


class AgentCapabilitiesV1(Out):
    streaming: bool
    pushNotifications: bool
    extensions: list[AgentExtensionV1]


class ApiKeySchemeV1(Out):
    description: str
    location: Literal["header"]
    name: str


class SecuritySchemeV1(Out):
    apiKeySecurityScheme: ApiKeySchemeV1


class AgentSkillV1(Out):
    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str]
    inputModes: list[str]
    outputModes: list[str]


class AgentCardV1Out(Out):
    """A2A 1.0 agent card."""

    name: str
    description: str
    supportedInterfaces: list[AgentInterfaceV1]
    provider: AgentProviderV1
    version: str
    documentationUrl: str
    capabilities: AgentCapabilitiesV1
    securitySchemes: dict[str, SecuritySchemeV1]
    defaultInputModes: list[str]
    defaultOutputModes: list[str]
    skills: list[AgentSkillV1]


# --- the 0.3 card ------------------------------------------------------------------------------
class AgentCardV03Out(types_v03.AgentCard):
    """A2A 0.3 agent card (a2a-sdk's a2a.compat.v0_3.types.AgentCard)."""

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        # 0.3 omits unset optional fields (its JSON schema has no nulls).
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


# --- JSON-RPC ----------------------------------------------------------------------------------
class JsonRpcRequestIn(Out):
    """A JSON-RPC 2.0 request. Methods: SendMessage, GetTask, CancelTask (A2A 1.0) and
    message/send, tasks/get, tasks/cancel (A2A 0.3). A body without "jsonrpc" is a chat message."""

    jsonrpc: Literal["2.0"]
    id: str | int | None = None
    method: str
    params: dict[str, Any] = Field(
        default_factory=dict,
        description='SendMessage: {"message": {"messageId", "role": "ROLE_USER", "parts": [{"data": '
        '{"skill": "<skill id>", "params": {...}}} or {"text": "..."}], "taskId"?, "metadata"?}}; '
        'GetTask: {"id": "<task id>", "historyLength"?}',
    )


class JsonRpcErrorOut(Out):
    code: int = Field(
        description="-32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid "
        "params, -32603 internal error, -32001 task not found, -32002 task not cancelable, -32004 "
        "unsupported operation"
    )
    message: str
    data: Any = None


class JsonRpcResponseOut(Out):
    """A JSON-RPC 2.0 response: `result` (SendMessage: {"task": Task} or {"message": Message};
    GetTask: Task; 0.3: the Task or Message itself) or `error`."""

    jsonrpc: Literal["2.0"]
    id: str | int | None
    result: dict[str, Any] | None = None
    error: JsonRpcErrorOut | None = None


# --- the agent endpoints' POST: chat, or (a body with "jsonrpc") A2A JSON-RPC ---------------------
class ChatOrJsonRpcIn(RootModel[ChatBody | JsonRpcRequestIn]):
    """A chat message, or an A2A JSON-RPC 2.0 request (any body with a "jsonrpc" member)."""


class ChatOrJsonRpcOut(RootModel[ChatOut | JsonRpcResponseOut]):
    """The chat reply, or the JSON-RPC response."""
