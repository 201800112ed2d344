"""The grid range desk's maths (catalog/products/trading.py sells it): for a symbol whose 1h
regime is a range, a grid inside the range the market was observed in.

- The band: the regime's (catalog/analytics/regime.py `observed_band`): the lowest low and
  highest high of the longest window of recent bars that went back and forth across its
  middle; the Bollinger bands are reported beside it, not cut into it (a 20-bar band is
  narrower than a range of days whenever the market sits at one side of it).
- Its edges are pulled in by GRID_EDGE_ATR ATRs, but by no more than GRID_EDGE_SHARE of the
  band: a wick past the edge should not be the only thing that fills the outer levels, and an
  ATR must not eat a band that is wide in fee terms.
- Evenly spaced levels, the step about GRID_SPACING_ATR ATRs, never less than
  GRID_FEE_MULTIPLE round-trip taker fees (so every step pays) and small enough for
  GRID_MIN_STEPS steps: a band that holds GRID_MIN_STEPS fee-paying steps gets a grid.
- Per level, the times the closes crossed it over the band's bars (`level_crossings`), and the
  invalidation prices (a close GRID_INVALIDATION_ATR ATRs beyond the band)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings

from catalog.analytics.desks import taker_fee
from catalog.analytics.indicators import Snapshot
from catalog.analytics.regime import Regime, observed_band
from catalog.analytics.series import FloatArray, Series, timeframe_delta

# The outer levels sit half an hourly ATR inside the band: a bar's ordinary wick past the edge
# of a range should not be the only thing that ever fills them...
GRID_EDGE_ATR = 0.5
# ...but never more than a tenth of the band on each side, so the edges keep most of it.
GRID_EDGE_SHARE = 0.1
# A step of half an hourly ATR: ordinary hourly movement crosses it, so levels fill.
GRID_SPACING_ATR = 0.5
# A grid is at least this many steps (four levels), each paying its fees: a band that holds
# them gets a grid, the step shrinking from half an ATR towards the fee floor to fit.
GRID_MIN_STEPS = 3
# More levels than this splits the capital into orders too small to matter.
GRID_MAX_LEVELS = 40
# A close this many ATRs beyond the band is a breakout, not noise: the grid is invalid.
GRID_INVALIDATION_ATR = 1.0


def level_crossings(closes: FloatArray, levels: FloatArray) -> list[int]:
    """How many times the closes changed side of each level (a close at the level counts as
    above it). Counted close to close, so a wick through a level that closes back on the same
    side is not counted: a floor on the fills a resting order there would have had."""
    if len(closes) < 2 or len(levels) == 0:
        return [0] * len(levels)
    above = closes[:, None] >= levels[None, :]
    return [int(x) for x in np.sum(above[1:] != above[:-1], axis=0)]


@dataclass(frozen=True)
class GridPlan:
    band_low: float  # the observed band (regime.py's observed_band)
    band_high: float
    band_since: datetime  # the first bar of the band's window
    band_bars: int
    middle_crossings: int  # times the closes crossed the band's middle in the window
    band_rule: str  # how the band was chosen
    bb_lower: float | None  # reported beside the band (not cut into it)
    bb_upper: float | None
    atr: float
    edge_inset: float  # how far each outer level sits inside the band
    lower: float  # the grid's lowest and highest levels
    upper: float
    levels: list[float]
    spacing: float  # between two levels
    min_spacing: float  # GRID_FEE_MULTIPLE round-trip taker fees at the top level
    taker_fee: float
    fee_source: str
    crossings: list[int]  # per level, over `bars_counted` bars
    bars_counted: int
    days_counted: float
    invalid_below: float  # a close beyond either invalidates the grid
    invalid_above: float


@dataclass(frozen=True)
class NoGrid:
    reason: str


def grid_plan(series: Series, snap: Snapshot, regime: Regime, *, exchange: str) -> GridPlan | NoGrid:
    """The grid of a ranging series (its newest indicator values and regime given)."""
    atr = snap.atr
    if atr is None or not atr > 0:
        return NoGrid("no ATR yet (too few candles)")
    band = regime.band or observed_band(series, run_bars=regime.bars)
    width = band.high - band.low
    inset = min(GRID_EDGE_ATR * atr, GRID_EDGE_SHARE * width)
    lower, upper = band.low + inset, band.high - inset
    fee, fee_source = taker_fee(exchange)
    # One step buys at a level and sells at the next: two taker fees, paid at up to the top
    # level's price. GRID_FEE_MULTIPLE of them keeps a margin over the fees on every step.
    min_spacing = float(settings.GRID_FEE_MULTIPLE) * 2 * fee * max(upper, 0.0)
    if upper - lower < GRID_MIN_STEPS * min_spacing:
        return NoGrid(
            f"the band inside its edges ({lower:.6g}..{upper:.6g}) holds fewer than {GRID_MIN_STEPS} "
            f"fee-paying steps ({min_spacing:.6g} each); band: {band.rule}"
        )
    step = max(min_spacing, min(GRID_SPACING_ATR * atr, (upper - lower) / GRID_MIN_STEPS))
    # (The small epsilon keeps a width of exactly k steps at k steps despite rounding.)
    count = min(int(math.floor((upper - lower) / step + 1e-9)) + 1, GRID_MAX_LEVELS)
    levels = np.linspace(lower, upper, count)
    bars = min(band.bars, len(series))
    crossings = level_crossings(series.close[-bars:], levels)
    days = bars * timeframe_delta(series.timeframe) / timedelta(days=1)
    return GridPlan(
        band_low=band.low,
        band_high=band.high,
        band_since=band.since,
        band_bars=band.bars,
        middle_crossings=band.middle_crossings,
        band_rule=band.rule,
        bb_lower=snap.bb_lower,
        bb_upper=snap.bb_upper,
        atr=atr,
        edge_inset=inset,
        lower=float(levels[0]),
        upper=float(levels[-1]),
        levels=[float(x) for x in levels],
        spacing=(upper - lower) / (count - 1),
        min_spacing=min_spacing,
        taker_fee=fee,
        fee_source=fee_source,
        crossings=crossings,
        bars_counted=bars,
        days_counted=days,
        invalid_below=band.low - GRID_INVALIDATION_ATR * atr,
        invalid_above=band.high + GRID_INVALIDATION_ATR * atr,
    )
