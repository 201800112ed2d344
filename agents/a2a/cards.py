"""The agent cards: A2A 1.0 at /.well-known/agent-card.json and its 0.3 form at
/.well-known/agent.json, from one description (a2a-sdk converts the 1.0 card to 0.3). Both
list the skills the JSON-RPC endpoint answers now (agents/a2a/skills.py), declare the X-API-Key
scheme (credits) and the a2a-x402 extension (x402 payments)."""

from __future__ import annotations

from a2a.compat.v0_3.conversions import to_compat_agent_card
from a2a.types import AgentCard
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from agents.a2a import schemas as s
from agents.a2a.extension import X402_EXTENSION_DESCRIPTION, X402_EXTENSION_URI
from agents.a2a.proto import from_json
from agents.a2a.skills import skills_all
from agents.discovery.identity import POSITIONING, SERVICE_NAME, SERVICE_VERSION
from billing.x402.challenge import x402_extensions, x402_schemes
from catalog.selectors.payment import absolute

HUB_PATH = "/api/a2a/agenthub"
# The 0.3 interface of the same endpoint (message/send, tasks/get): 0.3 cards say "0.3.0".
PROTOCOL_VERSION_0_3 = "0.3.0"
API_KEY_SCHEME = "apiKey"
INPUT_MODES = ["application/json", "text/plain"]
OUTPUT_MODES = ["application/json"]


def agent_card_v1(base: str) -> s.AgentCardV1Out:
    url = absolute(base, HUB_PATH)
    return s.AgentCardV1Out(
        name=SERVICE_NAME,
        description=POSITIONING,
        supportedInterfaces=[
            s.AgentInterfaceV1(
                url=url, protocolBinding=TransportProtocol.JSONRPC.value, protocolVersion=PROTOCOL_VERSION_1_0
            ),
            s.AgentInterfaceV1(
                url=url, protocolBinding=TransportProtocol.JSONRPC.value, protocolVersion=PROTOCOL_VERSION_0_3
            ),
        ],
        provider=s.AgentProviderV1(organization=SERVICE_NAME, url=base),
        version=SERVICE_VERSION,
        documentationUrl=absolute(base, "/api/a2a/openapi.json"),
        capabilities=s.AgentCapabilitiesV1(
            streaming=False,
            pushNotifications=False,
            extensions=[
                # Not required: free skills, and paid ones paid by X-API-Key, need no x402.
                s.AgentExtensionV1(
                    uri=X402_EXTENSION_URI,
                    description=X402_EXTENSION_DESCRIPTION,
                    required=False,
                    # The x402 schemes and extensions a payment-required task may offer, as
                    # /.well-known/x402 lists them per resource.
                    params={"x402Version": 2, "schemes": x402_schemes(), "extensions": x402_extensions()},
                )
            ],
        ),
        securitySchemes={
            API_KEY_SCHEME: s.SecuritySchemeV1(
                apiKeySecurityScheme=s.ApiKeySchemeV1(
                    description="Optional: pays paid skills from prepaid credits instead of x402. Get a key at "
                    f"{absolute(base, '/api/a2a/account/register')}; free skills need none.",
                    location="header",
                    name="X-API-Key",
                )
            )
        },
        defaultInputModes=INPUT_MODES,
        defaultOutputModes=OUTPUT_MODES,
        skills=[
            s.AgentSkillV1(
                id=x.id,
                name=x.name,
                description=x.description,
                tags=x.tags,
                examples=x.examples,
                inputModes=INPUT_MODES,
                outputModes=OUTPUT_MODES,
            )
            for x in skills_all()
        ],
    )


def agent_card_proto(base: str) -> AgentCard:
    """The 1.0 card as a2a-sdk reads it (strict: an unknown field or a wrong type raises)."""
    return from_json(agent_card_v1(base).model_dump(mode="json", by_alias=True), AgentCard())


def agent_card_v03(base: str) -> s.AgentCardV03Out:
    compat = to_compat_agent_card(agent_card_proto(base))
    return s.AgentCardV03Out.model_validate(compat.model_dump())
