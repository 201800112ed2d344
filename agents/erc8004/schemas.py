"""The ERC-8004 registration file (EIP-8004 "registration-v1") and the registry discovery
document that extends it."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from a2a_service.core.schemas import Out

REGISTRATION_V1: Final = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1"


class Erc8004ServiceOut(Out):
    name: str = Field(description="A2A, MCP, web, ... (the EIP's service names)")
    endpoint: str
    version: str | None = None


class Erc8004RegistrationRefOut(Out):
    agentId: int = Field(description="the agent's ERC-721 token id in the identity registry")
    agentRegistry: str = Field(description="eip155:<chainId>:<identity registry address>")


class Erc8004RegistrationOut(Out):
    type: Literal["https://eips.ethereum.org/EIPS/eip-8004#registration-v1"] = REGISTRATION_V1
    name: str
    description: str
    image: str
    services: list[Erc8004ServiceOut]
    x402Support: bool
    active: bool = Field(description="true while the service has something on sale")
    registrations: list[Erc8004RegistrationRefOut] = Field(
        description="where this agent is registered on chain; empty until `manage.py erc8004_register` ran"
    )
    supportedTrust: list[str]


class Erc8004RegistryOut(Erc8004RegistrationOut):
    """The registration file plus where to find it and the registry it is (or will be) in."""

    standard: Literal["ERC-8004"] = "ERC-8004"
    registration_file: str = Field(description="the agentURI the registry's tokenURI points at")
    chain_id: int
    identity_registry: str | None = Field(description="the registry address; null until registered")
    agent_id: int | None
    registered: bool
    agent_wallet: str = Field(description="CAIP-10 address that receives payments")
