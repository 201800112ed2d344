"""ERC-8004: the registration file in the EIP's registration-v1 form, and `manage.py
erc8004_register` putting the service's agent in the project's identity registry on anvil:
tokenURI is the registration file's URL, the signer owns the token, a second run updates the
URI instead of minting a second agent, and the three files then name the agent and registry."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from pydantic import BaseModel, ConfigDict, HttpUrl
from web3 import Web3
from web3.logs import DISCARD

from agents.erc8004.chain import registry_contract
from agents.erc8004.schemas import REGISTRATION_V1
from agents.models import Erc8004Registration
from billing.chain.localchain import DEPLOYER, dev_account

pytestmark = pytest.mark.django_db

FILES = (
    "/.well-known/agent-registration.json",
    "/api/a2a/registry/erc8004/agent-card",
    "/api/a2a/registry/erc8004",
)


class Service(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    endpoint: str
    version: str | None = None


class Registration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agentId: int
    agentRegistry: str


class RegistrationV1(BaseModel):
    """The EIP-8004 registration file: required type/name/description/image/services, with
    x402Support, active, registrations and supportedTrust."""

    type: str
    name: str
    description: str
    image: str
    services: list[Service]
    x402Support: bool
    active: bool
    registrations: list[Registration]
    supportedTrust: list[str]


def test_registration_files_are_registration_v1(api):
    for path in FILES:
        body = api.get(path).json()
        doc = RegistrationV1.model_validate(body)
        assert doc.type == REGISTRATION_V1 == "https://eips.ethereum.org/EIPS/eip-8004#registration-v1"
        services = {s.name: s.endpoint for s in doc.services}
        assert services == {
            "A2A": "http://testserver/.well-known/agent-card.json",
            "MCP": "http://testserver/mcp",
            "web": "http://testserver/api/a2a/discovery/storefront",
        }, path
        assert doc.x402Support is True and doc.active is True and doc.registrations == [], path
        assert doc.supportedTrust == ["reputation"] and doc.name and doc.description, path
    discovery = api.get("/api/a2a/registry/erc8004").json()
    assert discovery["registered"] is False and discovery["agent_id"] is None
    assert discovery["registration_file"] == "http://testserver/.well-known/agent-registration.json"


def test_the_file_is_exactly_registration_v1_without_extras(api):
    body = api.get("/.well-known/agent-registration.json").json()
    assert set(body) == {
        "type",
        "name",
        "description",
        "image",
        "services",
        "x402Support",
        "active",
        "registrations",
        "supportedTrust",
    }
    HttpUrl(body["services"][0]["endpoint"])


def test_register_on_anvil_is_idempotent_and_published(chain, api, settings):
    settings.ERC8004_REGISTRY_RPC_URL = chain.url
    settings.ERC8004_REGISTRY_CHAIN_ID = 8453
    settings.ERC8004_REGISTRY_ADDRESS = ""
    settings.ERC8004_SIGNER_PRIVATE_KEY = ""
    out = StringIO()
    call_command("erc8004_register", "--base-url", "http://testserver", stdout=out)
    assert out.getvalue().startswith("deployed+registered: agent 1 in eip155:8453:0x")
    row = Erc8004Registration.objects.get()
    registry = registry_contract(chain.w3, row.registry_address)
    signer = dev_account(DEPLOYER).address
    uri = "http://testserver/.well-known/agent-registration.json"
    assert registry.functions.tokenURI(int(row.agent_id)).call() == uri == row.agent_uri
    assert registry.functions.ownerOf(int(row.agent_id)).call() == signer == row.owner_address
    receipt = chain.w3.eth.get_transaction_receipt(row.tx_hash)
    assert receipt["status"] == 1 and Web3.to_checksum_address(receipt["to"]) == row.registry_address
    assert registry.functions.totalAgents().call() == 1

    # The same URI again: nothing is sent; a new base URL: setAgentURI on the same agent.
    out = StringIO()
    call_command("erc8004_register", "--base-url", "http://testserver", stdout=out)
    assert out.getvalue().startswith("unchanged: agent 1")
    call_command("erc8004_register", "--base-url", "https://agents.example", stdout=StringIO())
    row.refresh_from_db()
    new_uri = "https://agents.example/.well-known/agent-registration.json"
    assert Erc8004Registration.objects.count() == 1 and registry.functions.totalAgents().call() == 1
    assert registry.functions.tokenURI(int(row.agent_id)).call() == new_uri == row.agent_uri
    assert row.last_tx_hash.startswith("0x") and row.last_tx_hash != row.tx_hash

    # The three files now name the agent and the registry.
    agent_registry = f"eip155:8453:{row.registry_address}"
    for path in FILES:
        body = api.get(path).json()
        assert body["registrations"] == [{"agentId": 1, "agentRegistry": agent_registry}], path
    discovery = api.get("/api/a2a/registry/erc8004").json()
    assert discovery["registered"] is True and discovery["agent_id"] == 1
    assert discovery["identity_registry"] == row.registry_address


def test_registry_contract_metadata_and_permissions(chain):
    from agents.erc8004.chain import registry_deploy

    owner, other = dev_account(DEPLOYER), dev_account(3)
    address = registry_deploy(chain.w3, owner)
    registry = registry_contract(chain.w3, address)
    tx = registry.functions.register("ipfs://a", [("role", b"market-intel")]).transact(
        {"from": owner.address}
    )
    receipt = chain.w3.eth.wait_for_transaction_receipt(tx)
    (event,) = registry.events.Registered().process_receipt(receipt, errors=DISCARD)
    agent_id = event["args"]["agentId"]
    assert (agent_id, event["args"]["agentURI"], event["args"]["owner"]) == (1, "ipfs://a", owner.address)
    assert registry.functions.getMetadata(agent_id, "role").call() == b"market-intel"
    assert registry.functions.balanceOf(owner.address).call() == 1
    assert registry.functions.supportsInterface("0x80ac58cd").call() is True
    with pytest.raises(Exception, match="not the agent's owner"):
        registry.functions.setAgentURI(agent_id, "ipfs://evil").call({"from": other.address})
    assert registry.functions.tokenURI(agent_id).call() == "ipfs://a"


def test_register_refuses_a_foreign_chain_without_a_registry(settings, chain):
    from django.core.management.base import CommandError

    settings.ERC8004_REGISTRY_RPC_URL = chain.url
    settings.ERC8004_REGISTRY_CHAIN_ID = 1
    with pytest.raises(CommandError, match="not ERC8004_REGISTRY_CHAIN_ID 1"):
        call_command("erc8004_register", "--base-url", "http://testserver", stdout=StringIO())
    settings.ERC8004_REGISTRY_CHAIN_ID = 8453
    settings.ERC8004_REGISTRY_ADDRESS = "0x000000000000000000000000000000000000dEaD"
    with pytest.raises(CommandError, match="no contract at ERC8004_REGISTRY_ADDRESS"):
        call_command("erc8004_register", "--base-url", "http://testserver", stdout=StringIO())
    assert Erc8004Registration.objects.count() == 0


def test_staff_read_the_registration_and_the_answers_in_the_admin(client, chain, settings):
    from django.contrib.auth import get_user_model

    from agents.services import agent_interaction_record

    settings.ERC8004_REGISTRY_RPC_URL = chain.url
    settings.ERC8004_REGISTRY_CHAIN_ID = 8453
    settings.ERC8004_REGISTRY_ADDRESS = ""
    call_command("erc8004_register", "--base-url", "https://agents.example", stdout=StringIO())
    agent_interaction_record(
        agent="news", surface="chat", status_code=200, latency_ms=12, skill="news-catalog"
    )
    client.force_login(get_user_model().objects.create_superuser("staff", "s@example.com", "pw-not-used"))
    page = client.get("/admin/agents/erc8004registration/")
    row = Erc8004Registration.objects.get()
    assert page.status_code == 200 and row.registry_address in page.content.decode()
    assert client.get(f"/admin/agents/erc8004registration/{row.pk}/change/").status_code == 200
    page = client.get("/admin/agents/agentinteraction/")
    assert page.status_code == 200 and "news-catalog" in page.content.decode()


def test_local_stack_start_logs_a_failed_registration_and_goes_on(capsys):
    import os

    from a2a_service.scripts.devstack import erc8004_registered
    from billing.chain.localchain import free_port

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
        "ERC8004_REGISTRY_RPC_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens
    }
    erc8004_registered(env, "8000")
    assert "erc8004_register failed (the stack runs without it)" in capsys.readouterr().out
