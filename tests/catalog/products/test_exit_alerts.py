"""Risk exit alerts on generated markets: a long whose price fell below its chandelier trailing
stop, a long in a falling market (a regime flip), the pnl and distances exact; bought with
credits, bad input 422, stale prices 503 uncharged, nothing open 200 empty."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.indicators import snapshot
from catalog.analytics.series import ohlcv
from catalog.editorial.track_record import desk_signal_publish
from catalog.models import Candle, Sku
from catalog.products.risk.exits import EXIT_TRAIL_ATR
from tests.support.marketdata import band, bars_write, candles_write, falling, market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

EXITS = "/api/a2a/x402/trading/risk-exit-alerts"


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api)


def buy(api, buyer, params: dict[str, Any] | None = None, status: int = 200) -> dict[str, Any]:
    key, account = buyer
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(EXITS, params or {}, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    assert before - after == (Sku.objects.get(sku="risk_exit_alerts").price_atomic if status == 200 else 0)
    return resp.json()


def publish(
    symbol: str, side: str, entry: float, stop: float, target: float, opened, desk: str = "trend_momentum"
):
    row = desk_signal_publish(
        desk=desk,
        symbol=symbol,
        side=side,
        venue="binance",
        timeframe="1h",
        entry_price=entry,
        stop_price=stop,
        target_price=target,
        expires_at=opened + timedelta(hours=24),
        opened_at=opened,
    )
    assert row is not None
    return row


def test_a_long_below_its_trailing_stop_alerts_with_exact_pnl_and_distances(api, buyer):
    now = timezone.now().replace(second=0, microsecond=0)
    # A quiet 1h band around 100 (ATR about 1), the regime a range: no flip.
    candles_write(
        symbol="EXIT/USDT", shape=band(mid=100.0, amplitude=0.01), bars=200, end=now - timedelta(minutes=30)
    )
    opened = now - timedelta(minutes=30)
    row = publish("EXIT/USDT", "long", 100.0, 90.0, 130.0, opened)
    # Since entry: up to a high of 110, then back to 104 (the newest 1m close).
    path = [(100, 101, 99.5, 100.5)] * 10 + [(100.5, 110, 100.5, 109)] + [(109, 109, 104, 104)] * 18
    bars_write(symbol="EXIT/USDT", start=opened, bars=path)
    atr = snapshot(ohlcv("EXIT/USDT", "1h", exchange="binance")).atr
    assert 0.3 < atr < 1.5  # so 3 ATRs below 110 is above 104
    body = buy(api, buyer)
    assert body["count"] == 1 and body["alerting"] == 1 and body["stale"] is False
    assert body["sources"][0]["name"] == "exchanges" and body["sources"][0]["venue"] == "binance"
    pos = body["positions"][0]
    trailing = 110 - EXIT_TRAIL_ATR * atr
    assert pos["signal_id"] == row.pk and pos["price"] == 104.0 and pos["price_source"] == "candle_1m"
    assert pos["unrealized_pnl_pct"] == 4.0
    assert pos["distance_to_stop_pct"] == round((104 - 90) / 104 * 100, 4)
    assert pos["distance_to_target_pct"] == round((130 - 104) / 104 * 100, 4)
    assert pos["distance_to_stop_atr"] == round(14 / atr, 4)
    assert pos["distance_to_target_atr"] == round(26 / atr, 4)
    assert pos["extreme_since_entry"] == 110.0
    assert pos["trailing_stop"] == pytest.approx(trailing, abs=1e-9)
    assert pos["distance_to_trailing_pct"] == round((104 - trailing) / 104 * 100, 4) < 0
    assert pos["regime"] == "range"
    assert [a["kind"] for a in pos["alerts"]] == ["trailing_stop_hit"]
    assert "below the trailing stop" in pos["alerts"][0]["reason"]
    assert pos["action"] == "exit" and pos["suggested_exit"] == pos["trailing_stop"]


def test_a_long_in_a_falling_market_flags_the_regime_flip_and_a_short_does_not(api, buyer):
    now = timezone.now()
    candles_write(symbol="DOWN/USDT", shape=falling(100.0), bars=200)
    candles_write(symbol="DROP/USDT", shape=falling(50.0), bars=200)
    last = float(Candle.objects.filter(symbol="DOWN/USDT").order_by("-open_time").first().close)
    publish("DOWN/USDT", "long", last, last * 0.5, last * 1.5, now - timedelta(minutes=5))
    publish("DROP/USDT", "short", 25.0, 40.0, 10.0, now - timedelta(minutes=5))
    # A fresher ticker for the short: its price, pnl and distances come from it.
    market_write(exchange="binance", symbol="DROP/USDT", bid=19.99, ask=20.01)
    body = buy(api, buyer)
    by = {p["symbol"]: p for p in body["positions"]}
    assert body["count"] == 2 and body["alerting"] == 1
    assert body["positions"][0]["symbol"] == "DOWN/USDT"  # alerting first
    down = by["DOWN/USDT"]
    assert down["regime"] == "down_trend" and down["price"] == last and down["unrealized_pnl_pct"] == 0.0
    assert [a["kind"] for a in down["alerts"]] == ["regime_flip"] and down["action"] == "exit"
    assert "down-trend" in down["alerts"][0]["reason"]
    short = by["DROP/USDT"]
    assert short["price_source"] == "ticker" and short["price"] == 20.0
    assert short["unrealized_pnl_pct"] == 20.0  # (25 - 20) / 25
    assert short["distance_to_stop_pct"] == 100.0  # (40 - 20) / 20
    assert short["distance_to_target_pct"] == 50.0  # (20 - 10) / 20
    assert short["alerts"] == [] and short["action"] == "hold"
    # Filters.
    only = buy(api, buyer, {"symbol": "drop/usdt"})
    assert [p["symbol"] for p in only["positions"]] == ["DROP/USDT"]
    assert buy(api, buyer, {"desk": "grid"})["count"] == 0


def test_stop_and_target_touched_since_entry(api, buyer):
    now = timezone.now().replace(second=0, microsecond=0)
    opened = now - timedelta(minutes=5)
    candles_write(symbol="TOUCH/USDT", shape=band(mid=100.0, amplitude=0.01), bars=200, end=opened)
    publish("TOUCH/USDT", "short", 100.0, 102.0, 97.0, opened)
    bars_write(symbol="TOUCH/USDT", start=opened, bars=[(100, 100.2, 96.5, 98), (98, 99, 97.5, 98.5)])
    atr = snapshot(ohlcv("TOUCH/USDT", "1h", exchange="binance")).atr
    pos = buy(api, buyer)["positions"][0]
    # The low since entry, 96.5, reached the target; the trail sits 3 ATRs above that low.
    trailing = 96.5 + EXIT_TRAIL_ATR * atr
    assert pos["extreme_since_entry"] == 96.5 and pos["trailing_stop"] == pytest.approx(trailing, abs=1e-9)
    kinds = [a["kind"] for a in pos["alerts"]]
    assert kinds == (["target_touched", "trailing_stop_hit"] if 98.5 >= trailing else ["target_touched"])
    assert pos["alerts"][0]["level"] == 97.0
    assert pos["action"] == ("exit" if 98.5 >= trailing else "take_profit")
    assert pos["unrealized_pnl_pct"] == 1.5 and pos["distance_to_target_pct"] == round(
        1.5 / 98.5 * 100, 4
    )  # it came back above


def test_no_open_signal_is_an_empty_answer_bad_input_422_stale_prices_503(api, buyer):
    candles_write(symbol="BTC/USDT", shape=band(), bars=100)
    body = buy(api, buyer)
    assert body["count"] == 0 and body["positions"] == [] and body["stale"] is False
    buy(api, buyer, {"symbol": "not a symbol"}, status=422)
    buy(api, buyer, {"desk": "x" * 80}, status=422)
    Candle.objects.all().delete()
    old = timezone.now() - timedelta(hours=6)
    candles_write(symbol="OLD/USDT", shape=band(), bars=100, end=old)
    publish("OLD/USDT", "long", 100.0, 95.0, 110.0, old - timedelta(hours=1))
    buy(api, buyer, status=503)
