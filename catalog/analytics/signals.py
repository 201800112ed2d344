"""Trading signals from the stored candles: per symbol and timeframe, indicator votes in [-1, 1]
combined into a score in [-1, 1] and a label; the timeframes combined into one signal with its
agreement, entry, ATR stop and target, horizon and confidence.

The votes (each explained by a `reading`, its weight in the payload):
- trend: `ema_cross` (EMA20 above/below EMA50, by how many ATRs), `ema_slope` (the slow EMA's
  move over the last SLOPE_BARS bars, in ATRs), `adx_di` (+DI against -DI, weighted by ADX:
  a direction only counts as much as the trend is strong);
- momentum: `rsi` (distance from 50; in a range it reads the other way: oversold buys),
  `macd` (the MACD line and its histogram, in ATRs);
- mean reversion: `bollinger` (%b: the lower band buys, the upper band sells).
The weights depend on the timeframe's regime (catalog/analytics/regime.py): trend votes lead
in a trend, mean reversion leads in a range. A score is the weighted mean of the votes; the
label is read from SCORE thresholds. Across timeframes the score is the weighted mean of the
timeframes' scores (TIMEFRAME_WEIGHTS); the agreement is the share of timeframes pointing the
same way as the combined score (a neutral timeframe counts half).

Entry is the freshest close (the shortest timeframe's), stop and target sit SIGNAL_STOP_ATR and
SIGNAL_TARGET_ATR ATRs of the primary timeframe (1h) away on the side of the trade, and the
signal holds for SIGNAL_HORIZON_BARS bars of the primary timeframe. Confidence = the agreement
weighted with the primary timeframe's trend strength (ADX/ADX_FULL, at most 1).

In a range (the primary timeframe's regime) the trade is mean reversion inside the band the
regime reports, and the primary timeframe decides it: the 1m timeframe reads a range's short
wave as a trend, and its weight could turn the label into a trend trade aimed ATRs beyond the
band. So the score and label are the primary's; the target is the band's middle (at most
SIGNAL_TARGET_ATR ATRs away), the stop SIGNAL_STOP_ATR ATRs away but no further than the
band's edge; a reading with no room to revert (the entry past the middle on its side, or
outside the band) is NEUTRAL. `decided_by` names the timeframe(s) whose score set the label
and `decision` says why in a sentence."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

import numpy as np
from django.conf import settings
from django.utils import timezone

from catalog.analytics.indicators import Snapshot, indicator_columns, snapshot
from catalog.analytics.regime import Regime, regime_classify
from catalog.analytics.series import Series, ohlcv, symbols_with_candles, timeframe_delta

Label = Literal["STRONG_SELL", "SELL", "NEUTRAL", "BUY", "STRONG_BUY"]
Side = Literal["long", "short"]

# The timeframes a signal reads, the primary (stops, horizon, regime) first; their weights in
# the combined score: the hour carries the trend, the minute the timing.
TIMEFRAMES = ("1h", "1m")
PRIMARY = "1h"
TIMEFRAME_WEIGHTS = {"1h": 0.6, "1m": 0.4}
# Fewer bars than this and the slow indicators (EMA50, ADX) have not warmed up.
MIN_BARS = 60
# |score| at or above: BUY/SELL, STRONG_BUY/STRONG_SELL.
BUY_THRESHOLD = 0.2
STRONG_THRESHOLD = 0.55
# The ADX at which a trend counts fully (a common "strong trend" reading).
ADX_FULL = 40.0
# A MACD histogram of this many ATRs reads as a strong push (tanh scale).
MACD_HIST_ATRS = 0.1
# A bar's data is fresh while its newest bar ended at most this many bars ago (two bars: one
# pass may be late), plus the feed's own minute of slack.
FRESH_BARS = 2

VoteName = Literal["ema_cross", "ema_slope", "adx_di", "rsi", "macd", "bollinger"]
VOTE_FAMILY: dict[str, str] = {
    "ema_cross": "trend",
    "ema_slope": "trend",
    "adx_di": "trend",
    "rsi": "momentum",
    "macd": "momentum",
    "bollinger": "mean_reversion",
}
# Weights by the timeframe's regime (each set sums to 1).
WEIGHTS: dict[str, dict[str, float]] = {
    "trend": {"ema_cross": 0.2, "ema_slope": 0.2, "adx_di": 0.2, "rsi": 0.15, "macd": 0.15, "bollinger": 0.1},
    "range": {"ema_cross": 0.1, "ema_slope": 0.1, "adx_di": 0.1, "rsi": 0.2, "macd": 0.15, "bollinger": 0.35},
    "other": {
        "ema_cross": 0.15,
        "ema_slope": 0.15,
        "adx_di": 0.15,
        "rsi": 0.2,
        "macd": 0.15,
        "bollinger": 0.2,
    },
}


def label_of(score: float) -> Label:
    if score >= STRONG_THRESHOLD:
        return "STRONG_BUY"
    if score >= BUY_THRESHOLD:
        return "BUY"
    if score <= -STRONG_THRESHOLD:
        return "STRONG_SELL"
    if score <= -BUY_THRESHOLD:
        return "SELL"
    return "NEUTRAL"


def direction_of(score: float) -> int:
    """+1 buy, -1 sell, 0 neutral (a score inside the neutral band)."""
    return 0 if abs(score) < BUY_THRESHOLD else (1 if score > 0 else -1)


def _clip(x: float) -> float:
    return float(np.clip(x, -1.0, 1.0))


@dataclass(frozen=True)
class Vote:
    name: str
    family: str
    value: float  # in [-1, 1]: +1 buys, -1 sells
    weight: float
    reading: str  # what the indicator said, in words and numbers

    @property
    def contribution(self) -> float:
        return self.value * self.weight


def regime_weights(regime: Regime) -> tuple[str, dict[str, float]]:
    if regime.label in ("up_trend", "down_trend"):
        return "trend", WEIGHTS["trend"]
    if regime.label == "range":
        return "range", WEIGHTS["range"]
    return "other", WEIGHTS["other"]


def votes_of(snap: Snapshot, regime: Regime) -> list[Vote]:
    """The six votes of one timeframe (an indicator without a value yet votes 0)."""
    kind, weights = regime_weights(regime)
    atr = snap.atr or 0.0
    out: list[Vote] = []

    def add(name: str, value: float, reading: str) -> None:
        out.append(Vote(name, VOTE_FAMILY[name], round(_clip(value), 4), weights[name], reading))

    if snap.ema_fast is not None and snap.ema_slow is not None and atr > 0:
        gap = (snap.ema_fast - snap.ema_slow) / atr
        add(
            "ema_cross",
            float(np.tanh(gap)),
            f"EMA20 {snap.ema_fast:.6g} {'above' if gap >= 0 else 'below'} EMA50 {snap.ema_slow:.6g} "
            f"by {abs(gap):.2f} ATR",
        )
    else:
        add("ema_cross", 0.0, "EMA20/EMA50 not warmed up")
    if regime.trend_atrs is not None:
        add(
            "ema_slope",
            float(np.tanh(regime.trend_atrs)),
            f"EMA50 moved {regime.ema_slope_pct or 0:+.3f}% ({regime.trend_atrs:+.2f} ATR) over the last bars",
        )
    else:
        add("ema_slope", 0.0, "EMA50 slope not warmed up")
    if snap.adx is not None and snap.plus_di is not None and snap.minus_di is not None:
        total = snap.plus_di + snap.minus_di
        balance = (snap.plus_di - snap.minus_di) / total if total > 0 else 0.0
        strength = min(snap.adx / ADX_FULL, 1.0)
        add(
            "adx_di",
            _clip(2 * balance) * strength,
            f"+DI {snap.plus_di:.1f} vs -DI {snap.minus_di:.1f}, ADX {snap.adx:.1f} "
            f"(strength {strength:.2f})",
        )
    else:
        add("adx_di", 0.0, "ADX not warmed up")
    if snap.rsi is not None:
        if kind == "range":
            add("rsi", (50.0 - snap.rsi) / 20.0, f"RSI {snap.rsi:.1f} in a range: below 50 buys, above sells")
        else:
            add("rsi", (snap.rsi - 50.0) / 20.0, f"RSI {snap.rsi:.1f}: momentum above 50 buys, below sells")
    else:
        add("rsi", 0.0, "RSI not warmed up")
    if snap.macd is not None and snap.macd_hist is not None and atr > 0:
        line = float(np.tanh(snap.macd / atr))
        push = float(np.tanh(snap.macd_hist / (MACD_HIST_ATRS * atr)))
        add(
            "macd",
            0.5 * line + 0.5 * push,
            f"MACD {snap.macd / atr:+.2f} ATR, histogram {snap.macd_hist / atr:+.3f} ATR",
        )
    else:
        add("macd", 0.0, "MACD not warmed up")
    if snap.bb_pct_b is not None:
        add(
            "bollinger",
            1.0 - 2.0 * snap.bb_pct_b,
            f"%b {snap.bb_pct_b:.2f}: near the lower band buys, near the upper sells",
        )
    else:
        add("bollinger", 0.0, "Bollinger bands not warmed up")
    return out


@dataclass(frozen=True)
class TimeframeSignal:
    series: Series
    snap: Snapshot
    regime: Regime
    votes: list[Vote]
    score: float
    label: Label
    stale: bool

    @property
    def timeframe(self) -> str:
        return self.series.timeframe


def fresh_limit(timeframe: str) -> timedelta:
    """How old a timeframe's newest bar end may be: FRESH_BARS bars and a minute."""
    return timeframe_delta(timeframe) * FRESH_BARS + timedelta(minutes=1)


