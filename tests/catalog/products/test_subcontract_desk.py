"""The agent subcontract desk on generated data: it composes the signals, the decision pack,
the sentiment and the news of a symbol (each section equal to what that product sells), the
verdict follows from them; bought with credits, bad input 422, stale candles 503 uncharged."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.models import Sku
from catalog.products.intel import SentimentParams
from catalog.products.registry import ProductCall, product_get
from catalog.products.risk.decision import DecisionPackParams
from catalog.products.signals import SignalsParams
from tests.support.marketdata import (
    calendar_write,
    falling,
    falling_1m,
    funding_write,
    market_write,
    news_write,
    rising,
    rising_1m,
    trend_market_write,
)
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

DESK = "/api/a2a/x402/agent/subcontract-desk"


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api)


def buy(api, buyer, params: dict[str, Any] | None = None, status: int = 200) -> dict[str, Any]:
    key, account = buyer
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(DESK, params or {}, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    price = Sku.objects.get(sku="agent_subcontract_desk").price_atomic
    assert before - after == (price if status == 200 else 0)
    return resp.json()


def run(sku: str, params) -> dict[str, Any]:
    return product_get(sku).run(ProductCall(sku=None, params=params, base_url="http://testserver"))


def btc_market() -> None:
    trend_market_write(symbol="BTC/USDT", shape_1h=rising(60000.0), shape_1m=rising_1m(60000.0))
    market_write(exchange="binance", symbol="BTC/USDT", bid=60000.0, ask=60000.5, size=50.0)
    funding_write(exchange="binance", symbol="BTC/USDT:USDT", rate=0.0001)
    calendar_write(title="CPI", in_hours=30, impact="high")


def test_a_rising_btc_composes_a_long_with_its_risk_sentiment_and_news(api, buyer):
    btc_market()
    news_write(title="Bitcoin rallies to a record as ETF inflows surge", tickers=["BTC"], hours_ago=1)
    news_write(
        title="Bitcoin miners expand capacity after strong quarter", tickers=["BTC", "ETH"], hours_ago=3
    )
    news_write(title="Ether upgrade ships", tickers=["ETH"], hours_ago=2)
    body = buy(api, buyer, {"horizon": "swing", "notional_usdc": "5000"})
    signal = run("signals", SignalsParams(symbol="BTC/USDT", limit=1))["signals"][0]
    swing = next(f for f in signal["timeframes"] if f["timeframe"] == "1h")
    assert (body["symbol"], body["horizon"], body["timeframes"]) == ("BTC/USDT", "swing", ["1h"])
    assert body["signal"]["label"] == swing["label"] and body["signal"]["score"] == swing["score"]
    assert swing["label"] in ("BUY", "STRONG_BUY")  # a steady hourly rise
    assert (body["side"], body["side_from"], body["notional_usdc"]) == ("long", "signal", 5000.0)
    assert body["signal"]["entry"] == signal["entry"] and body["signal"]["regime"] == "up_trend"
    pack = run("risk_decision_pack", DecisionPackParams(symbol="BTC/USDT", side="long", notional_usdc=5000))
    assert body["risk"]["available"] and body["risk"]["verdict"] == pack["verdict"]
    assert body["risk"]["checks"] == pack["checks"]
    feeling = run("sentiment", SentimentParams(asset="BTC", limit=1))["assets"][0]
    assert body["sentiment"]["available"] and body["sentiment"]["label"] == "positive"
    assert body["sentiment"]["score"] == feeling["score"] > 0 and body["sentiment"]["items"] == 2
    assert [n["title"] for n in body["news"]] == [
        "Bitcoin rallies to a record as ETF inflows surge",
        "Bitcoin miners expand capacity after strong quarter",
    ]
    expected = {"go": "go", "caution": "caution", "no_go": "stand_aside"}[pack["verdict"]]
    assert body["verdict"] == expected and body["verdict_line"]
    names = {s["name"] for s in body["sources"]}
    assert {"exchanges", "test-wire", "news"} <= names and body["stale"] is False and body["replay"] is False


def test_a_side_against_the_signal_stands_aside_and_no_news_leaves_sentiment_unavailable(api, buyer):
    btc_market()
    body = buy(api, buyer, {"side": "short", "horizon": "intraday"})
    assert (body["side"], body["side_from"]) == ("short", "params")
    assert body["signal"]["label"] == body["signal"]["combined_label"]
    assert body["verdict"] == "stand_aside" and "against a short" in body["verdict_line"]
    assert body["sentiment"]["available"] is False and "BTC" in body["sentiment"]["reason"]
    assert body["sentiment"]["score"] is None and body["news"] == []


def test_a_scalp_reads_the_minute_votes(api, buyer):
    # The hour rises, the minutes fall: a scalp reads the 1m label.
    trend_market_write(symbol="BTC/USDT", shape_1h=rising(60000.0), shape_1m=falling_1m(60000.0))
    body = buy(api, buyer, {"horizon": "scalp"})
    signal = run("signals", SignalsParams(symbol="BTC/USDT", limit=1))["signals"][0]
    minute = next(f for f in signal["timeframes"] if f["timeframe"] == "1m")
    assert body["timeframes"] == ["1m"] and body["signal"]["label"] == minute["label"]
    assert minute["label"] in ("SELL", "STRONG_SELL") and body["side"] == "short"


def test_bad_input_422_unknown_symbol_404_stale_503_uncharged(api, buyer):
    buy(api, buyer, {"horizon": "weekly"}, status=422)
    buy(api, buyer, {"notional_usdc": "-1"}, status=422)
    buy(api, buyer, {"symbol": "BTC-USDT"}, status=422)
    trend_market_write(
        symbol="BTC/USDT",
        shape_1h=falling(100.0),
        shape_1m=falling_1m(),
        end=timezone.now() - timedelta(hours=5),
    )
    buy(api, buyer, {"symbol": "NOPE/USDT"}, status=404)
    body = buy(api, buyer, status=503)
    assert "nothing was charged" in body["detail"]
