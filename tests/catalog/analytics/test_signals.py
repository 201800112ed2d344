"""Signals, the regime gate, the desks' track record and copy signals, on generated markets with
a known shape (tests/marketdata.py): the numbers a trader checks."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct

from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.analytics.signals import symbol_signal
from catalog.analytics.track import record_of
from catalog.intel import _SENTIMENT, TREND_DESK, intel_compute, intel_sentiment_register
from catalog.models import Candle, DeskSignal, DeskState, IntelSnapshot, NewsItem, RegimeSnapshot, Sku
from catalog.track_record import desk_kill_check, desk_signal_publish, desk_signals_settle
from tests.support.marketdata import (
    band,
    bars_write,
    falling,
    falling_1m,
    rising,
    rising_1m,
    signals_market_write,
    trend_market_write,
)
from tests.support.wallets import register_over_http
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db


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


@pytest.fixture(autouse=True)
def _no_sentiment():
    # These tests run without the registered sentiment section (catalog/products/intel.py
    # installs it), then put it back for the other modules' tests.
    saved = list(_SENTIMENT)
    _SENTIMENT.clear()
    yield
    _SENTIMENT[:] = saved


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


# --- the track record ---------------------------------------------------------------------------
def _publish(symbol: str, side: str, entry: float, stop: float, target: float, opened, hours: float = 24):
    row = desk_signal_publish(
        desk=TREND_DESK,
        symbol=symbol,
        side=side,
        venue="binance",
        timeframe="1h",
        entry_price=entry,
        stop_price=stop,
        target_price=target,
        expires_at=opened + timedelta(hours=hours),
        opened_at=opened,
    )
    assert row is not None
    return row


def test_signals_close_at_target_stop_or_expiry_on_later_candles():
    now = timezone.now().replace(second=0, microsecond=0)
    opened = now - timedelta(hours=2)
    win = _publish("BTC/USDT", "long", 100, 98, 104, opened)
    bars_write(
        symbol="BTC/USDT",
        start=opened,
        bars=[(100, 101, 99.5, 100.8), (100.8, 103, 100.5, 102.9), (102.9, 104.6, 102.5, 104.2)],
    )
    loss = _publish("ETH/USDT", "long", 100, 98, 104, opened)
    bars_write(symbol="ETH/USDT", start=opened, bars=[(100, 100.5, 99, 99.2), (99.2, 99.4, 97.5, 97.8)])
    gap = _publish("SOL/USDT", "short", 50, 51, 46, opened)
    bars_write(symbol="SOL/USDT", start=opened, bars=[(50, 50.2, 49.5, 49.8), (52, 52.5, 51.8, 52.2)])
    both = _publish("LTC/USDT", "long", 100, 98, 104, opened)
    bars_write(symbol="LTC/USDT", start=opened, bars=[(100, 105, 97, 101)])
    # XRP: no level touched in the hour it lives; a bar after its expiry would have hit the
    # target but does not count.
    expired = _publish("XRP/USDT", "short", 1.0, 1.03, 0.94, opened, hours=1)
    path = [(1.0, 1.002, 0.995, 0.998)] * 59 + [(0.998, 0.999, 0.985, 0.99)] + [(0.99, 0.99, 0.90, 0.91)]
    bars_write(symbol="XRP/USDT", start=opened, bars=path)
    still_open = _publish("ADA/USDT", "long", 1.0, 0.98, 1.04, opened)  # nothing touched, not expired
    bars_write(symbol="ADA/USDT", start=opened, bars=[(1.0, 1.01, 0.99, 1.005)] * 10)

    closed = desk_signals_settle(now=now)
    assert {s.pk for s in closed} == {win.pk, loss.pk, gap.pk, both.pk, expired.pk}
    rows = {s.symbol: s for s in DeskSignal.objects.all()}
    expect = {
        "BTC/USDT": ("target", Decimal("104"), Decimal("4.0000"), opened + timedelta(minutes=3)),
        "ETH/USDT": ("stop", Decimal("98"), Decimal("-2.0000"), opened + timedelta(minutes=2)),
        # the short's stop gapped: filled at the bar's open, 52: -(52 - 50) / 50
        "SOL/USDT": ("stop", Decimal("52"), Decimal("-4.0000"), opened + timedelta(minutes=2)),
        # stop and target in one bar: the worse (the stop)
        "LTC/USDT": ("stop", Decimal("98"), Decimal("-2.0000"), opened + timedelta(minutes=1)),
        # expiry at the last close before it (0.99): a short from 1.0 made 1 %
        "XRP/USDT": ("expiry", Decimal("0.99"), Decimal("1.0000"), opened + timedelta(hours=1)),
    }
    for symbol, (reason, exit_price, pnl, at) in expect.items():
        row = rows[symbol]
        assert (row.exit_reason, row.exit_price, row.pnl_pct, row.closed_at, row.status) == (
            reason,
            exit_price,
            pnl,
            at,
            "closed",
        ), symbol
    assert rows["ADA/USDT"].pk == still_open.pk
    assert rows["ADA/USDT"].status == "open" and rows["ADA/USDT"].closed_at is None
    # Every opening pushed copy_signal; every loss pushed risk_exit_alert, once.
    assert WebhookEvent.objects.filter(kind="copy_signal").count() == 6
    alerts = {e.payload["symbol"]: e.payload for e in WebhookEvent.objects.filter(kind="risk_exit_alert")}
    assert set(alerts) == {"ETH/USDT", "SOL/USDT", "LTC/USDT"}
    assert (
        alerts["ETH/USDT"]["reason"] == "stop hit: long closed at -2.00%"
        and alerts["ETH/USDT"]["exit_price"] == 98.0
    )
    assert desk_signals_settle(now=now) == []  # nothing closes twice
    assert WebhookEvent.objects.filter(kind="risk_exit_alert").count() == 3


def _closed(desk: str, pnl: float, at, symbol: str = "BTC/USDT") -> DeskSignal:
    return DeskSignal.objects.create(
        desk=desk,
        symbol=symbol,
        side="long",
        entry_price=100,
        exit_price=Decimal(str(100 + pnl)),
        pnl_pct=Decimal(str(pnl)),
        opened_at=at - timedelta(hours=1),
        closed_at=at,
        exit_reason="expiry",
    )


def test_scorecard_and_performance_from_known_outcomes(api):
    now = timezone.now()
    for i, pnl in enumerate([4.0, -2.0, 1.0, -3.0, 2.0]):
        _closed(TREND_DESK, pnl, now - timedelta(days=5 - i))
    _closed("grid-range", 1.5, now - timedelta(hours=1))
    _closed(TREND_DESK, -50.0, now - timedelta(days=40))  # outside the 30 days
    _publish("ETH/USDT", "long", 100, 98, 104, now - timedelta(minutes=5))
    body = api.get("/api/a2a/program/scorecard-30d").json()
    desks = {d["desk"]: d for d in body["desks"]}
    trend = desks[TREND_DESK]
    # pnl 4, -2, 1, -3, 2: running sum 4, 2, 3, 0, 2 (peak 4, trough 0).
    assert (trend["trades"], trend["wins"], trend["losses"], trend["win_rate"]) == (5, 3, 2, 0.6)
    assert trend["avg_win_pct"] == pytest.approx(7 / 3, abs=1e-4) and trend["avg_loss_pct"] == -2.5
    assert trend["expectancy_pct"] == pytest.approx(0.4) and trend["max_drawdown_pct"] == 4.0
    assert (trend["signals"], trend["open_signals"], trend["kill_state"]) == (6, 1, "active")
    assert desks["grid-range"]["trades"] == 1 and desks["grid-range"]["expectancy_pct"] == 1.5
    overall = body["overall"]
    assert overall["trades"] == 6 and overall["expectancy_pct"] == pytest.approx(3.5 / 6, abs=1e-4)
    perf = api.get("/api/a2a/performance").json()
    assert (perf["closed_trades"], perf["win_rate"], perf["max_drawdown_pct"]) == (6, round(4 / 6, 4), 4.0)
    assert perf["avg_loss_pct"] == -2.5 and perf["desks"] == 2 and perf["killed_desks"] == []
    # The desk's record as each of its signals carries it.
    record = record_of([4.0, -2.0, 1.0, -3.0, 2.0])
    from catalog.intel import desk_performance

    hp = desk_performance(TREND_DESK)
    assert (hp["closed_signals"], hp["expectancy_pct"], hp["max_drawdown_pct"], hp["state"]) == (
        5,
        record.expectancy_pct,
        4.0,
        "active",
    )


def test_strategies_are_live_once_their_record_says_so(api, settings):
    settings.DESK_LIVE_MIN_SIGNALS = 3
    now = timezone.now()
    for pnl in (1.0, 2.0, -0.5):
        _closed(TREND_DESK, pnl, now - timedelta(hours=3))
    for pnl in (1.0, -2.0, -0.5):
        _closed("grid-range", pnl, now - timedelta(hours=3))
    body = api.get("/api/mcp/strategies").json()
    mods = {m["slug"]: m for m in body["strategies"]}
    assert mods[TREND_DESK]["mode"] == "live" and mods[TREND_DESK]["closed_signals_30d"] == 3
    assert mods["grid-range"]["mode"] == "scout" and "expectancy -0.50%" in mods["grid-range"]["mode_reason"]
    assert mods["pair-arb"]["mode"] == "scout" and mods["pair-arb"]["state"] == "no_data"
    assert (body["live"], body["scout"]) == (1, len(mods) - 1)


def test_the_kill_state_stops_publishing_until_staff_reenable(api, client, settings):
    settings.DESK_KILL_DRAWDOWN_PCT = 5.0
    now = timezone.now()
    _closed(TREND_DESK, -3.0, now - timedelta(hours=3))
    _closed(TREND_DESK, -3.0, now - timedelta(hours=2), symbol="ETH/USDT")
    signals_market_write()
    run = intel_compute()
    assert run.killed == [TREND_DESK] and run.published == []
    state = DeskState.objects.get(desk=TREND_DESK)
    assert (
        state.killed_at is not None and "drawdown 6.00% reached the kill threshold 5.00%" in state.kill_reason
    )
    assert not DeskSignal.objects.filter(closed_at__isnull=True).exists()
    assert (
        desk_signal_publish(
            desk=TREND_DESK,
            symbol="BTC/USDT",
            side="long",
            venue="binance",
            timeframe="1h",
            entry_price=1,
            stop_price=0.9,
            target_price=1.2,
            expires_at=None,
        )
        is None
    )
    score = {d["desk"]: d for d in api.get("/api/a2a/program/scorecard-30d").json()["desks"]}[TREND_DESK]
    assert score["kill_state"] == "killed" and score["killed_at"] and "6.00%" in score["kill_reason"]
    mods = {m["slug"]: m for m in api.get("/api/mcp/strategies").json()["strategies"]}
    assert mods[TREND_DESK]["state"] == "killed" and mods[TREND_DESK]["mode"] == "scout"
    assert api.get("/api/a2a/performance").json()["killed_desks"] == [TREND_DESK]
    # Staff re-enable it in the admin: it publishes again, and the old losses do not kill it again.
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(staff)
    resp = client.post(
        "/admin/catalog/deskstate/", {"action": "reenable_desks", "_selected_action": [state.pk]}
    )
    assert resp.status_code == 302
    state.refresh_from_db()
    assert state.killed_at is None and state.kill_reason == "" and state.record_since is not None
    run = intel_compute()
    assert run.killed == []
    assert set(DeskSignal.objects.filter(closed_at__isnull=True).values_list("symbol", "side")) == {
        ("BTC/USDT", "long"),
        ("ETH/USDT", "long"),
        ("SOL/USDT", "short"),
    }
    assert desk_kill_check() == []


def test_the_analytics_pass_publishes_the_trend_desk_and_closes_on_later_prices():
    signals_market_write()
    run = intel_compute()
    assert run.regime == "risk_on" and run.fresh == 4 and run.intel_snapshot is not None
    rows = {s.symbol: s for s in DeskSignal.objects.filter(pk__in=run.published)}
    # XRP is neutral (and ranging: trend following is closed there); the others are published.
    assert set(rows) == {"BTC/USDT", "ETH/USDT", "SOL/USDT"}
    btc = rows["BTC/USDT"]
    sig = symbol_signal("BTC/USDT")
    assert (btc.side, btc.label, btc.venue, btc.timeframe) == ("long", sig.label, "binance", "1h")
    assert float(btc.entry_price) == pytest.approx(sig.entry) and float(btc.stop_price) == pytest.approx(
        sig.stop
    )
    assert btc.expires_at - btc.opened_at == timedelta(hours=24)
    assert btc.basis["gate"] == "open" and btc.basis["size_factor"] == 1.0
    # A second pass publishes nothing new (one open signal per desk and symbol).
    assert intel_compute().published == []
    # BTC then falls through its stop: the next pass closes it at the stop.
    after = btc.opened_at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    stop = float(btc.stop_price)
    bars_write(symbol="BTC/USDT", start=after, bars=[(sig.entry, sig.entry, stop * 0.999, stop * 0.999)])
    later = intel_compute(now=after + timedelta(minutes=1))
    assert btc.pk in later.closed
    btc.refresh_from_db()
    assert (btc.exit_reason, float(btc.exit_price)) == ("stop", pytest.approx(stop))
    assert float(btc.pnl_pct) == pytest.approx((stop - sig.entry) / sig.entry * 100, abs=1e-4)


def test_compute_intel_command(capsys):
    signals_market_write()
    call_command("compute_intel")
    out = capsys.readouterr().out
    assert "4 signals (4 fresh), market regime risk_on (new snapshot)" in out and "published 3" in out


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
