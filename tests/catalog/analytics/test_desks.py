"""The desks on generated markets: a band is a range and gets a grid inside it whose steps pay
the fees, a trend gets none, fills are counted right; 1m setups (an oversold touch of the lower
band in a range, a pullback in a trend, a spread too wide); the decision pack's checks and
verdicts. Each product is bought with credits, and stale candles answer 503 uncharged."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import ccxt
import numpy as np
import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.grid import GridPlan, NoGrid, grid_plan, level_crossings
from catalog.analytics.indicators import snapshot
from catalog.analytics.regime import regime_classify
from catalog.analytics.series import series_from_bars
from catalog.models import Candle, Sku
from tests.support.marketdata import (
    band,
    calendar_write,
    candles_write,
    falling,
    funding_write,
    market_write,
    plunge,
    rising,
)
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

GRID = "/api/a2a/x402/trading/grid-range-desk"
SCALP = "/api/a2a/x402/trading/broker-scalp-desk"
PACK = "/api/a2a/x402/risk/decision-pack"
BINANCE_TAKER = ccxt.binance().fees["trading"]["taker"]


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api)


def buy(api, buyer, path: str, params: dict[str, Any] | None = None, status: int = 200) -> dict[str, Any]:
    """Buy with credits; checks the status and that exactly the price was charged (0 unless 200)."""
    key, account = buyer
    sku = {GRID: "grid_range_desk", SCALP: "broker_scalp_desk", PACK: "risk_decision_pack"}[path]
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(path, params or {}, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    assert before - after == (Sku.objects.get(sku=sku).price_atomic if status == 200 else 0)
    return resp.json()


def provenance_ok(body: dict[str, Any]) -> None:
    assert body["stale"] is False and body["replay"] is False and body["as_of"]
    assert body["method"] and body["sources"] and all(s["name"] == "exchanges" for s in body["sources"][:1])


# --- grid range desk ----------------------------------------------------------------------------


def test_a_band_is_ranging_and_gets_a_grid_inside_it_that_pays_the_fees(api, buyer):
    candles_write(symbol="BAND/USDT", shape=band(mid=100.0, amplitude=0.03), bars=200)
    candles_write(symbol="UP/USDT", shape=rising(), bars=200)
    body = buy(api, buyer, GRID)
    provenance_ok(body)
    assert body["symbols_checked"] == 2
    assert [g["symbol"] for g in body["grids"]] == ["BAND/USDT"]
    grid = body["grids"][0]
    assert grid["regime"]["label"] == "range" and grid["regime"]["bars"] >= 5
    # Inside the observed band and the generated band (100 +/- 3 %); the Bollinger bands are
    # reported beside it (a 20-bar band is no bound on a range of days).
    low, high = grid["band_low"], grid["band_high"]
    levels = [lv["price"] for lv in grid["levels"]]
    assert len(levels) == grid["level_count"] >= 3
    for price in levels:
        assert low < price < high
        assert 97.0 < price < 103.0
    assert grid["bb_lower"] is not None and grid["bb_upper"] is not None
    inset = min(0.5 * grid["atr"], 0.1 * (high - low))
    assert grid["edge_inset"] == pytest.approx(inset)
    assert grid["lower"] == pytest.approx(low + inset)
    assert grid["upper"] == pytest.approx(high - inset)
    # Even steps, each at least GRID_FEE_MULTIPLE (2) round-trip taker fees at the top level.
    steps = np.diff(levels)
    assert np.allclose(steps, grid["spacing"])
    fee_floor = 2 * 2 * BINANCE_TAKER * grid["upper"]
    assert grid["min_spacing"] == pytest.approx(fee_floor)
    assert grid["spacing"] >= fee_floor and grid["spacing"] >= 0.5 * grid["atr"] * 0.999
    assert grid["taker_fee_pct"] == pytest.approx(BINANCE_TAKER * 100) and grid["fee_source"] == "ccxt"
    assert grid["net_step_pct"] == pytest.approx(grid["spacing_pct"] - 2 * BINANCE_TAKER * 100)
    assert grid["net_step_pct"] > 0
    # Invalidation: a close an ATR beyond the band.
    assert grid["invalidation"]["below"] == pytest.approx(low - grid["atr"])
    assert grid["invalidation"]["above"] == pytest.approx(high + grid["atr"])
    # The trend is checked and left out, with its regime.
    (skipped,) = body["skipped"]
    assert skipped["symbol"] == "UP/USDT" and skipped["regime"] == "up_trend"


def _newest_bars(symbol: str, n: int) -> list[Candle]:
    return list(Candle.objects.filter(symbol=symbol, timeframe="1h").order_by("-open_time")[:n])[::-1]


def test_a_market_oscillating_in_a_wide_band_for_days_gets_a_grid_inside_the_observed_range(api, buyer):
    """12.5 days of hourly closes oscillating 100 +- 3 % (a 19 h wave), crossing the middle dozens
    of times. The 1h regime is a range, but its current run is a bar or two long (a volatile bar
    interrupts it at each swing): cut to that run, to the Bollinger bands and again by ATRs, the
    band left no step. The grid sits inside the range observed over the days instead."""
    candles_write(symbol="WIDE/USDT", shape=band(mid=100.0, amplitude=0.03, period=19.0), bars=300)
    body = buy(api, buyer, GRID, {"symbol": "WIDE/USDT"})
    assert body["skipped"] == [], body["skipped"]
    (grid,) = body["grids"]
    assert grid["regime"]["label"] == "range" and grid["regime"]["bars"] < 24
    # The observed range: the lowest low and highest high of the window's bars, days of them.
    n = grid["band_bars"]
    bars = _newest_bars("WIDE/USDT", n)
    assert n >= 72 and grid["band_since"] == bars[0].open_time.isoformat().replace("+00:00", "Z")
    assert grid["band_low"] == pytest.approx(min(float(b.low) for b in bars))
    assert grid["band_high"] == pytest.approx(max(float(b.high) for b in bars))
    assert grid["band_low"] < 97.5 and grid["band_high"] > 102.5  # the generated band, not a sliver of it
    middle = (grid["band_low"] + grid["band_high"]) / 2
    sides = [float(b.close) >= middle for b in bars]
    assert grid["middle_crossings"] == sum(a != b for a, b in zip(sides, sides[1:], strict=False)) >= 10
    # Levels inside the band, its edges pulled in by half an ATR (at most a tenth of the band).
    levels = [lv["price"] for lv in grid["levels"]]
    width = grid["band_high"] - grid["band_low"]
    inset = min(0.5 * grid["atr"], 0.1 * width)
    assert grid["lower"] == pytest.approx(grid["band_low"] + inset)
    assert grid["upper"] == pytest.approx(grid["band_high"] - inset)
    assert grid["level_count"] == len(levels) >= 8
    assert all(grid["band_low"] < p < grid["band_high"] for p in levels)
    assert grid["spacing"] >= grid["min_spacing"] and grid["net_step_pct"] > 0
    # Fills over the window's bars; the answer says how the band was chosen.
    assert grid["bars_counted"] == n and grid["expected_fills"] > 50
    assert "observed" in grid["band_rule"] and f"{n} 1h bars" in grid["band_rule"]
    assert "observed range" in body["method"] and "Bollinger" not in body["method"]


def test_expected_fills_are_counted_from_the_stored_closes(api, buyer):
    candles_write(symbol="BAND/USDT", shape=band(), bars=200)
    grid = buy(api, buyer, GRID, {"symbol": "band/usdt"})["grids"][0]
    n = grid["bars_counted"]
    assert n == grid["band_bars"] > grid["regime"]["bars"]  # the band's bars, days of them
    closes = [
        float(c)
        for c in Candle.objects.filter(symbol="BAND/USDT", timeframe="1h")
        .order_by("-open_time")
        .values_list("close", flat=True)[:n]
    ][::-1]
    for level in grid["levels"]:
        sides = [c >= level["price"] for c in closes]
        assert level["crossings"] == sum(a != b for a, b in zip(sides, sides[1:], strict=False))
    assert grid["expected_fills"] == sum(lv["crossings"] for lv in grid["levels"]) > 0
    assert grid["fills_per_day"] == pytest.approx(grid["expected_fills"] / (n / 24))


def _wave_series(half_width: float, bars: int = 120):
    """Hourly bars whose closes swing 100 +- half_width (a 12 h wave), wicks 0.02 either side."""
    start = timezone.now() - timedelta(hours=bars)
    rows = []
    for i in range(bars):
        close = 100.0 + half_width * np.sin(2 * np.pi * i / 12)
        rows.append((start + timedelta(hours=i), close, close + 0.02, close - 0.02, close, 1.0))
    return series_from_bars(exchange="binance", symbol="W/USDT", timeframe="1h", bars=rows)


def test_a_band_several_fee_steps_wide_gets_a_grid_whatever_the_atr():
    """A band 2 wide on a price of 100 holds about five 0.4 fee-paying steps (two round trips
    of binance's 0.1 % taker fee, twice): an ATR of 2 (pulling each edge in by 1) and a step of
    1 (half an ATR) no longer leave nothing of it."""
    series = _wave_series(half_width=1.0)
    snap = replace(snapshot(series), atr=2.0)
    regime = regime_classify(series)
    plan = grid_plan(series, snap, regime, exchange="binance")
    assert isinstance(plan, GridPlan), plan
    width = plan.band_high - plan.band_low
    assert plan.edge_inset == pytest.approx(0.1 * width)  # a tenth of the band, not an ATR
    inner = plan.upper - plan.lower
    assert len(plan.levels) == 4 and plan.spacing == pytest.approx(inner / 3)
    assert plan.spacing >= plan.min_spacing == pytest.approx(2 * 2 * BINANCE_TAKER * plan.upper)
    # A band narrower than three fee-paying steps gets none, and says why.
    narrow = _wave_series(half_width=0.5)
    none = grid_plan(narrow, replace(snapshot(narrow), atr=2.0), regime_classify(narrow), exchange="binance")
    assert isinstance(none, NoGrid) and "fewer than 3 fee-paying steps" in none.reason


def test_level_crossings_on_a_constructed_series():
    closes = np.array([100.0, 102.0, 98.0, 101.0, 101.0, 97.0, 99.0])
    levels = np.array([99.0, 100.5, 103.0])
    # 99: above, above, below, above, above, below, at (counts as above) -> 4 changes.
    # 100.5: below, above, below, above, above, below, below -> 4; 103: never crossed.
    assert level_crossings(closes, levels) == [4, 4, 0]
    assert level_crossings(closes[:1], levels) == [0, 0, 0]


def test_a_trending_symbol_is_not_in_the_grid_desk(api, buyer):
    candles_write(symbol="DOWN/USDT", shape=falling(), bars=200)
    body = buy(api, buyer, GRID, {"symbol": "DOWN/USDT"})
    assert body["grids"] == []
    assert body["skipped"][0]["regime"] == "down_trend"
    assert "down-trend" in body["skipped"][0]["reason"]


def test_grid_desk_unknown_symbol_404_bad_input_422_stale_503(api, buyer):
    # Nothing ingested yet: 503 unpaid (no payment asked for nothing), and uncharged when paid.
    unpaid = api.get(GRID, {"symbol": "NOPE/USDT"})
    assert unpaid.status_code == 503 and unpaid["Retry-After"] and "PAYMENT-REQUIRED" not in unpaid
    buy(api, buyer, GRID, status=503)
    candles_write(symbol="BAND/USDT", shape=band(), bars=200, end=timezone.now() - timedelta(hours=5))
    buy(api, buyer, GRID, {"symbol": "NOPE/USDT"}, status=404)
    buy(api, buyer, GRID, {"max_symbols": "0"}, status=422)
    buy(api, buyer, GRID, {"symbol": "BTC USDT"}, status=422)
    body = buy(api, buyer, GRID, status=503)
    assert "nothing was charged" in body["detail"]
    buy(api, buyer, GRID, {"symbol": "band/usdt"}, status=503)


# --- broker scalp desk --------------------------------------------------------------------------


def scalp_market(symbol: str, *, spread_bps: float, volume: float = 20_000_000.0) -> None:
    """A 1h range for context, a 1m band that flushes 0.6 % into its last bar, and a ticker."""
    candles_write(symbol=symbol, shape=band(), bars=200)
    candles_write(
        symbol=symbol,
        timeframe="1m",
        shape=plunge(band(amplitude=0.003, period=30), at=147, depth=0.006),
        bars=150,
        noise=0.0005,
    )
    last = float(Candle.objects.filter(symbol=symbol, timeframe="1m").order_by("-open_time").first().close)
    half = last * spread_bps / 20_000
    market_write(exchange="binance", symbol=symbol, bid=last - half, ask=last + half, volume_24h_usd=volume)


def test_an_oversold_touch_of_the_lower_band_in_a_range_is_a_long(api, buyer):
    scalp_market("FLUSH/USDT", spread_bps=1.0)
    body = buy(api, buyer, SCALP)
    provenance_ok(body)
    (setup,) = body["setups"]
    assert setup["symbol"] == "FLUSH/USDT" and setup["kind"] == "mean_reversion" and setup["side"] == "long"
    assert setup["context_regime"] == "range" and setup["context_timeframe"] == "1h"
    assert setup["stop"] < setup["entry"] < setup["target"]
    assert setup["rsi_1m"] <= 30
    last = Candle.objects.filter(symbol="FLUSH/USDT", timeframe="1m").order_by("-open_time").first()
    assert setup["entry"] == pytest.approx(float(last.close))
    risk, reward = setup["entry"] - setup["stop"], setup["target"] - setup["entry"]
    assert setup["risk_reward"] == pytest.approx(reward / risk)
    assert setup["target_bps"] == pytest.approx(reward / setup["entry"] * 10_000)
    assert setup["spread_bps"] == pytest.approx(1.0, abs=0.01)
    assert setup["spread_share_pct"] == pytest.approx(setup["spread_bps"] / setup["target_bps"] * 100)
    assert setup["fees_round_trip_bps"] == pytest.approx(2 * BINANCE_TAKER * 10_000)
    assert setup["net_target_bps"] == pytest.approx(
        setup["target_bps"] - setup["spread_bps"] - setup["fees_round_trip_bps"]
    )
    assert 5 <= setup["horizon_minutes"] <= 60
    assert "RSI" in setup["why"] and "lower Bollinger band" in setup["why"]


def test_a_spread_too_wide_for_the_target_skips_the_setup_with_the_reason(api, buyer):
    scalp_market("WIDE/USDT", spread_bps=30.0)
    body = buy(api, buyer, SCALP)
    assert body["setups"] == []
    (none,) = body["no_setup"]
    assert none["symbol"] == "WIDE/USDT" and none["context_regime"] == "range"
    assert "spread (30.00 bps)" in none["reason"] and "at most 25%" in none["reason"]


def test_a_pullback_in_an_up_trend_is_a_long_and_thin_pairs_are_left_out(api, buyer):
    candles_write(symbol="TREND/USDT", shape=rising(), bars=200)
    candles_write(
        symbol="TREND/USDT",
        timeframe="1m",
        shape=plunge(rising(step=0.0005), at=145, depth=0.007, over=5),
        bars=150,
        noise=0.0003,
    )
    last = float(
        Candle.objects.filter(symbol="TREND/USDT", timeframe="1m").order_by("-open_time").first().close
    )
    market_write(exchange="binance", symbol="TREND/USDT", bid=last * 0.99999, ask=last * 1.00001)
    # Deep but without 1m candles; and a thin pair under SCALP_MIN_VOLUME_USD, not considered.
    market_write(exchange="okx", symbol="NOBARS/USDT", bid=10.0, ask=10.001, volume_24h_usd=3_000_000.0)
    market_write(exchange="okx", symbol="THIN/USDT", bid=10.0, ask=10.001, volume_24h_usd=50_000.0)
    body = buy(api, buyer, SCALP)
    assert body["pairs_considered"] == 2
    (setup,) = body["setups"]
    assert setup["kind"] == "pullback" and setup["side"] == "long" and setup["context_regime"] == "up_trend"
    assert setup["stop"] < setup["entry"] < setup["target"]
    assert setup["risk_reward"] == pytest.approx(2.0)
    assert body["no_setup"] == [
        {"symbol": "NOBARS/USDT", "exchange": "okx", "context_regime": "unknown", "reason": "no 1m candles"}
    ]


def test_scalp_desk_stale_1m_candles_503_uncharged(api, buyer):
    candles_write(
        symbol="OLD/USDT", timeframe="1m", shape=band(), bars=150, end=timezone.now() - timedelta(hours=1)
    )
    market_write(exchange="binance", symbol="OLD/USDT", bid=99.99, ask=100.01)
    body = buy(api, buyer, SCALP, status=503)
    assert "1m candles" in body["detail"]


# --- risk decision pack -------------------------------------------------------------------------


def checks_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in body["checks"]}


def test_a_long_in_a_down_trend_fails_the_regime_check(api, buyer):
    candles_write(symbol="DOWN/USDT", shape=falling(), bars=200)
    market_write(
        exchange="binance", symbol="DOWN/USDT", bid=44.99, ask=45.0, volume_24h_usd=50_000_000, size=1000
    )
    body = buy(api, buyer, PACK, {"symbol": "DOWN/USDT", "side": "long", "notional_usdc": "10000"})
    checks = checks_of(body)
    assert list(checks) == ["regime", "volatility", "liquidity", "spread", "funding", "macro"]
    assert checks["regime"]["status"] == "fail" and checks["regime"]["value"] == "down_trend"
    assert body["verdict"] == "no_go" and "regime" in body["summary"]
    assert body["regime"]["label"] == "down_trend"
    # The same market for a short: the regime allows it.
    short = buy(api, buyer, PACK, {"symbol": "DOWN/USDT", "side": "short"})
    assert checks_of(short)["regime"]["status"] == "pass"
    # The other checks' numbers: 10,000 of 50 M is 0.02 % of the day; a ~2.2 bps spread.
    assert checks["liquidity"]["status"] == "pass" and checks["liquidity"]["value"] == pytest.approx(0.02)
    assert checks["spread"]["status"] == "pass" and checks["spread"]["value"] == pytest.approx(
        2.222, abs=0.01
    )
    assert body["market"]["book_top_usd"] == pytest.approx(45.0 * 1000)
    # No funding and no calendar ingested: warned, not passed.
    assert checks["funding"]["status"] == "warn" and checks["macro"]["status"] == "warn"
    assert "no calendar ingested" in checks["macro"]["detail"].lower()


def test_a_high_impact_event_in_two_hours_fails_the_macro_gate(api, buyer):
    candles_write(symbol="BAND/USDT", shape=band(), bars=200)
    market_write(exchange="binance", symbol="BAND/USDT", bid=99.99, ask=100.0, size=1000)
    calendar_write(title="FOMC rate decision", in_hours=2, impact="high")
    calendar_write(title="PMI", in_hours=1, impact="medium")
    calendar_write(title="CPI", in_hours=30, impact="high")
    body = buy(api, buyer, PACK, {"symbol": "BAND/USDT"})
    macro = checks_of(body)["macro"]
    assert macro["status"] == "fail" and macro["value"] == 1
    assert "FOMC rate decision in 2.0 h" in macro["detail"]
    assert [e["title"] for e in body["macro_events"]] == ["FOMC rate decision"]
    assert body["verdict"] == "no_go"
    assert any(s["name"] == "manual" and s["items"] == 3 for s in body["sources"]), body["sources"]
    # With only the event in 30 h ahead: the gate passes.
    from catalog.models import CalendarEvent

    CalendarEvent.objects.filter(title__in=["FOMC rate decision", "PMI"]).delete()
    assert checks_of(buy(api, buyer, PACK, {"symbol": "BAND/USDT"}))["macro"]["status"] == "pass"


def test_thin_liquidity_warns_and_heavy_funding_fails_a_long(api, buyer):
    candles_write(symbol="BAND/USDT", shape=band(), bars=200)
    # 2 M a day: 10,000 is 0.5 % of it (not more), but the ask shows only 10 x 100 = 1,000 USD.
    market_write(
        exchange="binance", symbol="BAND/USDT", bid=99.99, ask=100.0, volume_24h_usd=2_000_000, size=10
    )
    # 0.08 % per 8 h = 87.6 % a year paid by longs (earned by shorts).
    funding_write(exchange="binance", symbol="BAND/USDT:USDT", rate=0.0008)
    funding_write(exchange="okx", symbol="BAND/USDT:USDT", rate=0.0008, period_hours=4)
    body = buy(api, buyer, PACK, {"symbol": "BAND/USDT", "side": "long", "notional_usdc": "10000"})
    checks = checks_of(body)
    assert checks["liquidity"]["status"] == "warn" and checks["liquidity"]["value"] == pytest.approx(0.5)
    assert "book top is smaller than the notional" in checks["liquidity"]["detail"]
    by_venue = {f["exchange"]: f for f in body["funding"]}
    assert by_venue["binance"]["period_hours"] == 8 and by_venue["okx"]["period_hours"] == 4
    assert by_venue["binance"]["apr_pct"] == pytest.approx(0.0008 * 3 * 365 * 100)
    assert by_venue["okx"]["apr_pct"] == pytest.approx(0.0008 * 6 * 365 * 100)
    assert checks["funding"]["status"] == "fail"
    assert checks["funding"]["value"] == pytest.approx(0.0008 * 4.5 * 365 * 100, rel=1e-4)
    assert body["verdict"] == "no_go"
    short = checks_of(buy(api, buyer, PACK, {"symbol": "BAND/USDT", "side": "short", "notional_usdc": "500"}))
    assert short["funding"]["status"] == "pass" and "earns" in short["funding"]["detail"]
    assert short["liquidity"]["status"] == "pass"
    # Past 5 % of the day's volume: fail.
    big = checks_of(buy(api, buyer, PACK, {"symbol": "BAND/USDT", "notional_usdc": "200000"}))
    assert big["liquidity"]["status"] == "fail"


def test_decision_pack_go_and_its_inputs(api, buyer):
    candles_write(symbol="BAND/USDT", shape=band(), bars=200)
    market_write(exchange="binance", symbol="BAND/USDT", bid=99.999, ask=100.0, size=1000)
    funding_write(exchange="binance", symbol="BAND/USDT:USDT", rate=0.0001)
    calendar_write(title="CPI", in_hours=30, impact="high")
    body = buy(api, buyer, PACK, {"symbol": "BAND/USDT"})
    checks = checks_of(body)
    vol = checks["volatility"]
    expected = "pass" if vol["value"] < 80 else "warn" if vol["value"] < 95 else "fail"
    assert vol["status"] == expected and vol["value"] == pytest.approx(
        body["regime"]["vol_percentile"], abs=0.01
    )
    assert checks["funding"]["status"] == "pass"
    assert checks["funding"]["value"] == pytest.approx(0.0001 * 3 * 365 * 100)
    others = [c["status"] for name, c in checks.items() if name != "volatility"]
    assert others == ["pass"] * 5
    assert body["verdict"] == ("go" if expected == "pass" else "caution" if expected == "warn" else "no_go")
    assert body["passes"] + body["warnings"] + body["failures"] == 6


def test_decision_pack_bad_input_unknown_symbol_and_stale_candles(api, buyer):
    buy(api, buyer, PACK, {"side": "sideways"}, status=422)
    buy(api, buyer, PACK, {"notional_usdc": "-5"}, status=422)
    # Nothing ingested yet: 503 unpaid (no payment asked for nothing), and uncharged when paid.
    assert api.get(PACK).status_code == 503
    buy(api, buyer, PACK, status=503)
    candles_write(symbol="BTC/USDT", shape=band(), bars=200, end=timezone.now() - timedelta(hours=3))
    buy(api, buyer, PACK, {"symbol": "NOPE/USDT"}, status=404)
    body = buy(api, buyer, PACK, status=503)
    assert "nothing was charged" in body["detail"]
