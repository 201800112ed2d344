"""Signals in a range regime (catalog/analytics/signals.py): a range observed over days is traded
by mean reversion inside its band, decided by the 1h timeframe; the 1m timeframe, which reads
the range's short wave as a trend, only times the entry and no longer turns the label into a
trend trade aimed ATRs beyond the band."""

from __future__ import annotations

import pytest

from billing.models import Account
from catalog.analytics.signals import symbol_signal
from tests.support.marketdata import band, falling, trend_market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db


def _wave_market(symbol: str, phase: float) -> None:
    """10 days of 1h bars oscillating 100 +- 3 % (a 24 h wave, a range), ending `phase` bars
    into a cycle, under 1m bars falling 0.1 % a minute: the range's short wave, which the 1m
    timeframe reads as a down-trend."""
    trend_market_write(
        symbol=symbol,
        shape_1h=band(100.0, amplitude=0.03, period=24.0, phase=phase),
        shape_1m=falling(100.0, 0.001),
        bars_1h=240,
    )


def test_a_range_whose_1m_wave_goes_down_is_no_trend_sell_outside_the_band(api):
    """The 1h regime is a range over days and the market sits low in it; the 1m wave down
    turned the label SELL with a target three 1h ATRs below the entry, under the band's low.
    In a range the 1h timeframe decides (mean reversion); here it reads no trade: NEUTRAL."""
    _wave_market("WAVE/USDT", phase=20)
    sig = symbol_signal("WAVE/USDT")
    assert sig is not None
    h1, m1 = sig.frames
    assert h1.regime.label == "range" and m1.regime.label == "down_trend" and m1.score < -0.5
    low, high = h1.regime.range_low, h1.regime.range_high
    assert low < 97.5 and high > 102.5  # the band the market ranged in for days
    assert low <= sig.entry <= high
    assert (sig.label, sig.side, sig.stop, sig.target) == ("NEUTRAL", None, None, None)
    assert sig.decided_by == "1h" and sig.score == h1.score and abs(h1.score) < 0.2
    key, account = funded_buyer(api)
    body = api.get("/api/a2a/signals", {"symbol": "WAVE/USDT"}, HTTP_X_API_KEY=key).json()
    (row,) = body["signals"]
    assert row["label"] == "NEUTRAL" and row["target"] is None and row["decided_by"] == "1h"
    assert "range" in row["decision"] and "1m" in row["decision"]
    assert row["regime"]["range_low"] == pytest.approx(low) and row["regime"]["range_high"] == pytest.approx(high)
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == 20_000_000 - 100_000


def test_a_range_reading_high_in_the_band_is_a_mean_reversion_short_inside_it():
    """The same range, the market high in the band: the 1h timeframe reads a SELL, and the
    trade reverts inside the band: target its middle (not three ATRs away), stop at most at
    its high."""
    _wave_market("HIGH/USDT", phase=4)
    sig = symbol_signal("HIGH/USDT")
    assert sig is not None
    h1 = sig.primary
    low, high = h1.regime.range_low, h1.regime.range_high
    assert h1.regime.label == "range" and h1.label in ("SELL", "STRONG_SELL")
    assert sig.label == h1.label and sig.side == "short" and sig.decided_by == "1h"
    middle = (low + high) / 2
    assert sig.target == pytest.approx(max(middle, sig.entry - 3.0 * sig.atr))
    assert sig.stop == pytest.approx(min(high, sig.entry + 1.5 * sig.atr))
    assert low <= sig.target < sig.entry < sig.stop <= high
