"""The marketplace's paid capabilities run their products through the paid-call service: a
caller paying with credits gets the product's own content (the same figures as the product's
direct route) and pays its price; an unpaid call answers 402 with how to pay, charged nothing.
Intel snapshots carry the news sentiment: bullish news about an asset gives it a positive score."""

from __future__ import annotations

from typing import Any

import pytest

from billing.models import Account
from catalog.editorial.intel import intel_compute
from catalog.models import IntelSnapshot, Sku
from tests.support.marketdata import (
    news_write,
    sentiment_market_write,
    signals_market_write,
    signals_shop_write,
    tokenized_market_write,
)
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

EXECUTE = "/api/a2a/marketplace/execute"


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api)


def balance(account: Account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


# capability -> (SKU, the product's credit route, the figures that must match)
CAPABILITIES: dict[str, tuple[str, str, Any]] = {
    "sentiment": (
        "sentiment",
        "/api/a2a/sentiment",
        lambda c: [(a["asset"], a["score"], a["label"], a["items"]) for a in c["assets"]],
    ),
    "signals": (
        "signals",
        "/api/a2a/signals",
        lambda c: [(x["symbol"], x["label"], x["score"], x["entry"]) for x in c["signals"]],
    ),
    "intel_latest": (
        "intel_latest",
        "/api/a2a/intel/latest",
        lambda c: (c["snapshot_id"], c["top_signals"], c["sentiment"]),
    ),
    "tokenized_premium_digest": (
        "tokenized_premium",
        "/api/a2a/tokenized/premium",
        lambda c: [(a["symbol"], a["premium_bps"], a["last_price"]) for a in c["assets"]],
    ),
}


def test_paid_capabilities_run_their_products_for_a_paying_caller(api, buyer):
    sentiment_market_write()
    signals_shop_write()
    tokenized_market_write()
    key, account = buyer
    for capability, (sku, route, figures) in CAPABILITIES.items():
        price = Sku.objects.get(sku=sku).price_atomic
        before = balance(account)
        resp = api.post(EXECUTE, {"capability": capability}, format="json", HTTP_X_API_KEY=key)
        assert resp.status_code == 200, (capability, resp.content)
        body = resp.json()
        assert body["capability"] == capability
        assert before - balance(account) == price, capability
        direct = api.get(route, HTTP_X_API_KEY=key)
        assert direct.status_code == 200, (capability, direct.content)
        assert figures(body["result"]) == figures(direct.json()), capability
        assert set(body["result"]) == set(direct.json()), capability
    # The numbers themselves: SOL's bullish news, the +2 % AAPLX premium.
    resp = api.post(
        EXECUTE, {"capability": "sentiment", "params": {"asset": "SOL"}}, format="json", HTTP_X_API_KEY=key
    )
    (sol,) = resp.json()["result"]["assets"]
    assert sol["asset"] == "SOL" and sol["score"] > 0 and sol["label"] == "positive"
    resp = api.post(EXECUTE, {"capability": "tokenized_premium_digest"}, format="json", HTTP_X_API_KEY=key)
    assert resp.json()["result"]["assets"][0]["symbol"] == "AAPLX"
    assert resp.json()["result"]["assets"][0]["premium_bps"] == 200.0


def test_unpaid_capability_answers_how_to_pay_and_bad_params_422(api, buyer):
    sentiment_market_write()
    key, account = buyer
    before = balance(account)
    resp = api.post(EXECUTE, {"capability": "sentiment"}, format="json")
    assert resp.status_code == 402, resp.content
    body = resp.json()
    assert body["price_usdc"] and body["accepts"][0]["maxAmountRequired"] == str(
        Sku.objects.get(sku="sentiment").price_atomic
    )
    assert (
        body["alternatives"]["credits"]["header"] == "X-API-Key"
        and "/api/a2a/x402/sentiment" in body["detail"]
    )
    resp = api.post(
        EXECUTE, {"capability": "sentiment", "params": {"limit": 0}}, format="json", HTTP_X_API_KEY=key
    )
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"][:2] == ["body", "limit"]
    assert balance(account) == before


def test_nothing_fresh_is_503_uncharged(api, buyer):
    key, account = buyer
    before = balance(account)
    resp = api.post(EXECUTE, {"capability": "tokenized_premium_digest"}, format="json", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert balance(account) == before


def test_an_intel_snapshot_carries_the_sentiment_of_bullish_news():
    news_write(
        title="Solana rallies to an all-time high as ETF approval draws record inflows", tickers=["SOL"]
    )
    news_write(
        title="Solana surges after major exchange listing and partnership", tickers=["SOL"], hours_ago=3
    )
    news_write(title="XRP tumbles after exchange announces delisting", tickers=["XRP"], hours_ago=2)
    signals_market_write()  # a snapshot needs a market
    intel_compute()
    snapshot = IntelSnapshot.objects.order_by("-computed_at").first()
    assert snapshot is not None
    sections = {x["asset"]: x for x in snapshot.payload["sentiment"]}
    assert list(sections) == ["SOL", "XRP"]  # the most covered first
    assert (
        sections["SOL"]["items"] == 2
        and sections["SOL"]["score"] > 0.3
        and sections["SOL"]["label"] == "positive"
    )
    assert (
        sections["XRP"]["items"] == 1
        and sections["XRP"]["score"] < 0
        and sections["XRP"]["label"] == "negative"
    )
