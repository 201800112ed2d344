"""The track record's maths: how a published signal ends on the prices ingested after it
opened, and a desk's figures from its closed signals. Pure: the services in
catalog/editorial/track_record.py read the rows and write the outcomes.

A signal ends at the first bar (opened at or after the signal) whose range touches its stop
or its target: a long stops when the low reaches the stop and takes profit when the high
reaches the target (a short the reverse); a bar that touches both counts as stopped (the
worse case: bars do not say which came first); a bar that opens beyond a level exits at its
open (a gap fills at the price there was). Without either before `expires_at`, it closes at
expiry at the last close known then. pnl is the move from entry to exit in the trade's
direction, in percent of the entry, before fees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import numpy as np

Reason = Literal["target", "stop", "expiry"]


@dataclass(frozen=True)
class Bar:
    open_time: datetime
    open: float
    high: float
    low: float
    close: float


@dataclass(frozen=True)
class Outcome:
    exit_price: float
    reason: Reason
    closed_at: datetime
    pnl_pct: float


def pnl_pct(*, side: str, entry: float, exit_price: float) -> float:
    move = (exit_price - entry) / entry * 100.0
    return move if side == "long" else -move


def outcome(
    *,
    side: str,
    entry: float,
    stop: float | None,
    target: float | None,
    expires_at: datetime | None,
    bars: Sequence[Bar],
    step: timedelta,
    now: datetime,
    last_close: float | None = None,
) -> Outcome | None:
    """How the signal ended, or None while it is still open. `bars`: the bars opened at or
    after the signal opened, oldest first; `last_close`: the newest close known before them
    (the price at expiry when no bar came after the signal)."""
    long = side == "long"
    price = last_close
    for bar in bars:
        if expires_at is not None and bar.open_time >= expires_at:
            break
        if stop is not None and (bar.low <= stop if long else bar.high >= stop):
            gapped = bar.open <= stop if long else bar.open >= stop
            fill = bar.open if gapped else stop
            return _done(side, entry, fill, "stop", bar.open_time + step)
        if target is not None and (bar.high >= target if long else bar.low <= target):
            gapped = bar.open >= target if long else bar.open <= target
            fill = bar.open if gapped else target
            return _done(side, entry, fill, "target", bar.open_time + step)
        price = bar.close
    if expires_at is not None and now >= expires_at:
        return _done(side, entry, entry if price is None else price, "expiry", expires_at)
    return None


def _done(side: str, entry: float, exit_price: float, reason: Reason, at: datetime) -> Outcome:
    return Outcome(exit_price, reason, at, round(pnl_pct(side=side, entry=entry, exit_price=exit_price), 4))


@dataclass(frozen=True)
class Record:
    trades: int
    wins: int
    losses: int
    win_rate: float | None
    avg_win_pct: float | None
    avg_loss_pct: float | None
    expectancy_pct: float | None  # mean pnl per closed signal
    total_pnl_pct: float | None
    max_drawdown_pct: float | None  # largest fall of the cumulative pnl from its peak


def record_of(pnls: Sequence[float]) -> Record:
    """A desk's figures from its closed signals' pnl, in the order they closed. A pnl of
    exactly zero is not a win. The drawdown is measured on the running sum of the pnl
    (percent points; each signal counts as one equal-sized position), from a peak of zero."""
    if not pnls:
        return Record(0, 0, 0, None, None, None, None, None, None)
    p = np.asarray(pnls, dtype=np.float64)
    wins, losses = p[p > 0], p[p <= 0]
    equity = np.concatenate([[0.0], np.cumsum(p)])
    drawdown = float(np.max(np.maximum.accumulate(equity) - equity))
    return Record(
        trades=len(p),
        wins=len(wins),
        losses=len(losses),
        win_rate=round(len(wins) / len(p), 4),
        avg_win_pct=round(float(np.mean(wins)), 4) if len(wins) else None,
        avg_loss_pct=round(float(np.mean(losses)), 4) if len(losses) else None,
        expectancy_pct=round(float(np.mean(p)), 4),
        total_pnl_pct=round(float(np.sum(p)), 4),
        max_drawdown_pct=round(drawdown, 4),
    )
