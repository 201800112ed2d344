"""Every free GET answers 200 with its documented JSON, built from the database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from billing.models import BillingSettings, Payment
from catalog.models import EditorialPiece, NewsItem, Sku, Teaser
from catalog.products.registry import products_built, specs_all
from catalog.seed.content import interface_teaser_names
from tests.support.spec_operations import SPEC_OPERATIONS

pytestmark = pytest.mark.django_db

PARAMS = {"{slug}": "news", "{pack_id}": "langchain", "{name}": "morning-brief"}
FREE_PREFIXES_EXCLUDED = ("/api/a2a/x402/",)
CREDIT_GETS = {
    "/api/a2a/signals",
    "/api/a2a/tokenized/signals",
    "/api/a2a/tokenized/premium",
    "/api/a2a/tokenized/scalp",
    "/api/a2a/equity/intel",
    "/api/a2a/equity/scalp",
    "/api/a2a/sentiment",
    "/api/a2a/bounties",
    "/api/a2a/intel/latest",
    "/api/a2a/intel/history",
    "/api/a2a/twap/preview",
    "/api/a2a/mm/hint",
    "/api/a2a/signals/copy-trade",
    "/api/a2a/exchange-spreads",
    "/api/a2a/spread-snapshot",
    "/api/a2a/telemetry/detail",
    "/api/a2a/account/whale/status",
    "/api/a2a/session/status",
    "/api/a2a/session/call/{sku}",
}
FREE_GETS = sorted(
    p
    for m, p in SPEC_OPERATIONS
    if m == "GET" and not p.startswith(FREE_PREFIXES_EXCLUDED) and p not in CREDIT_GETS
) + ["/api/a2a/x402/status"]


def fill(path: str) -> str:
    for k, v in PARAMS.items():
        path = path.replace(k, v)
    return path


@pytest.mark.parametrize("path", FREE_GETS)
def test_free_get_answers_200_json(api, path):
    resp = api.get(fill(path))
    assert resp.status_code == 200, resp.content[:300]
    if path.endswith("{pack_id}"):
        assert resp["Content-Type"].startswith("text/markdown")
        assert "X-API-Key" in resp.content.decode() and "/api/a2a/x402/" in resp.content.decode()
    else:
        assert resp["Content-Type"] == "application/json"
        assert isinstance(resp.json(), dict)


def test_there_are_exactly_28_interface_teasers_and_each_answers(api):
    assert len(interface_teaser_names()) == 28
    for name in interface_teaser_names():
        body = api.get(f"/api/a2a/teaser/{name}").json()
        assert body["name"] == name and body["title"] and body["summary"]


def test_unknown_teaser_pack_and_agent_are_404_json(api):
    for path in [
        "/api/a2a/teaser/nope",
        "/api/a2a/discovery/agent-frameworks/nope",
        "/api/a2a/agents/nope/status",
        "/api/a2a/agents/nope/manifest",
        "/api/a2a/agents/nope",
        "/no/such/path",
    ]:
        resp = api.get(path)
        assert resp.status_code == 404, path
        assert resp.json()["detail"]


def test_four_packs_really_teach_the_service(api):
    packs = api.get("/api/a2a/discovery/agent-frameworks").json()
    assert packs["count"] == 4
    for pack in packs["packs"]:
        text = api.get(pack["skill_md"].replace("http://testserver", "")).content.decode()
        for must in (
            "402",
            "PAYMENT-SIGNATURE",
            "X-API-Key",
            "/api/a2a/account/register",
            "session/call",
            "http://testserver/api/a2a/discovery/storefront",
        ):
            assert must in text, (pack["pack_id"], must)
        assert "{base_url}" not in text


def test_catalog_agents_are_the_five_slugs(api):
    body = api.get("/api/a2a/agents/catalog").json()
    assert {a["slug"] for a in body["agents"]} == {
        "m2m-desk",
        "grant-scout",
        "equity-news",
        "news",
        "prediction",
    }
    for a in body["agents"]:
        assert a["name"] and a["description"] and a["skills"]


# --- limits ---------------------------------------------------------------------------------
LIMITED = {
    "/api/a2a/news/catalog": 40,
    "/api/a2a/equity/catalog": 40,
    "/api/a2a/predictionvenue/catalog": 40,
    "/api/a2a/prediction/catalog": 40,
    "/api/a2a/market-agents/news": 20,
}


@pytest.mark.parametrize("path", LIMITED)
@pytest.mark.parametrize("bad", ["0", "-1", "201", "abc", "1.5", ""])
def test_limit_out_of_range_or_not_integer_is_422(api, path, bad):
    resp = api.get(path, {"limit": bad})
    assert resp.status_code == 422
    detail = resp.json()["detail"]
    assert detail[0]["loc"] == ["query", "limit"] and detail[0]["msg"] and detail[0]["type"]


def _news(n: int, category: str = "general", group: str = "") -> list[NewsItem]:
    return [
        NewsItem.objects.create(
            title=f"t{i}", teaser=f"teaser {i}", body=f"body {i}", category=category, market_group=group
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "path,default,category,group",
    [
        ("/api/a2a/news/catalog", 40, "general", ""),
        ("/api/a2a/equity/catalog", 40, "equity", ""),
        ("/api/a2a/market-agents/news", 20, "crypto", "macro-desk"),
    ],
)
def test_limit_defaults(api, path, default, category, group):
    _news(default + 5, category, group)
    assert len(api.get(path).json()["items"]) == default
    assert len(api.get(path, {"limit": 3}).json()["items"]) == 3


# --- exact shapes ---------------------------------------------------------------------------
def test_news_catalog_has_exactly_the_documented_fields(api):
    crypto, equity = _news(1, "crypto")[0], _news(1, "equity")[0]
    body = api.get("/api/a2a/news/catalog").json()
    assert set(body) == {
        "items",
        "credit_billing_enabled",
        "teaser_only",
        "unlock_hint",
        "x402_unlock_hint",
        "payment_alternatives",
        "news_digest_x402",
        "news_digest_price_usdc",
        "agentverse_news",
        # Provenance of ingested data (issue 11), added to the documented fields.
        "as_of",
        "sources",
    }
    assert [i["id"] for i in body["items"]] == [equity.id, crypto.id]  # descending by ingestion
    item = body["items"][0]
    assert set(item) == {"id", "title", "teaser", "price_usdc", "ingested_at", "unlock"}
    assert item["price_usdc"] == 0.18 and body["items"][1]["price_usdc"] == 0.1
    assert "+" not in item["ingested_at"] and not item["ingested_at"].endswith("Z")
    assert item["unlock"] == f"/api/a2a/x402/news/unlock?news_id={equity.id}"
    assert body["teaser_only"] is True and body["news_digest_price_usdc"] == 0.1
    assert body["payment_alternatives"]["rails"] == ["x402_usdc_base"]
    assert body["payment_alternatives"]["skyfire"]["enabled"] is False
    assert set(body["payment_alternatives"]["x402"]) == {"network", "facilitator", "hint"}
    only_crypto = api.get("/api/a2a/news/catalog", {"category": "crypto"}).json()["items"]
    assert [i["id"] for i in only_crypto] == [crypto.id]


def test_news_catalog_hints_follow_the_credit_billing_switch(api):
    billing = BillingSettings.load()
    billing.credit_billing_enabled = False
    billing.save()
    body = api.get("/api/a2a/news/catalog").json()
    assert body["credit_billing_enabled"] is False and "requires x402" in body["unlock_hint"]
    m2m = api.get("/api/a2a/discovery/m2m").json()
    unlock = [e for e in m2m["credit_endpoints"] if e["url"].endswith("/unlock")][0]
    assert unlock["price_usdc"] == 0.0 and "free" in unlock["note"]


def test_topup_info_has_exactly_the_documented_fields(api):
    body = api.get("/api/a2a/account/topup-info").json()
    assert set(body) == {
        "chain",
        "token",
        "contract",
        "treasury_address",
        "min_deposit_usdc",
        "credit_bundle",
        "credit_prepay_guide_url",
        "payment_alternatives",
        "instructions",
        "steps",
        "examples",
    }
    assert body["token"] == "USDC" and body["min_deposit_usdc"] == 0.01
    bundle = body["credit_bundle"]
    assert set(bundle) == {
        "bundle_usdc",
        "bonus_pct",
        "bonus_usdc",
        "total_credits_usdc",
        "chain",
        "token",
        "register_endpoint",
        "topup_endpoint",
        "instructions",
    }
    assert (
        bundle["bundle_usdc"],
        bundle["bonus_pct"],
        bundle["bonus_usdc"],
        bundle["total_credits_usdc"],
    ) == (5.0, 10.0, 0.5, 5.5)
    step_fields = {
        "step",
        "title",
        "method",
        "url",
        "body_example",
        "response_fields",
        "from",
        "to",
        "min_usdc",
        "note",
        "header",
        "examples",
    }
    assert all(set(s) == step_fields for s in body["steps"])
    assert all(
        set(e) == {"name", "method", "url", "price_usdc_hint", "header_required"} for e in body["examples"]
    )


def test_storefront_has_exactly_the_documented_fields(api):
    body = api.get("/api/a2a/discovery/storefront").json()
    assert set(body) == {
        "positioning",
        "storefront_skus",
        "growth_skus",
        "prediction_entry_skus",
        "primary_entry",
        "live_desks",
        "case_study",
        "client_bundle",
        "credit_prepay",
        "credit_onboarding",
        "payment_address",
        "chain",
        "well_known_x402",
        "validate_hint",
    }
    sku_fields = {
        "sku",
        "path",
        "env_price",
        "default",
        "status",
        "marketplace_paid",
        "tier",
        "hero",
        "free_teaser",
        "headline",
        "price_usdc",
        "price_usdc_base",
        "intel_only",
        "product_type",
        "session_callable",
    }
    sales = {
        "sales_30d",
        "sales_30d_by_rail",
        "revenue_30d_usdc",
        "sales_all_time",
        "revenue_all_time_usdc",
        "trust_score",
    }
    for s in body["storefront_skus"]:
        assert set(s) == sku_fields | sales
    for s in body["growth_skus"] + body["prediction_entry_skus"]:
        assert set(s) == sku_fields
    assert set(body["credit_onboarding"]) == {"register_endpoint", "topup_endpoint", "instructions"}
    assert body["credit_prepay"]["total_credits_usdc"] == 5.5


def test_storefront_heroes_tiers_and_prices_match_the_document(api):
    # The storefront lists only what is on sale (answers 402): the document's heroes whose
    # product is built. The others keep their tier and price in the manifest, as coming_soon.
    from catalog.products.registry import products_built

    documented_heroes = {
        "news_unlock",
        "morning_brief_promo",
        "prediction_starter_bundle",
        "grid_range_desk",
        "m2m_session_desk",
        "risk_exit_alerts",
        "risk_decision_pack",
        "agent_subcontract_desk",
        "sentiment",
        "telemetry_detail",
        "copy_signals",
        "morning_brief",
        "defi_yield_scout",
    }
    documented_growth = {
        "mev_exec_hint_pack",
        "federation_signal_resale",
        "intent_solver_desk",
        "tokenized_auto_route",
    }
    built = products_built()
    body = api.get("/api/a2a/discovery/storefront").json()
    hero = {s["sku"]: s for s in body["storefront_skus"]}
    assert set(hero) == documented_heroes & built
    assert {s["sku"] for s in body["growth_skus"]} == documented_growth & built
    listed = {s["sku"]: s for s in api.get("/api/a2a/ai-agent.json").json()["skus"]}
    assert {k for k, v in listed.items() if v["hero"]} == documented_heroes
    assert {k for k, v in listed.items() if v["tier"] and not v["hero"]} == documented_growth
    assert listed["grid_range_desk"]["tier"] == "D" and listed["grid_range_desk"]["intel_only"] is True
    assert listed["grid_range_desk"]["status"] == (
        "live_x402" if "grid_range_desk" in built else "coming_soon"
    )
    assert hero["m2m_session_desk"]["price_usdc"] == 1.5 and hero["news_unlock"]["tier"] == "L"
    assert all(s["status"] == "live_x402" for s in body["storefront_skus"])
    assert body["primary_entry"] == "news_unlock"
    for s in body["storefront_skus"]:
        assert s["sales_30d"] == 0 and s["revenue_30d_usdc"] == 0 and s["trust_score"] == 0


def _pay(
    sku_name: str,
    state: str = Payment.State.SETTLED,
    days_ago: int = 0,
    payer: str = "0x" + "1" * 40,
    nonce: str | None = None,
) -> Payment:
    sku = Sku.objects.get(sku=sku_name)
    when = timezone.now() - timedelta(days=days_ago)
    p = Payment.objects.create(
        sku=sku,
        resource=sku.path,
        payer=payer,
        nonce=nonce or f"0x{Payment.objects.count():064x}",
        amount_atomic=sku.price_atomic,
        network="eip155:8453",
        asset="0x" + "a" * 40,
        pay_to="0x" + "b" * 40,
        state=state,
        settled_at=when if state == Payment.State.SETTLED else None,
    )
    Payment.objects.filter(pk=p.pk).update(created_at=when)
    return p


def test_published_figures_are_computed_from_payment_records(api):
    _pay("telemetry_detail")
    _pay("telemetry_detail", payer="0x" + "2" * 40)
    _pay("telemetry_detail", days_ago=40)
    _pay("telemetry_detail", state=Payment.State.FAILED)
    _pay("morning_brief")
    store = {s["sku"]: s for s in api.get("/api/a2a/discovery/storefront").json()["storefront_skus"]}
    st = store["telemetry_detail"]
    assert (st["sales_30d"], st["sales_all_time"]) == (2, 3)
    assert st["revenue_30d_usdc"] == pytest.approx(0.08) and st["revenue_all_time_usdc"] == pytest.approx(
        0.12
    )
    assert st["trust_score"] == pytest.approx(66.7)  # 2 delivered of 3 attempts in 30 days
    assert store["morning_brief"]["sales_30d"] == 1 and store["news_unlock"]["sales_30d"] == 0
    stats = api.get("/api/a2a/platform/stats").json()
    assert stats["sales_all_time"] == 4 and stats["paying_wallets"] == 2
    assert stats["revenue_all_time_usdc"] == pytest.approx(0.20)
    funnel = api.get("/api/a2a/monetization/conversion").json()
    assert funnel["sales"] == 3 and funnel["payment_attempts"] == 4 and funnel["skus_activated"] == 2
    assert funnel["revenue_usdc"]["24h"] == pytest.approx(0.16)
    status = api.get("/api/a2a/x402/status").json()
    # Every spec's SKU is switched on, some have a built product: only those answer 402 and are counted.
    assert Sku.objects.filter(status="live_x402").count() == len(specs_all())
    built = len(products_built())
    assert (
        status["live_skus"] == len(status["skus"]) == built
        and len(status["coming_soon"]) == len(specs_all()) - built
    )
    assert status["performance_30d"]["sales"] == 3


def test_figures_are_zero_when_nothing_happened(api):
    stats = api.get("/api/a2a/platform/stats").json()
    assert stats["sales_all_time"] == 0 and stats["revenue_all_time_usdc"] == 0 and stats["news_items"] == 0
    score = api.get("/api/a2a/program/scorecard-30d").json()
    assert score["overall"]["trades"] == 0 and score["overall"]["win_rate"] is None
    assert score["overall"]["kill_state"] == "no_data"
    funnel = api.get("/api/a2a/monetization/conversion").json()
    assert funnel["sales"] == 0 and funnel["challenge_to_sale_pct"] is None


def test_scorecard_is_computed_from_closed_desk_signals(api):
    from catalog.models import DeskSignal

    now = timezone.now()
    for pnl in [2.0, -1.0, 3.0, -4.0]:
        DeskSignal.objects.create(
            desk="grid",
            symbol="BTC/USDT",
            side="long",
            entry_price=1,
            exit_price=1,
            pnl_pct=pnl,
            closed_at=now,
        )
    body = api.get("/api/a2a/program/scorecard-30d").json()
    grid = body["desks"][0]
    assert grid["trades"] == 4 and grid["wins"] == 2 and grid["win_rate"] == 0.5
    assert (
        grid["expectancy_pct"] == 0.0 and grid["max_drawdown_pct"] == 4.0 and grid["kill_state"] == "active"
    )


def test_teaser_and_free_hits_are_counted_for_the_funnel(api):
    api.get("/api/a2a/teaser/morning-brief")
    api.get("/api/a2a/teaser/copy-signals")
    api.get("/api/a2a/news/catalog")
    hits = api.get("/api/a2a/monetization/conversion").json()["hits"]
    assert hits["teaser"] == 2 and hits["free"] >= 1


def test_morning_brief_free_shows_only_the_published_summary(api):
    assert api.get("/api/a2a/morning-brief").json()["available"] is False
    EditorialPiece.objects.create(
        kind="morning_brief",
        title="Brief",
        summary="short",
        body="the full secret text",
        published_at=timezone.now(),
    )
    EditorialPiece.objects.create(kind="morning_brief", title="Draft", summary="d", body="d")
    resp = api.get("/api/a2a/morning-brief")
    body = resp.json()
    assert body["available"] is True and body["title"] == "Brief" and body["summary"] == "short"
    assert "full secret text" not in resp.content.decode()


def test_disabled_sku_leaves_the_catalogs_and_its_path(api):
    # telemetry_detail is built (one of those on sale): switched off, it leaves every list.
    Sku.objects.filter(sku="telemetry_detail").update(status=Sku.Status.DISABLED)
    store = api.get("/api/a2a/discovery/storefront").json()
    assert "telemetry_detail" not in {s["sku"] for s in store["storefront_skus"]}
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == len(products_built()) - 1
    assert "telemetry_detail" not in {r["sku"] for r in api.get("/.well-known/x402").json()["resources"]}
    assert "telemetry_detail" not in {s["sku"] for s in api.get("/api/a2a/ai-agent.json").json()["skus"]}
    assert api.get("/api/a2a/x402/telemetry/detail").status_code == 404
    teaser = Teaser.objects.get(name="copy-signals")
    assert teaser.sku.sku == "copy_signals"


def test_well_known_x402_lists_every_live_paid_resource(api):
    # Only the SKUs with a built product are paid resources; the others are coming soon.
    body = api.get("/.well-known/x402").json()
    assert len(body["resources"]) == len(products_built())
    news = [r for r in body["resources"] if r["sku"] == "news_unlock"][0]
    assert news["amount"] == "100000" and news["network"] == "eip155:8453" and news["scheme"] == "exact"