def timeframe_signal(series: Series, *, now: datetime | None = None) -> TimeframeSignal | None:
    """The score of one series; None while it is too short for the indicators."""
    if len(series) < MIN_BARS:
        return None
    now = now or timezone.now()
    cols = indicator_columns(series)
    snap = snapshot(series, cols)
    regime = regime_classify(series, cols)
    votes = votes_of(snap, regime)
    total = sum(v.weight for v in votes)
    score = round(_clip(sum(v.contribution for v in votes) / total if total else 0.0), 4)
    last_at = series.last_at
    stale = last_at is None or now - last_at > fresh_limit(series.timeframe)
    return TimeframeSignal(series, snap, regime, votes, score, label_of(score), stale)


@dataclass(frozen=True)
class SymbolSignal:
    symbol: str
    score: float
    label: Label
    side: Side | None
    agreement: float  # 0..1
    confidence: float  # 0..1
    entry: float
    venue: str  # the venue of the entry price
    stop: float | None
    target: float | None
    atr: float | None  # the primary timeframe's ATR the stop and target are measured in
    horizon: timedelta
    frames: list[TimeframeSignal] = field(default_factory=list)
    decided_by: str = PRIMARY  # the timeframe(s) whose score set the label: "1h", "1h+1m"
    decision: str = ""  # how, in a sentence

    @property
    def primary(self) -> TimeframeSignal:
        return self.frames[0]

    @property
    def stale(self) -> bool:
        return self.primary.stale

    @property
    def as_of(self) -> datetime | None:
        stamps = [f.series.last_at for f in self.frames if f.series.last_at is not None]
        return max(stamps) if stamps else None


