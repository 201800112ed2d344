"""The event graph, the alert subscription pack, the starter bundle and the partner-feed teaser,
on generated prediction markets (tests/support/marketdata/ prediction_graph_write) with known numbers."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from billing.credits import credit_add
from billing.models import Account
from catalog.analytics.prediction_graph import entities, jaccard
from catalog.products.registry import product_get
from catalog.services import catalog_seed
from tests.support.marketdata import prediction_graph_write
from tests.support.wallets import register_wallet
from webhooks import services
from webhooks.models import PushEntitlement, WebhookDelivery
from webhooks.services import subscription_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def buyer():
    catalog_seed()
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=5_000_000, kind="adjustment", reason="test")
    return reg


def balance(reg) -> int:
    return Account.objects.get(pk=reg.account.pk).credit_balance_atomic


def test_entities_normalize_names_tickers_and_numbers_with_units():
    assert entities("Will Bitcoin reach $100k by December 31?") == {"bitcoin", "$100000"}
    assert entities("Bitcoin above $100,000 on Dec 31 per Coinbase?") == {"bitcoin", "$100000", "coinbase"}
    assert entities("Will the Fed cut rates by 25 bps in March?") == {"fed", "25bps"}
    assert entities("Will Donald Trump win?") == {"donald", "trump", "donald trump"}
    assert entities("Will $ETH flip BTC?") == {"eth", "btc"}
    assert jaccard({"bitcoin", "$100000"}, {"bitcoin", "$100000", "coinbase"}) == pytest.approx(2 / 3)


def test_the_event_graph_links_the_bitcoin_markets_only(api, buyer):
    prediction_graph_write()
    before = balance(buyer)
    resp = api.get("/api/a2a/x402/prediction/event-graph", {"min_weight": 0}, HTTP_X_API_KEY=buyer.api_key)
    assert resp.status_code == 200, resp.content
    assert before - balance(buyer) == 100_000  # 0.1 USDC
    body = resp.json()
    assert [n["id"] for n in body["nodes"]] == [
        "polymarket:pm-btc-100k",
        "kalshi:KXFED-CUT",
        "kalshi:KXBTC-100K",
        "polymarket:pm-super-bowl",
    ]  # most traded first
    assert len(body["edges"]) == 1  # the Fed and the Super Bowl link to nothing
    edge = body["edges"][0]
    assert {edge["source"], edge["target"]} == {"polymarket:pm-btc-100k", "kalshi:KXBTC-100K"}
    assert edge["shared_entities"] == ["$100000", "bitcoin"]
    assert edge["jaccard"] == pytest.approx(2 / 3, abs=1e-6)
    assert edge["same_category"] is True  # "crypto" and "Crypto"
    # Six common hourly moves, the Kalshi market's 1.5x the Polymarket one's: correlation 1.
    assert edge["points"] == 6 and edge["correlation"] == pytest.approx(1.0, abs=1e-6)
    assert edge["weight"] == pytest.approx((2 / 3 + 1) / 2, abs=1e-6)
    assert body["stale"] is False and body["replay"] is False
    assert {(x["name"], x["venue"]) for x in body["sources"]} == {
        ("kalshi", "kalshi"),
        ("polymarket", "polymarket"),
    }


def test_without_history_the_weight_is_the_entity_overlap_and_params_filter(api, buyer):
    from catalog.models import PredictionPrice

    prediction_graph_write()
    PredictionPrice.objects.all().delete()
    body = api.get("/api/a2a/x402/prediction/event-graph", HTTP_X_API_KEY=buyer.api_key).json()
    (edge,) = body["edges"]
    assert edge["correlation"] is None and edge["weight"] == pytest.approx(2 / 3, abs=1e-6)
    heavy = api.get(
        "/api/a2a/x402/prediction/event-graph", {"min_weight": 0.7}, HTTP_X_API_KEY=buyer.api_key
    ).json()
    assert heavy["edges"] == [] and len(heavy["nodes"]) == 4
    sports = api.get(
        "/api/a2a/x402/prediction/event-graph", {"category": "sports"}, HTTP_X_API_KEY=buyer.api_key
    ).json()
    assert [n["market_id"] for n in sports["nodes"]] == ["pm-super-bowl"] and sports["category"] == "sports"
    bad = api.get("/api/a2a/x402/prediction/event-graph", {"min_weight": 2}, HTTP_X_API_KEY=buyer.api_key)
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "min_weight"]


@pytest.mark.parametrize("path", ["/prediction/event-graph", "/prediction/starter-bundle"])
def test_nothing_fresh_answers_503_uncharged(api, buyer, path):
    before = balance(buyer)
    assert api.get("/api/a2a/x402" + path, HTTP_X_API_KEY=buyer.api_key).status_code == 503
    prediction_graph_write(age=timedelta(hours=3))  # older than PREDICTION_MAX_AGE
    assert api.get("/api/a2a/x402" + path, HTTP_X_API_KEY=buyer.api_key).status_code == 503
    assert balance(buyer) == before


def test_the_starter_bundle_parts(api, buyer):
    prediction_graph_write()
    before = balance(buyer)
    resp = api.get("/api/a2a/x402/prediction/starter-bundle", HTTP_X_API_KEY=buyer.api_key)
    assert resp.status_code == 200, resp.content
    assert before - balance(buyer) == 390_000  # its SKU price, 0.39
    body = resp.json()
    assert {v: [r["market_id"] for r in rows] for v, rows in body["snapshot"].items()} == {
        "kalshi": ["KXFED-CUT", "KXBTC-100K"],
        "polymarket": ["pm-btc-100k", "pm-super-bowl"],
    }
    assert [r["market_id"] for r in body["closing_next"]] == [
        "KXFED-CUT",
        "pm-btc-100k",
        "KXBTC-100K",
        "pm-super-bowl",
    ]  # by close time
    if product_get("prediction_top3_daily") is None:
        assert body["top3_source"] == "starter_bundle_score"
        top = body["top3"]["markets"]
        assert [(r["market_id"], r["score"]) for r in top] == [
            ("pm-btc-100k", 7500.0),
            ("KXFED-CUT", 5000.0),
            ("KXBTC-100K", 4500.0),
        ]
        assert top[1]["move_24h"] == pytest.approx(-0.05)
    else:  # composed with the top3 product once it is built
        assert body["top3_source"] == "prediction_top3_daily"
    assert "first purchase" in body["note"] and body["stale"] is False


def test_the_partner_feed_teaser_shows_real_rows(api):
    catalog_seed()
    empty = api.get("/api/a2a/prediction/partner-feed/teaser").json()
    assert empty["markets"] == [] and empty["available"] is False
    prediction_graph_write()
    body = api.get("/api/a2a/prediction/partner-feed/teaser").json()
    assert [r["id"] for r in body["markets"]][:2] == ["pm-btc-100k", "KXFED-CUT"]
    assert body["markets"][0]["yes_price"] == 0.4 and body["markets"][0]["no_price"] == 0.6
    assert body["venues"] == {"kalshi": 2, "polymarket": 2}
    assert {x["name"] for x in body["sources"]} == {"kalshi", "polymarket"} and body["as_of"]
    assert body["available"] is True and body["sku"] == "prediction_starter_bundle"


def _move(market, to: str) -> None:
    market.yes_price = Decimal(to)
    market.save()  # the pre_save receiver publishes prediction_alert


def test_the_alert_pack_covers_prediction_alerts_for_its_period(api, buyer, settings, queued):
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    sub = subscription_create(
        account=buyer.account, url="http://127.0.0.1:9/hook", events=["prediction_alert", "copy_signal"]
    )
    market = prediction_graph_write()["KXFED-CUT"]
    # Without the pack: the outcome price per delivered event, from credits.
    before = balance(buyer)
    _move(market, "0.45")
    first = WebhookDelivery.objects.get(subscription=sub, event__kind="prediction_alert")
    assert first.charged_atomic == 10_000 and before - balance(buyer) == 10_000

    resp = api.get("/api/a2a/x402/prediction/alert-subscription-pack", HTTP_X_API_KEY=buyer.api_key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert resp["X-Credit-Charged"] == "0.25" and body["events"] == ["prediction_alert"]
    assert body["subscribed"] is True and body["days"] == settings.PREDICTION_ALERT_PACK_DAYS
    (ent,) = PushEntitlement.objects.filter(account=buyer.account)
    assert ent.kinds == ["prediction_alert"]
    assert ent.expires_at == pytest.approx(timezone.now() + timedelta(days=30), abs=timedelta(seconds=30))

    before = balance(buyer)
    _move(market, "0.35")
    covered = WebhookDelivery.objects.filter(subscription=sub, event__kind="prediction_alert").latest(
        "created_at"
    )
    assert covered.pk != first.pk and covered.charged_atomic == 0 and covered.state == "pending"
    assert balance(buyer) == before
    # The pack covers prediction_alert only: other kinds keep their per-event price.
    services.event_publish(kind="copy_signal", payload={"signal_id": 1})
    assert WebhookDelivery.objects.get(subscription=sub, event__kind="copy_signal").charged_atomic == 10_000

    # A second pack extends the first; once the period is over, events are charged again.
    api.get("/api/a2a/x402/prediction/alert-subscription-pack", HTTP_X_API_KEY=buyer.api_key)
    ends = sorted(PushEntitlement.objects.filter(account=buyer.account).values_list("expires_at", flat=True))
    assert ends[1] - ends[0] == timedelta(days=30)
    PushEntitlement.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    before = balance(buyer)
    _move(market, "0.55")
    assert before - balance(buyer) == 10_000


def test_the_alert_pack_needs_a_credit_account(api):
    catalog_seed()
    resp = api.get("/api/a2a/x402/prediction/alert-subscription-pack")
    assert resp.status_code == 402  # unpaid: the price, nothing granted
    assert not PushEntitlement.objects.exists()
