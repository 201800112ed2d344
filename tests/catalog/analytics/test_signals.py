"""Signals, the regime gate, copy signals and the intel snapshot, on generated markets with a
known shape (tests/support/marketdata/): the numbers a trader checks. The desks' track record
is in test_track_record.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct

from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.analytics.signals import symbol_signal
from catalog.editorial.intel import TREND_DESK, intel_compute, intel_sentiment_register
from catalog.editorial.track_record import desk_signal_publish
from catalog.models import Candle, IntelSnapshot, NewsItem, RegimeSnapshot, Sku
from tests.support.marketdata import (
    band,
    falling,
    falling_1m,
    rising,
    rising_1m,
    signals_market_write,
    trend_market_write,
)
from tests.support.wallets import register_over_http
from webhooks.models import WebhookEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("without_sentiment")]


@pytest.fixture
def customer(api):
    """A registered account and its key; `fund(atomic)` credits it."""
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())

    def fund(amount: int) -> None:
        credit_add(
            account_id=account.id, amount_atomic=amount, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
        )

    def balance() -> int:
        return Account.objects.get(pk=account.pk).credit_balance_atomic

    return key, fund, balance


def price(sku: str) -> int:
    return Sku.objects.get(sku=sku).price_atomic


# --- signals -------------------------------------------------------------------------------------
def test_a_steady_rise_is_an_up_trend_and_a_buy():
    trend_market_write(symbol="BTC/USDT", shape_1h=rising(60000.0), shape_1m=rising_1m())
    sig = symbol_signal("BTC/USDT")
    assert sig is not None
    h1, m1 = sig.frames
    assert (h1.timeframe, m1.timeframe) == ("1h", "1m")
    assert h1.regime.label == m1.regime.label == "up_trend" and h1.regime.direction == "up"
    assert h1.regime.adx > 25 and h1.regime.trend_atrs >= 1
    assert sig.label in ("BUY", "STRONG_BUY") and sig.side == "long" and sig.score >= 0.2
    for frame in sig.frames:
        votes = {v.name: v for v in frame.votes}
        # Every trend and momentum vote buys on a steady rise.
        assert all(votes[n].value > 0 for n in ("ema_cross", "ema_slope", "adx_di", "rsi", "macd"))
        # The score is the weighted mean of the votes (weights of a trend regime, summing to 1).
        assert sum(v.weight for v in frame.votes) == pytest.approx(1.0)
        assert frame.score == pytest.approx(sum(v.value * v.weight for v in frame.votes), abs=1e-3)
        assert votes["ema_cross"].weight == 0.2 and votes["bollinger"].weight == 0.1
    assert sig.score == pytest.approx(0.6 * h1.score + 0.4 * m1.score, abs=1e-4)
    assert sig.agreement == 1.0
    assert sig.confidence == pytest.approx(1.0 * (0.5 + 0.5 * min(h1.snap.adx / 40, 1)), abs=1e-4)
    # Entry: the newest 1m close; stop 1.5 and target 3 ATRs of the 1h bars on the long side.
    newest = Candle.objects.filter(symbol="BTC/USDT", timeframe="1m").order_by("-open_time").first()
    assert sig.entry == float(newest.close) and sig.venue == "binance"
    assert sig.atr == h1.snap.atr and sig.atr > 0
    assert sig.stop == pytest.approx(sig.entry - 1.5 * sig.atr)
    assert sig.target == pytest.approx(sig.entry + 3.0 * sig.atr)
    assert sig.horizon == timedelta(hours=24)


def test_a_steady_fall_is_a_down_trend_and_a_sell():
    trend_market_write(symbol="SOL/USDT", shape_1h=falling(200.0), shape_1m=falling_1m())
    sig = symbol_signal("SOL/USDT")
    assert sig is not None
    assert sig.primary.regime.label == "down_trend" and sig.primary.regime.direction == "down"
    assert sig.label in ("SELL", "STRONG_SELL") and sig.side == "short" and sig.score <= -0.2
    assert all(v.value < 0 for v in sig.primary.votes if v.name in ("ema_cross", "ema_slope", "adx_di"))
    assert sig.target < sig.entry < sig.stop
    assert sig.stop == pytest.approx(sig.entry + 1.5 * sig.atr)
    assert sig.target == pytest.approx(sig.entry - 3.0 * sig.atr)


def test_a_band_is_a_range_and_reads_mean_reversion():
    trend_market_write(symbol="XRP/USDT", shape_1h=band(1.0), shape_1m=rising_1m(1.0))
    sig = symbol_signal("XRP/USDT")
    assert sig is not None
    regime = sig.primary.regime
    assert regime.label == "range" and regime.direction == "flat" and regime.adx < 25
    # The band is 1.0 +- 3 % (and 0.2 % of noise): the range the regime reports sits in it.
    assert 0.96 <= regime.range_low < regime.range_high <= 1.04
    weights = {v.name: v.weight for v in sig.primary.votes}
    assert weights["bollinger"] == 0.35 and weights["ema_cross"] == 0.1  # mean reversion leads
    assert "in a range" in next(v.reading for v in sig.primary.votes if v.name == "rsi")


def test_signals_bought_with_credits(api, customer):
    key, fund, balance = customer
    fund(5_000_000)
    signals_market_write()
    before = balance()
    resp = api.get("/api/a2a/signals", {"symbol": "BTC"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert before - balance() == price("signals") == 100_000
    body = resp.json()
    assert body["count"] == 1 and body["stale"] is False and body["replay"] is False
    assert body["sources"] == [
        {"name": "exchanges", "venue": "binance", "replay": False, "items": 320, "as_of": body["as_of"]}
    ]
    btc = body["signals"][0]
    assert btc["symbol"] == "BTC/USDT" and btc["label"] in ("BUY", "STRONG_BUY") and btc["side"] == "long"
    assert btc["regime"]["label"] == "up_trend" and btc["risk_reward"] == 2.0
    assert [f["timeframe"] for f in btc["timeframes"]] == ["1h", "1m"]
    votes = btc["timeframes"][0]["votes"]
    assert sum(v["contribution"] for v in votes) == pytest.approx(btc["timeframes"][0]["score"], abs=1e-3)
    assert btc["desk"] == TREND_DESK and btc["desk_signal"] is None  # nothing published yet
    assert btc["historical_performance"]["state"] == "no_data"
    # Every symbol, strongest conviction first; XRP (a band) last.
    body = api.get("/api/a2a/signals", HTTP_X_API_KEY=key).json()
    assert [s["symbol"] for s in body["signals"]][-1] == "XRP/USDT" and body["count"] == 4
    assert {s["symbol"]: s["label"] for s in body["signals"]}["SOL/USDT"] in ("SELL", "STRONG_SELL")


def test_bad_or_unknown_symbols_are_refused_uncharged(api, customer):
    key, fund, balance = customer
    fund(1_000_000)
    signals_market_write()
    before = balance()
    resp = api.get("/api/a2a/signals", {"symbol": "DOGE"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 404 and "no candles for DOGE" in resp.json()["detail"]
    resp = api.get("/api/a2a/signals", {"symbol": "BTC$USDT"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["query", "symbol"]
    assert api.get("/api/a2a/signals", {"limit": 0}, HTTP_X_API_KEY=key).status_code == 422
    assert balance() == before


def test_stale_candles_answer_503_uncharged(api, customer):
    key, fund, balance = customer
    fund(1_000_000)
    signals_market_write(end=timezone.now() - timedelta(hours=5))
    before = balance()
    for path in ("/api/a2a/signals", "/api/a2a/x402/risk/regime-gate"):
        resp = api.get(path, HTTP_X_API_KEY=key)
        assert resp.status_code == 503, (path, resp.content)
        assert resp.json()["charged"] is False
    assert balance() == before
    # The analytics pass publishes nothing and stores no snapshot on stale data.
    run = intel_compute()
    assert run.fresh == 0 and run.published == [] and run.intel_snapshot is None
    assert not IntelSnapshot.objects.exists() and not RegimeSnapshot.objects.exists()
    assert api.get("/api/a2a/intel/latest", HTTP_X_API_KEY=key).status_code == 503
    assert balance() == before
    teaser = api.get("/api/a2a/teaser/trend-momentum-desk").json()
    assert teaser["available"] is False and "stale" in teaser["unavailable_reason"]


def test_replayed_candles_are_flagged(api, customer):
    key, fund, _ = customer
    fund(1_000_000)
    signals_market_write(replay=True)
    body = api.get("/api/a2a/signals", HTTP_X_API_KEY=key).json()
    assert body["replay"] is True and all(s["replay"] for s in body["sources"])


# --- regime gate and the market regime -----------------------------------------------------------
def test_regime_gate_reads_each_symbol_and_the_majors(api, customer):
    key, fund, balance = customer
    fund(1_000_000)
    signals_market_write()
    resp = api.get("/api/a2a/x402/risk/regime-gate", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    symbols = {s["symbol"]: s for s in body["symbols"]}
    assert {k: v["label"] for k, v in symbols.items()} == {
        "BTC/USDT": "up_trend",
        "ETH/USDT": "up_trend",
        "SOL/USDT": "down_trend",
        "XRP/USDT": "range",
    }
    assert symbols["XRP/USDT"]["families"] == {
        "trend_following": "closed",
        "mean_reversion": "open",
        "carry": "open",
    }
    market = body["market"]
    assert market["regime"] == "risk_on" and market["gate"] == "open"
    assert [m["symbol"] for m in market["majors"]] == ["BTC/USDT", "ETH/USDT"]
    adx = [m["adx"] for m in market["majors"]]
    assert market["confidence"] == pytest.approx(sum(min(a / 40, 1) for a in adx) / 2, abs=1e-3)
    assert market["families"] == {"trend_following": "open", "mean_reversion": "reduced", "carry": "open"}
    # Not recorded yet: since = the newest start among the majors' up-trends.
    assert market["since"] == max(m["since"] for m in market["majors"])
    assert body["open_families"]["trend_following"] == ["BTC/USDT", "ETH/USDT", "SOL/USDT"]
    assert body["open_families"]["mean_reversion"] == ["XRP/USDT"]


def test_a_regime_change_writes_one_snapshot_and_pushes_a_signed_attestation(api):
    signals_market_write()
    intel_compute()
    intel_compute()  # unchanged: nothing more written
    assert list(RegimeSnapshot.objects.values_list("regime", flat=True)) == ["risk_on"]
    events = WebhookEvent.objects.filter(kind="regime_attestation")
    assert events.count() == 1
    data = events.get().payload
    signer = EthAccount.recover_message(encode_defunct(text=data["message"]), signature=data["signature"])
    assert signer == data["signer"] and '"regime":"risk_on"' in data["message"]
    snap = RegimeSnapshot.objects.get()
    assert snap.inputs["majors"]["BTC/USDT"]["label"] == "up_trend" and snap.inputs["previous"] is None
    # The majors turn down: risk_off, one more snapshot and attestation.
    Candle.objects.filter(symbol__in=["BTC/USDT", "ETH/USDT"]).delete()
    trend_market_write(symbol="BTC/USDT", shape_1h=falling(60000.0), shape_1m=falling_1m())
    trend_market_write(symbol="ETH/USDT", shape_1h=falling(3000.0), shape_1m=falling_1m())
    assert intel_compute().regime == "risk_off"
    assert list(RegimeSnapshot.objects.order_by("computed_at").values_list("regime", flat=True)) == [
        "risk_on",
        "risk_off",
    ]
    assert RegimeSnapshot.objects.order_by("-computed_at").first().inputs["previous"] == "risk_on"
    assert WebhookEvent.objects.filter(kind="regime_attestation").count() == 2
    body = api.get("/api/mcp/regime").json()
    assert (body["regime"], body["gate"]) == ("risk_off", "closed")


# --- copy signals --------------------------------------------------------------------------------
def test_copy_trade_free_tier_is_delayed_and_masked_paid_is_real_time(api, customer):
    key, fund, balance = customer
    signals_market_write()
    now = timezone.now()
    old = desk_signal_publish(
        desk=TREND_DESK,
        symbol="BTC/USDT",
        side="long",
        venue="binance",
        timeframe="1h",
        entry_price=60000,
        stop_price=58800,
        target_price=62400,
        expires_at=now + timedelta(hours=20),
        opened_at=now - timedelta(minutes=20),
        basis={"size_factor": 1.0},
    )
    new = desk_signal_publish(
        desk=TREND_DESK,
        symbol="ETH/USDT",
        side="long",
        venue="binance",
        timeframe="1h",
        entry_price=3000,
        stop_price=2970,
        target_price=3060,
        expires_at=now + timedelta(hours=20),
        opened_at=now - timedelta(minutes=5),
        basis={"size_factor": 0.5},
    )
    # Opening each pushed copy_signal.
    pushed = WebhookEvent.objects.filter(kind="copy_signal")
    assert sorted(e.payload["signal_id"] for e in pushed) == sorted([old.pk, new.pk])
    assert {e.payload["symbol"] for e in pushed} == {"BTC/USDT", "ETH/USDT"}

    # No key: the free tier, signals at least 10 minutes old, routing masked.
    resp = api.get("/api/a2a/signals/copy-trade")
    assert resp.status_code == 200 and resp["X-Tier"] == "free"
    free = resp.json()
    assert (free["tier"], free["delay_seconds"], free["count"]) == ("free_delayed", 600, 1)
    order = free["orders"][0]
    assert order["signal_id"] == old.pk and order["age_seconds"] >= 1200
    assert order["routing"] == {"venue": "binance", "market_url": None, "masked": True}
    # 1 % of equity at risk over a 2 % stop distance: half the equity.
    assert (order["stop_distance_pct"], order["size_fraction"], order["risk_pct"]) == (2.0, 0.5, 1.0)

    # A key without credit: the same free tier, nothing charged.
    resp = api.get("/api/a2a/signals/copy-trade", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp.json()["tier"] == "free_delayed" and balance() == 0

    # Paying: real time, routing to the venue's market.
    fund(1_000_000)
    resp = api.get("/api/a2a/signals/copy-trade", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    paid = resp.json()
    assert 1_000_000 - balance() == price("copy_signals") == 150_000
    assert paid["tier"] == "realtime" and paid["delay_seconds"] == 0 and paid["count"] == 2
    orders = {o["symbol"]: o for o in paid["orders"]}
    assert orders["BTC/USDT"]["routing"] == {
        "venue": "binance",
        "market_url": "https://www.binance.com/en/trade/BTC_USDT?type=spot",
        "masked": False,
    }
    # ETH: 1 % over a 1 % stop is the whole equity, halved by the reduced gate it was published under.
    eth = orders["ETH/USDT"]
    assert (eth["stop_distance_pct"], eth["gate_size_factor"], eth["size_fraction"], eth["risk_pct"]) == (
        1.0,
        0.5,
        0.5,
        0.5,
    )
    newest = Candle.objects.filter(symbol="ETH/USDT", timeframe="1m").order_by("-open_time").first()
    assert eth["last_price"] == float(newest.close)
    assert eth["historical_performance"]["desk"] == TREND_DESK and paid["stale"] is False
    # The x402 path is paid only.
    assert api.get("/api/a2a/x402/copy/signals").status_code == 402


def test_copy_signals_without_open_signals_answer_503_uncharged(api, customer):
    key, fund, balance = customer
    fund(1_000_000)
    signals_market_write()
    resp = api.get("/api/a2a/x402/copy/signals", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and balance() == 1_000_000
    assert api.get("/api/a2a/teaser/copy-signals").json()["available"] is False


# --- intel ---------------------------------------------------------------------------------------
def test_intel_latest_and_history(api, customer):
    key, fund, balance = customer
    fund(5_000_000)
    signals_market_write()
    NewsItem.objects.create(
        title="Bitcoin ETF inflows", teaser="t", body="b", tickers=["BTC"], published_at=timezone.now()
    )
    NewsItem.objects.create(title="Rates hold", teaser="t", body="b", tickers=[])
    now = timezone.now()
    for minutes in (20, 10, 0):
        intel_compute(now=now - timedelta(minutes=minutes))
    resp = api.get("/api/a2a/intel/latest", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    latest = resp.json()
    assert latest["snapshot_id"] == IntelSnapshot.objects.order_by("-computed_at").first().pk
    assert (
        latest["regime"]["regime"] == "risk_on" and latest["regime"]["families"]["trend_following"] == "open"
    )
    assert [s["symbol"] for s in latest["top_signals"]][:2] == ["BTC/USDT", "ETH/USDT"]
    assert "XRP/USDT" not in {s["symbol"] for s in latest["top_signals"]}  # neutral
    assert latest["sentiment"] is None  # no sentiment function installed: nothing made up
    assert [n["title"] for n in latest["news"]] == ["Bitcoin ETF inflows"] and latest["news"][0][
        "tickers"
    ] == ["BTC"]
    assert {s["name"] for s in latest["sources"]} == {"exchanges", "news"} and latest["stale"] is False
    # The regime snapshot was written once, by the first pass: since then.
    assert latest["regime"]["since"] == RegimeSnapshot.objects.get().computed_at.isoformat().replace(
        "+00:00", "Z"
    )
    before = balance()
    history = api.get("/api/a2a/intel/history", {"limit": 2}, HTTP_X_API_KEY=key).json()
    assert before - balance() == price("intel_history")
    assert history["count"] == 2 and history["snapshots"][0]["snapshot_id"] == latest["snapshot_id"]
    assert history["snapshots"][0]["computed_at"] > history["snapshots"][1]["computed_at"]
    assert api.get("/api/a2a/intel/history", {"limit": 0}, HTTP_X_API_KEY=key).status_code == 422
    # A sentiment function, when installed, fills the section.
    intel_sentiment_register(lambda now: [{"asset": "BTC", "score": 0.42, "label": "positive", "items": 3}])
    intel_compute()
    latest = api.get("/api/a2a/intel/latest", HTTP_X_API_KEY=key).json()
    assert latest["sentiment"] == [{"asset": "BTC", "score": 0.42, "label": "positive", "items": 3}]


def test_an_old_intel_snapshot_is_not_sold(api, customer, settings):
    key, fund, balance = customer
    fund(1_000_000)
    signals_market_write()
    intel_compute(now=timezone.now() - timedelta(hours=2))
    settings.INTEL_MAX_AGE_SECONDS = 1800
    resp = api.get("/api/a2a/intel/latest", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and resp.json()["charged"] is False and balance() == 1_000_000
    # The history still sells what was stored.
    assert api.get("/api/a2a/intel/history", HTTP_X_API_KEY=key).json()["count"] == 1
