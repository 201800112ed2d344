"""The regime of one price series: trending up, trending down, ranging, or volatile.

Per bar, from talipp's ADX and the slope of the slow EMA measured in ATRs (how far the slow
EMA moved over the last SLOPE_BARS bars, divided by the bar's average true range, so the rule
reads the same on a quiet and a wild market):
- up_trend / down_trend: ADX >= ADX_TREND and the EMA moved at least TREND_ATRS ATRs
  (direction by the sign of the move);
- high_volatility: not trending and the ATR%% is in the top VOL_HIGH_PCTL of the window;
- range: otherwise;
- unknown: before the indicators have warmed up.
`since` is the open time of the first bar of the current run of the same label.

A range's band (`range_low`..`range_high`, and `band`) is the range observed over days, not
only over the current run: the label flips to high_volatility at a swing's bar or two, and a
run cut there would report a sliver of the band the market has ranged in. `observed_band`
takes the longest window of the last BAND_LOOKBACK_BARS bars (at least BAND_MIN_BARS) whose
closes crossed its middle at least BAND_MIN_CROSSINGS times (the market went back and forth,
not one way) and moved, first close to last, at most BAND_MAX_DRIFT of its width (no trend
inside it); its lowest low and highest high are the band. Without such a window the band is
the run's own lowest low and highest high (at most the last 100 bars), and says so."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np

from catalog.analytics.indicators import Columns, indicator_columns
from catalog.analytics.series import FloatArray, Series

ADX_TREND = 25.0
TREND_ATRS = 1.0
VOL_HIGH_PCTL = 90.0
# A range's band: observed over at most a week of 1h bars (the candles kept cover 12 days) and
# at least a day of them; two round trips across the middle make it a range, and a window
# whose closes moved more than half its width from first to last holds a trend.
BAND_LOOKBACK_BARS = 168
BAND_MIN_BARS = 24
BAND_MIN_CROSSINGS = 4
BAND_MAX_DRIFT = 0.5
RUN_BAND_BARS = 100

Label = Literal["up_trend", "down_trend", "range", "high_volatility", "unknown"]


@dataclass(frozen=True)
class Band:
    """The band a range was observed in."""

    low: float  # lowest low and highest high of the window's bars
    high: float
    bars: int  # the window: the newest `bars` bars, the first opening at `since`
    since: datetime
    middle_crossings: int  # times the closes changed side of the band's middle
    observed: bool  # False: no window qualified, the band is the regime run's
    rule: str  # how it was chosen, in words and numbers


def middle_crossings(closes: FloatArray, middle: float) -> int:
    above = closes >= middle
    return int(np.sum(above[1:] != above[:-1]))


def observed_band(series: Series, *, run_bars: int) -> Band:
    """The band of a range (see the module's docstring), the regime run given in bars."""
    n = len(series)
    tf = series.timeframe
    for bars in range(min(n, BAND_LOOKBACK_BARS), BAND_MIN_BARS - 1, -1):
        low, high = float(np.min(series.low[-bars:])), float(np.max(series.high[-bars:]))
        closes = series.close[-bars:]
        width = high - low
        if width <= 0 or abs(float(closes[-1]) - float(closes[0])) > BAND_MAX_DRIFT * width:
            continue
        crossings = middle_crossings(closes, (low + high) / 2)
        if crossings >= BAND_MIN_CROSSINGS:
            return Band(
                low=low,
                high=high,
                bars=bars,
                since=series.times[-bars],
                middle_crossings=crossings,
                observed=True,
                rule=(
                    f"the range observed over the last {bars} {tf} bars (lowest low, highest high): "
                    f"the longest window of at most {BAND_LOOKBACK_BARS} whose closes crossed its middle "
                    f"{crossings} times (>= {BAND_MIN_CROSSINGS}) and drifted at most "
                    f"{BAND_MAX_DRIFT:g} of its width"
                ),
            )
    bars = max(1, min(run_bars, RUN_BAND_BARS, n))
    closes = series.close[-bars:]
    low, high = float(np.min(series.low[-bars:])), float(np.max(series.high[-bars:]))
    return Band(
        low=low,
        high=high,
        bars=bars,
        since=series.times[-bars],
        middle_crossings=middle_crossings(closes, (low + high) / 2),
        observed=False,
        rule=(
            f"the range run's own {bars} {tf} bars (lowest low, highest high): no window of "
            f"{BAND_MIN_BARS}..{BAND_LOOKBACK_BARS} bars crossed its middle {BAND_MIN_CROSSINGS} times"
        ),
    )


@dataclass(frozen=True)
class Regime:
    label: Label
    direction: Literal["up", "down", "flat"]
    adx: float | None  # trend strength
    ema_slope_pct: float | None  # % move of the slow EMA over SLOPE_BARS bars
    trend_atrs: float | None  # that move in ATRs (signed)
    vol_percentile: float | None  # where the current ATR% ranks in the window, 0-100
    atr_pct: float | None
    since: datetime | None  # first bar of the current run of this label
    bars: int  # length of that run
    range_low: float  # lowest low and highest high of the run (at most the last 100 bars);
    range_high: float  # in a range, of its observed band
    band: Band | None = None  # a range's band (None for the other labels)


def _labels(cols: Columns) -> list[Label]:
    atr_pct = cols.atr_pct
    valid_atr = atr_pct[~np.isnan(atr_pct)]
    labels: list[Label] = []
    for i in range(len(atr_pct)):
        adx, slope, atrp = cols.adx[i], cols.ema_slow_slope_pct[i], atr_pct[i]
        if np.isnan(adx) or np.isnan(slope) or np.isnan(atrp) or atrp <= 0:
            labels.append("unknown")
            continue
        move = slope / atrp
        if adx >= ADX_TREND and abs(move) >= TREND_ATRS:
            labels.append("up_trend" if move > 0 else "down_trend")
            continue
        seen = valid_atr[: max(int(np.sum(~np.isnan(atr_pct[: i + 1]))), 1)]
        pctl = float(np.sum(seen <= atrp)) / len(seen) * 100.0
        labels.append("high_volatility" if pctl >= VOL_HIGH_PCTL and len(seen) >= 20 else "range")
    return labels


def _f(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def regime_classify(series: Series, cols: Columns | None = None) -> Regime:
    cols = cols or indicator_columns(series)
    labels = _labels(cols)
    if not labels:
        return Regime("unknown", "flat", None, None, None, None, None, None, 0, 0.0, 0.0)
    label = labels[-1]
    start = len(labels) - 1
    while start > 0 and labels[start - 1] == label:
        start -= 1
    run = len(labels) - start
    window = slice(max(start, len(labels) - RUN_BAND_BARS), len(labels))
    band = observed_band(series, run_bars=run) if label == "range" else None
    atr_valid = cols.atr_pct[~np.isnan(cols.atr_pct)]
    atrp = _f(cols.atr_pct[-1])
    pctl = (
        float(np.sum(atr_valid <= atrp)) / len(atr_valid) * 100.0
        if atrp is not None and len(atr_valid)
        else None
    )
    slope = _f(cols.ema_slow_slope_pct[-1])
    move = slope / atrp if slope is not None and atrp else None
    return Regime(
        label=label,
        direction="up" if label == "up_trend" else "down" if label == "down_trend" else "flat",
        adx=_f(cols.adx[-1]),
        ema_slope_pct=slope,
        trend_atrs=move,
        vol_percentile=pctl,
        atr_pct=atrp,
        since=series.times[start] if label != "unknown" else None,
        bars=run,
        range_low=band.low if band is not None else float(np.min(series.low[window])),
        range_high=band.high if band is not None else float(np.max(series.high[window])),
        band=band,
    )
