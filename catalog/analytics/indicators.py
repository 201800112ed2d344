"""Indicators of a Series through talipp (no hand-rolled formulas): RSI, MACD, EMAs, Bollinger
bands, ADX with its directional indexes, ATR. `indicators(series)` gives the newest value of
each (None while the series is too short for it) and `indicator_columns(series)` every bar's,
for the classifiers that look back (regime since-when, volatility percentiles)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from talipp.indicators import ADX, ATR, BB, EMA, MACD, RSI
from talipp.ohlcv import OHLCV

from catalog.analytics.series import FloatArray, Series

RSI_PERIOD = 14
EMA_FAST = 20
EMA_SLOW = 50
MACD_PERIODS = (12, 26, 9)
BB_PERIOD, BB_STD = 20, 2.0
ADX_PERIODS = (14, 14)
ATR_PERIOD = 14
SLOPE_BARS = 10  # the EMA slope is measured over this many bars


def _col(values: Any, attr: str | None = None) -> FloatArray:
    """A talipp output as a float array (NaN where the indicator has no value yet)."""
    out = []
    for v in values:
        if v is None:
            out.append(np.nan)
        else:
            x = getattr(v, attr) if attr else v
            out.append(np.nan if x is None else float(x))
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class Columns:
    """Every bar's indicator values, aligned with the series (NaN before warm-up)."""

    rsi: FloatArray
    ema_fast: FloatArray
    ema_slow: FloatArray
    macd: FloatArray
    macd_signal: FloatArray
    macd_hist: FloatArray
    bb_lower: FloatArray
    bb_mid: FloatArray
    bb_upper: FloatArray
    adx: FloatArray
    plus_di: FloatArray
    minus_di: FloatArray
    atr: FloatArray
    atr_pct: FloatArray  # ATR as a percentage of the close
    ema_slow_slope_pct: FloatArray  # % change of the slow EMA over SLOPE_BARS bars


def indicator_columns(series: Series) -> Columns:
    closes = [float(x) for x in series.close]
    bars = [
        OHLCV(float(o), float(h), float(lo), float(c), float(v))
        for o, h, lo, c, v in zip(
            series.open, series.high, series.low, series.close, series.volume, strict=True
        )
    ]
    macd = MACD(*MACD_PERIODS, input_values=closes)
    bb = BB(BB_PERIOD, BB_STD, input_values=closes)
    adx = ADX(*ADX_PERIODS, input_values=bars)
    atr = _col(ATR(ATR_PERIOD, input_values=bars))
    ema_slow = _col(EMA(EMA_SLOW, input_values=closes))
    slope = np.full(len(closes), np.nan)
    if len(closes) > SLOPE_BARS:
        prev = ema_slow[:-SLOPE_BARS]
        with np.errstate(invalid="ignore", divide="ignore"):
            slope[SLOPE_BARS:] = (ema_slow[SLOPE_BARS:] - prev) / prev * 100.0
    with np.errstate(invalid="ignore", divide="ignore"):
        atr_pct = atr / series.close * 100.0
    return Columns(
        rsi=_col(RSI(RSI_PERIOD, input_values=closes)),
        ema_fast=_col(EMA(EMA_FAST, input_values=closes)),
        ema_slow=ema_slow,
        macd=_col(macd, "macd"),
        macd_signal=_col(macd, "signal"),
        macd_hist=_col(macd, "histogram"),
        bb_lower=_col(bb, "lb"),
        bb_mid=_col(bb, "cb"),
        bb_upper=_col(bb, "ub"),
        adx=_col(adx, "adx"),
        plus_di=_col(adx, "plus_di"),
        minus_di=_col(adx, "minus_di"),
        atr=atr,
        atr_pct=atr_pct,
        ema_slow_slope_pct=slope,
    )


def _last(col: FloatArray) -> float | None:
    if len(col) == 0 or np.isnan(col[-1]):
        return None
    return float(col[-1])


@dataclass(frozen=True)
class Snapshot:
    """The newest value of each indicator (None while the series is too short for it)."""

    close: float
    rsi: float | None
    ema_fast: float | None
    ema_slow: float | None
    macd: float | None
    macd_signal: float | None
    macd_hist: float | None
    bb_lower: float | None
    bb_mid: float | None
    bb_upper: float | None
    bb_pct_b: float | None  # where the close sits in the bands: 0 lower, 1 upper
    bb_width_pct: float | None  # band width as a percentage of the middle band
    adx: float | None
    plus_di: float | None
    minus_di: float | None
    atr: float | None
    atr_pct: float | None
    ema_slow_slope_pct: float | None


def snapshot(series: Series, cols: Columns | None = None) -> Snapshot:
    cols = cols or indicator_columns(series)
    lower, mid, upper = _last(cols.bb_lower), _last(cols.bb_mid), _last(cols.bb_upper)
    close = series.last
    pct_b = (
        (close - lower) / (upper - lower)
        if lower is not None and upper is not None and upper > lower
        else None
    )
    width = (upper - lower) / mid * 100.0 if lower is not None and upper is not None and mid else None
    return Snapshot(
        close=close,
        rsi=_last(cols.rsi),
        ema_fast=_last(cols.ema_fast),
        ema_slow=_last(cols.ema_slow),
        macd=_last(cols.macd),
        macd_signal=_last(cols.macd_signal),
        macd_hist=_last(cols.macd_hist),
        bb_lower=lower,
        bb_mid=mid,
        bb_upper=upper,
        bb_pct_b=pct_b,
        bb_width_pct=width,
        adx=_last(cols.adx),
        plus_di=_last(cols.plus_di),
        minus_di=_last(cols.minus_di),
        atr=_last(cols.atr),
        atr_pct=_last(cols.atr_pct),
        ema_slow_slope_pct=_last(cols.ema_slow_slope_pct),
    )


def indicators(series: Series) -> Snapshot:
    return snapshot(series)
