"""Catalog agents list only what their own JSON-RPC endpoint answers (issue 23 item 7): every
skill of /api/a2a/agents/catalog (and of each agent's manifest), sent to that agent as a
SendMessage naming it, completes (free) or asks for its price (paid: input-required with the
x402 requirements; or, when the product has nothing to deliver now, fails uncharged with the
reason), and is never refused as an unknown skill."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from agents.discovery.views import FREE_CAPABILITIES
from billing.models import Payment
from catalog.models import CatalogAgent, NewsItem, Sku
from catalog.products.registry import product_has_content
from catalog.selectors.skus import live_skus

pytestmark = pytest.mark.django_db


def send(api, slug: str, skill: str, params: dict[str, Any]) -> dict[str, Any]:
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": skill, "params": params}}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    resp = api.post(f"/api/a2a/agents/{slug}", body, format="json")
    assert resp.status_code == 200, resp.content
    return resp.json()


def example_params(skill: dict[str, Any], news_id: int) -> dict[str, Any]:
    """The params of the skill's own data-part example, placeholders filled."""
    [example] = [e for e in skill["examples"] if e.startswith("data part: ")]
    params = json.loads(example.removeprefix("data part: ")).get("params", {})
    if params.get("news_id") == "<integer>":
        params["news_id"] = news_id
    assert not any(isinstance(v, str) and v.startswith("<") for v in params.values()), (skill["id"], params)
    return params


def test_every_skill_a_catalog_agent_lists_is_callable_at_that_agent(api):
    item = NewsItem.objects.create(title="NVDA beats", teaser="t", body="b", category="equity")
    catalog = api.get("/api/a2a/agents/catalog").json()
    assert {a["slug"] for a in catalog["agents"]} == set(CatalogAgent.objects.values_list("slug", flat=True))
    on_sale = {x.sku: x for x in live_skus()}
    called = 0
    for agent in catalog["agents"]:
        row = CatalogAgent.objects.get(slug=agent["slug"])
        ids = [s["id"] for s in agent["skills"]]
        # Exactly its SKUs on sale, then its free catalogs: nothing decorative.
        assert ids == [x for x in on_sale if row.skus.filter(sku=x).exists()] + row.free_skills, agent["slug"]
        manifest = api.get(f"/api/a2a/agents/{agent['slug']}/manifest").json()
        assert [s["id"] for s in manifest["skills"]] == ids
        for skill in agent["skills"]:
            answer = send(api, agent["slug"], skill["id"], example_params(skill, item.id))
            assert "error" not in answer, (agent["slug"], skill["id"], answer)
            task = answer["result"]["task"]
            state, meta = task["status"]["state"], task["status"]["message"].get("metadata", {})
            called += 1
            if skill["id"] in FREE_CAPABILITIES:
                assert skill["price_usdc"] is None and "free" in skill["tags"]
                assert state == "TASK_STATE_COMPLETED", (agent["slug"], skill["id"], task["status"])
                continue
            sku = on_sale[skill["id"]]
            assert skill["price_usdc"] == sku.price_usdc and f"{sku.price_usdc:g} USDC" in skill["description"]
            available, reason = product_has_content(sku.sku)
            if available:
                assert state == "TASK_STATE_INPUT_REQUIRED", (agent["slug"], skill["id"], task["status"])
                required = PaymentRequired.model_validate(meta[x.REQUIRED])
                price = item.price_atomic if sku.sku == "news_unlock" else sku.price_atomic
                assert required.accepts[0].amount == str(price), skill["id"]
            else:
                # Nothing to deliver now: no payment asked for nothing (issue 23 item 8).
                assert state == "TASK_STATE_FAILED" and meta.get("charged") is False, (skill["id"], task)
                assert reason in task["status"]["message"]["parts"][0]["text"]
    assert called >= 15 and Payment.objects.count() == 0


def test_a_skill_an_agent_does_not_sell_is_refused_naming_its_skills_and_the_hub(api):
    answer = send(api, "grant-scout", "morning_brief", {})
    error = answer["error"]
    assert error["code"] == -32602
    assert "grant-scout does not sell skill 'morning_brief'" in error["message"]
    assert "grant_scout_desk" in error["message"] and "/api/a2a/agenthub" in error["message"]
    # The decorative ids of old are neither listed nor taken.
    catalog = api.get("/api/a2a/agents/catalog").json()
    listed = {s["id"] for a in catalog["agents"] for s in a["skills"]}
    assert not listed & {"session-packs", "grant-search", "news-catalog", "prediction-catalog", "desk-routing"}
    assert "error" in send(api, "news", "news-catalog", {})


def test_a_free_skill_name_that_names_nothing_is_not_listed(api):
    agent = CatalogAgent.objects.get(slug="prediction")
    agent.free_skills = ["prediction-catalog", "telemetry_status"]
    agent.save()
    Sku.objects.filter(sku="prediction_event_graph").update(status=Sku.Status.DISABLED)
    [row] = [a for a in api.get("/api/a2a/agents/catalog").json()["agents"] if a["slug"] == "prediction"]
    ids = [s["id"] for s in row["skills"]]
    assert "prediction-catalog" not in ids and ids[-1] == "telemetry_status"
    assert "prediction_event_graph" not in ids  # switched off: not on sale, not listed
    assert send(api, "prediction", "telemetry_status", {})["result"]["task"]["status"]["state"] == (
        "TASK_STATE_COMPLETED"
    )
