"""Tokenized signals and tokenized scalp on generated token markets: a token whose candles rise
gets a BUY with its premium over the underlying, a falling one a SELL; an oversold flush of a
token in a range is a long scalp, with its underlying's market state. Bought with credits;
stale candles answer 503 uncharged."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.market_hours import reference_state
from catalog.models import Candle, Sku
from tests.support.marketdata import tokenized_candles_write, tokenized_market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

SIGNALS = "/api/a2a/tokenized/signals"
SCALP = "/api/a2a/tokenized/scalp"


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api)


def buy(api, buyer, path: str, status: int = 200) -> dict[str, Any]:
    key, account = buyer
    sku = {SIGNALS: "tokenized_signals", SCALP: "tokenized_scalp"}[path]
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(path, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    assert before - after == (Sku.objects.get(sku=sku).price_atomic if status == 200 else 0)
    return resp.json()


def provenance_ok(body: dict[str, Any]) -> None:
    assert body["stale"] is False and body["replay"] is False and body["as_of"] and body["method"]
    assert {(x["name"], x["venue"]) for x in body["sources"]} >= {("exchanges", "bybit")}


def test_rising_token_buys_falling_token_sells_each_with_its_premium(api, buyer):
    tokenized_market_write()
    tokenized_candles_write()
    body = buy(api, buyer, SIGNALS)
    provenance_ok(body)
    assert body["count"] == 3 and body["skipped"] == []
    by = {s["symbol"]: s for s in body["signals"]}
    aaplx, tslax, paxg = by["AAPLX"], by["TSLAX"], by["PAXG"]
    assert aaplx["market"] == "AAPLX/USDT" and aaplx["venue"] == "bybit"
    assert aaplx["label"] in ("BUY", "STRONG_BUY") and aaplx["side"] == "long" and aaplx["score"] >= 0.2
    assert aaplx["regime"]["label"] == "up_trend"
    assert aaplx["stop"] < aaplx["entry"] < aaplx["target"]
    last = Candle.objects.filter(symbol="AAPLX/USDT", timeframe="1m").order_by("-open_time").first()
    assert aaplx["entry"] == pytest.approx(float(last.close))
    # 204 / 200 - 1 = +2 %; 297 / 300 - 1 = -1 %; 2652.65 / 2650 - 1 = +0.1 %.
    assert aaplx["premium_pct"] == 2.0 and aaplx["premium_bps"] == 200.0
    assert aaplx["premium_direction"] == "premium" and aaplx["underlying_price"] == 200.0
    assert tslax["label"] in ("SELL", "STRONG_SELL") and tslax["side"] == "short"
    assert tslax["regime"]["label"] == "down_trend" and tslax["target"] < tslax["entry"] < tslax["stop"]
    assert tslax["premium_bps"] == -100.0 and tslax["premium_direction"] == "discount"
    assert paxg["premium_bps"] == 10.0 and paxg["reference_market"] == "spot_metals"
    assert paxg["regime"]["label"] == "range"
    # A range is decided by the 1h timeframe alone, its levels inside the band the regime reports
    # (a trend's by both timeframes weighted).
    assert paxg["decided_by"] == "1h" and "range" in paxg["decision"]
    low, high = paxg["regime"]["range_low"], paxg["regime"]["range_high"]
    assert paxg["side"] is None or (low <= paxg["stop"] <= high and low <= paxg["target"] <= high)
    assert aaplx["decided_by"] == tslax["decided_by"] == "1h+1m"
    # Strongest conviction first.
    conviction = [abs(s["score"]) * s["confidence"] for s in body["signals"]]
    assert conviction == sorted(conviction, reverse=True)
    # The same scoring as the signals product on the token's market.
    plain = api.get("/api/a2a/signals", {"symbol": "AAPLX/USDT"}, HTTP_X_API_KEY=buyer[0]).json()
    assert plain["signals"][0]["score"] == aaplx["score"] and plain["signals"][0]["label"] == aaplx["label"]


def test_oversold_flush_of_a_token_in_a_range_is_a_long_scalp_with_its_market_state(api, buyer):
    tokenized_market_write()
    tokenized_candles_write()
    body = buy(api, buyer, SCALP)
    provenance_ok(body)
    assert body["tokens_considered"] == 3 and body["skipped"] == []
    (setup,) = body["setups"]
    assert setup["token"] == "PAXG" and setup["symbol"] == "PAXG/USDT" and setup["underlying"] == "XAU"
    assert (
        setup["kind"] == "mean_reversion" and setup["side"] == "long" and setup["context_regime"] == "range"
    )
    assert setup["rsi_1m"] <= 30 and setup["stop"] < setup["entry"] < setup["target"]
    last = Candle.objects.filter(symbol="PAXG/USDT", timeframe="1m").order_by("-open_time").first()
    assert setup["entry"] == pytest.approx(float(last.close))
    # The book 2652.5 / 2652.8: 0.3 / 2652.65 = 1.131 bps.
    assert setup["spread_bps"] == pytest.approx(0.3 / 2652.65 * 10_000, abs=0.001)
    assert setup["net_target_bps"] == pytest.approx(
        setup["target_bps"] - setup["spread_bps"] - setup["fees_round_trip_bps"]
    )
    assert setup["premium_bps"] == 10.0
    state = reference_state("XAU", timezone.now())
    assert setup["reference_market"] == "spot_metals" and setup["reference_open"] is state.open
    assert setup["reference_next_open"].startswith(state.next_open.strftime("%Y-%m-%dT%H:%M"))
    no = {n["token"]: n for n in body["no_setup"]}
    assert set(no) == {"AAPLX", "TSLAX"}
    assert no["AAPLX"]["context_regime"] == "up_trend" and no["TSLAX"]["context_regime"] == "down_trend"
    assert no["AAPLX"]["reference_open"] is reference_state("AAPL", timezone.now()).open


def test_stale_token_candles_answer_503_uncharged(api, buyer):
    tokenized_market_write()
    tokenized_candles_write(end=timezone.now() - timedelta(hours=5))
    assert "candles" in buy(api, buyer, SIGNALS, status=503)["detail"]
    assert "1m candles" in buy(api, buyer, SCALP, status=503)["detail"]


def test_without_a_tokenized_watchlist_nothing_is_sold(api, buyer):
    assert buy(api, buyer, SIGNALS, status=503)["charged"] is False
    assert buy(api, buyer, SCALP, status=503)["charged"] is False
