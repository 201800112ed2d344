"""The three ERC-8004 documents: /.well-known/agent-registration.json and
/api/a2a/registry/erc8004/agent-card (the registration file), /api/a2a/registry/erc8004 (the
file plus the registry discovery fields). The registrations come from the rows
`manage.py erc8004_register` wrote for the configured registry chain."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from agents.discovery.identity import POSITIONING, SERVICE_NAME
from agents.erc8004 import schemas as s
from agents.models import Erc8004Registration
from catalog.selectors.payment import absolute
from catalog.selectors.skus import on_sale

REGISTRATION_PATH = "/.well-known/agent-registration.json"
A2A_CARD_PATH = "/.well-known/agent-card.json"
MCP_PATH = "/mcp"
WEB_PATH = "/api/a2a/discovery/storefront"
A2A_PROTOCOL_VERSION = "1.0"


@cache
def mcp_protocol_version() -> str:
    """The newest MCP protocol version of the mcp package our server runs (it negotiates older
    ones). Read on first use: importing the MCP SDK builds about 550 pydantic models, a second of
    every process's start that only an MCP call or this document needs."""
    from mcp_types import LATEST_PROTOCOL_VERSION

    return LATEST_PROTOCOL_VERSION


def registration_url(base: str) -> str:
    return absolute(base, REGISTRATION_PATH)


def registrations() -> list[Erc8004Registration]:
    """Our registrations on the configured registry chain (and registry, when one is set)."""
    rows = Erc8004Registration.objects.filter(chain_id=settings.ERC8004_REGISTRY_CHAIN_ID)
    if settings.ERC8004_REGISTRY_ADDRESS:
        rows = rows.filter(registry_address__iexact=settings.ERC8004_REGISTRY_ADDRESS)
    return list(rows)


def registration_file(base: str) -> s.Erc8004RegistrationOut:
    return s.Erc8004RegistrationOut(**_fields(base, registrations()))


def _fields(base: str, rows: list[Erc8004Registration]) -> dict[str, object]:
    return {
        "name": SERVICE_NAME,
        "description": POSITIONING,
        "image": settings.ERC8004_IMAGE_URL,
        "services": [
            s.Erc8004ServiceOut(
                name="A2A", endpoint=absolute(base, A2A_CARD_PATH), version=A2A_PROTOCOL_VERSION
            ),
            s.Erc8004ServiceOut(name="MCP", endpoint=absolute(base, MCP_PATH), version=mcp_protocol_version()),
            # The service has no page at "/": its front door is the storefront document.
            s.Erc8004ServiceOut(name="web", endpoint=absolute(base, WEB_PATH)),
        ],
        "x402Support": True,
        "active": on_sale().exists(),
        "registrations": [
            s.Erc8004RegistrationRefOut(agentId=int(r.agent_id), agentRegistry=r.agent_registry) for r in rows
        ],
        "supportedTrust": ["reputation"],
    }


def registry_discovery(base: str) -> s.Erc8004RegistryOut:
    rows = registrations()
    current = rows[0] if rows else None
    return s.Erc8004RegistryOut(
        **_fields(base, rows),
        registration_file=registration_url(base),
        chain_id=settings.ERC8004_REGISTRY_CHAIN_ID,
        identity_registry=current.registry_address
        if current
        else (settings.ERC8004_REGISTRY_ADDRESS or None),
        agent_id=int(current.agent_id) if current else None,
        registered=current is not None,
        agent_wallet=f"eip155:{settings.CHAIN_ID}:{settings.TREASURY_ADDRESS}",
    )