def levels(*, side: Side, entry: float, atr: float) -> tuple[float, float]:
    """Stop and target of a trade at `entry`: SIGNAL_STOP_ATR and SIGNAL_TARGET_ATR ATRs away,
    the stop against the trade and the target with it."""
    stop_d = settings.SIGNAL_STOP_ATR * atr
    target_d = settings.SIGNAL_TARGET_ATR * atr
    if side == "long":
        return entry - stop_d, entry + target_d
    return entry + stop_d, entry - target_d


@dataclass(frozen=True)
class _Decision:
    score: float
    side: Side | None
    stop: float | None
    target: float | None
    decided_by: str
    decision: str


def _weighted(frames: list[TimeframeSignal], entry: float, atr: float | None) -> _Decision:
    """Outside a range: the timeframes' scores weighted, ATR levels on the side of the trade."""
    weights = np.array([TIMEFRAME_WEIGHTS.get(f.timeframe, 0.0) for f in frames])
    scores = np.array([f.score for f in frames])
    score = round(float(np.average(scores, weights=weights)) if weights.sum() > 0 else float(scores[0]), 4)
    way = direction_of(score)
    side: Side | None = None if way == 0 else ("long" if way > 0 else "short")
    stop = target = None
    if side is not None and atr:
        stop, target = levels(side=side, entry=entry, atr=atr)
    parts = ", ".join(f"{f.timeframe} {f.score:+.3f} x {TIMEFRAME_WEIGHTS.get(f.timeframe, 0.0):g}" for f in frames)
    return _Decision(
        score=score,
        side=side,
        stop=stop,
        target=target,
        decided_by="+".join(f.timeframe for f in frames),
        decision=f"{frames[0].timeframe} regime {frames[0].regime.label}: the timeframes' scores weighted ({parts})",
    )


