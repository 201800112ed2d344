"""The regime of one price series: trending up, trending down, ranging, or volatile.

Per bar, from talipp's ADX and the slope of the slow EMA measured in ATRs (how far the slow
EMA moved over the last SLOPE_BARS bars, divided by the bar's average true range, so the rule
reads the same on a quiet and a wild market):
- up_trend / down_trend: ADX >= ADX_TREND and the EMA moved at least TREND_ATRS ATRs
  (direction by the sign of the move);
- high_volatility: not trending and the ATR%% is in the top VOL_HIGH_PCTL of the window;
- range: otherwise;
- unknown: before the indicators have warmed up.
`since` is the open time of the first bar of the current run of the same label."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np

from catalog.analytics.indicators import Columns, indicator_columns
from catalog.analytics.series import Series

ADX_TREND = 25.0
TREND_ATRS = 1.0
VOL_HIGH_PCTL = 90.0

Label = Literal["up_trend", "down_trend", "range", "high_volatility", "unknown"]


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
    range_low: float  # lowest low and highest high of the run (at most the last 100 bars)
    range_high: float


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
    window = slice(max(start, len(labels) - 100), len(labels))
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
        range_low=float(np.min(series.low[window])),
        range_high=float(np.max(series.high[window])),
    )
