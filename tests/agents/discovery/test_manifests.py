from __future__ import annotations

import pytest
from a2a.compat.v0_3 import types as types_v03
from a2a.types import AgentCard
from google.protobuf.json_format import ParseDict

from catalog.products.registry import specs_all

pytestmark = pytest.mark.django_db


def test_agent_card_is_a_valid_a2a_card(api):
    card = api.get("/.well-known/agent-card.json").json()
    parsed = ParseDict(card, AgentCard())  # strict: unknown fields or wrong types raise
    assert parsed.name and parsed.skills and parsed.supported_interfaces[0].url.endswith("/api/a2a/agenthub")
    skill_ids = {s.id for s in parsed.skills}
    # The skills the JSON-RPC endpoint answers: the products on sale and the free catalogs.
    assert {"news_catalog", "news_unlock", "morning_brief"} <= skill_ids
    # The 0.3 form of the same card (tests/agents/a2a/test_a2a_jsonrpc.py checks both in detail).
    legacy = types_v03.AgentCard.model_validate(api.get("/.well-known/agent.json").json())
    assert {s.id for s in legacy.skills} == skill_ids


def test_erc8004_registration_file_points_at_real_endpoints(api):
    card = api.get("/api/a2a/registry/erc8004/agent-card").json()
    assert card["type"].endswith("#registration-v1")
    services = {ep["name"]: ep["endpoint"] for ep in card["services"]}
    # The A2A card (.well-known/agent-card.json) and /mcp are served by the A2A and MCP surfaces.
    assert api.get(services["web"].removeprefix("http://testserver")).status_code == 200, services
    assert services["A2A"] == "http://testserver/.well-known/agent-card.json"
    assert services["MCP"] == "http://testserver/mcp"


def test_manifest_and_mcp_catalog_list_every_live_sku(api):
    manifest = api.get("/api/a2a/ai-agent.json").json()
    assert len(manifest["skus"]) == len(specs_all())
    tools = api.get("/api/a2a/mcp/catalog").json()["tools"]
    news = [t for t in tools if t["name"] == "news_unlock"][0]
    assert news["inputSchema"]["required"] == ["news_id"] and news["price_usdc"] == 0.1