def _in_range(frames: list[TimeframeSignal], entry: float, atr: float | None) -> _Decision:
    """In a range: the primary timeframe's mean-reversion reading, levels inside the band."""
    primary = frames[0]
    regime = primary.regime
    low, high = regime.range_low, regime.range_high
    middle = (low + high) / 2
    score = primary.score
    way = direction_of(score)
    others = "; ".join(
        f"the {f.timeframe} ({f.score:+.3f}, {f.regime.label.replace('_', '-')}) only times the entry"
        for f in frames[1:]
    )
    head = (
        f"{primary.timeframe} range {low:.6g}..{high:.6g} (middle {middle:.6g}): mean reversion decided by "
        f"the {primary.timeframe} score {score:+.3f}" + (f"; {others}" if others else "")
    )

    def neutral(why: str) -> _Decision:
        return _Decision(score, None, None, None, primary.timeframe, f"{head}; NEUTRAL: {why}")

    if way == 0:
        return neutral(f"|score| < {BUY_THRESHOLD:g}")
    if not atr:
        return neutral(f"no {primary.timeframe} ATR yet")
    if not low <= entry <= high:
        return neutral(f"the entry {entry:.6g} is outside the band: the range may be breaking")
    stop_d, target_d = settings.SIGNAL_STOP_ATR * atr, settings.SIGNAL_TARGET_ATR * atr
    if way > 0:
        side: Side = "long"
        target, stop = min(middle, entry + target_d), max(low, entry - stop_d)
        room = stop < entry < target
    else:
        side = "short"
        target, stop = max(middle, entry - target_d), min(high, entry + stop_d)
        room = target < entry < stop
    if not room:
        past_middle = entry >= middle if way > 0 else entry <= middle
        why = (
            f"{'at or above' if way > 0 else 'at or below'} the band's middle: no room to revert"
            if past_middle
            else f"at the band's {'low' if way > 0 else 'high'}: no room for a stop inside the band"
        )
        return neutral(f"the entry {entry:.6g} is {why}")
    return _Decision(
        score,
        side,
        stop,
        target,
        primary.timeframe,
        f"{head}; {side}: target the middle (at most {settings.SIGNAL_TARGET_ATR:g} ATR), stop "
        f"{settings.SIGNAL_STOP_ATR:g} ATR away or at the band's edge, whichever is nearer",
    )


def combine(symbol: str, frames: list[TimeframeSignal]) -> SymbolSignal:
    """One signal from its timeframes (the primary first)."""
    primary = frames[0]
    freshest = min(frames, key=lambda f: timeframe_delta(f.timeframe))
    entry = freshest.series.last
    atr = primary.snap.atr
    ranging = primary.regime.label == "range"
    decided = _in_range(frames, entry, atr) if ranging else _weighted(frames, entry, atr)
    score = decided.score
    label = label_of(score) if decided.side is not None else "NEUTRAL"
    way = 0 if decided.side is None else (1 if decided.side == "long" else -1)
    agreement = float(
        np.mean(
            [
                1.0 if direction_of(f.score) == way else 0.5 if direction_of(f.score) == 0 else 0.0
                for f in frames
            ]
        )
    )
    strength = min((primary.snap.adx or 0.0) / ADX_FULL, 1.0)
    confidence = round(agreement * (0.5 + 0.5 * strength), 4)
    return SymbolSignal(
        symbol=symbol,
        score=score,
        label=label,
        side=decided.side,
        agreement=round(agreement, 4),
        confidence=confidence,
        entry=entry,
        venue=freshest.series.exchange,
        stop=decided.stop,
        target=decided.target,
        atr=atr,
        horizon=timeframe_delta(primary.timeframe) * settings.SIGNAL_HORIZON_BARS,
        frames=frames,
        decided_by=decided.decided_by,
        decision=decided.decision,
    )


def symbol_signal(symbol: str, *, now: datetime | None = None) -> SymbolSignal | None:
    """The signal of one symbol from its stored candles; None without a warmed-up primary
    timeframe (the other timeframes join when they have enough bars)."""
    frames: list[TimeframeSignal] = []
    for tf in TIMEFRAMES:
        series = ohlcv(symbol, tf)
        frame = timeframe_signal(series, now=now) if series is not None else None
        if frame is None:
            if tf == PRIMARY:
                return None
            continue
        frames.append(frame)
    return combine(symbol, frames)


def signals_compute(*, symbols: list[str] | None = None, now: datetime | None = None) -> list[SymbolSignal]:
    """Every symbol's signal (or those given), strongest conviction first (|score| x
    confidence). Stale ones are included, flagged; the caller decides."""
    now = now or timezone.now()
    out = [s for sym in (symbols or symbols_with_candles(PRIMARY)) if (s := symbol_signal(sym, now=now))]
    out.sort(key=lambda s: (-abs(s.score) * s.confidence, s.symbol))
    return out
