"""The desks' track record, written: signals published, closed on the prices ingested after
them, the kill state. Every figure the scorecard, /api/a2a/performance and each signal's
`historical_performance` show is computed from the rows these services write
(catalog/analytics/track.py has the maths, catalog/selectors/desks.py the reads).

Rows are saved one by one (never bulk): saving a new DeskSignal pushes `copy_signal`, closing
one at a loss pushes `risk_exit_alert` (webhooks/signals.py), in the same transaction."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.analytics.series import timeframe_delta
from catalog.analytics.track import Bar, Outcome, Record, outcome, record_of
from catalog.models import Candle, DeskSignal, DeskState, TradingModule
from catalog.signals import desk_signal_published

logger = logging.getLogger(__name__)

# The window of the scorecard, the performance teaser and each signal's historical_performance.
RECORD_DAYS = 30
# The bars a signal is closed on: the finest stored, so a stop touched inside an hour counts.
SETTLE_TIMEFRAMES = ("1m", "1h")


def _dec(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(str(round(value, 12)))


def desk_state(desk: str) -> DeskState:
    state, _ = DeskState.objects.get_or_create(desk=desk)
    return state


def kill_threshold(state: DeskState) -> float:
    return state.kill_drawdown_pct if state.kill_drawdown_pct is not None else settings.DESK_KILL_DRAWDOWN_PCT


@transaction.atomic
def desk_signal_publish(
    *,
    desk: str,
    symbol: str,
    side: str,
    venue: str,
    timeframe: str,
    entry_price: float,
    stop_price: float | None,
    target_price: float | None,
    expires_at: datetime | None,
    label: str = "",
    score: float | None = None,
    confidence: float | None = None,
    basis: dict[str, Any] | None = None,
    opened_at: datetime | None = None,
) -> DeskSignal | None:
    """Record a signal a desk publishes; None when the desk may not publish (killed or
    switched off) or already holds an open signal on the symbol (one position per symbol)."""
    if side not in DeskSignal.Side.values:
        raise ValueError(f"side {side!r} is not long or short")
    state = desk_state(desk)
    state = DeskState.objects.select_for_update().get(pk=state.pk)  # one publisher at a time
    if not state.publishing:
        return None
    if DeskSignal.objects.filter(desk=desk, symbol=symbol, closed_at__isnull=True).exists():
        return None
    signal = DeskSignal.objects.create(
        desk=desk,
        symbol=symbol,
        side=side,
        venue=venue,
        timeframe=timeframe,
        entry_price=Decimal(str(round(entry_price, 12))),
        stop_price=_dec(stop_price),
        target_price=_dec(target_price),
        expires_at=expires_at,
        label=label,
        score=score,
        confidence=confidence,
        basis=basis or {},
        opened_at=opened_at or timezone.now(),
    )
    signal_id = signal.pk
    transaction.on_commit(lambda: desk_signal_published.send(sender=DeskSignal, signal_id=signal_id))
    return signal


@transaction.atomic
def desk_signal_close(*, signal: DeskSignal, result: Outcome) -> DeskSignal:
    """Store a signal's outcome (its save pushes risk_exit_alert when it lost)."""
    signal.exit_price = _dec(result.exit_price)
    signal.pnl_pct = Decimal(str(round(result.pnl_pct, 4)))
    signal.exit_reason = result.reason
    signal.closed_at = result.closed_at
    signal.status = DeskSignal.Status.CLOSED
    signal.save()
    return signal


def _bars(signal: DeskSignal) -> tuple[list[Bar], timedelta, float | None]:
    """The bars of the signal's venue opened since it opened (the finest timeframe stored),
    and the newest close before them."""
    venue_filter = {"exchange": signal.venue} if signal.venue else {}
    for tf in (*SETTLE_TIMEFRAMES, signal.timeframe):
        if not tf:
            continue
        rows = Candle.objects.filter(symbol=signal.symbol, timeframe=tf, **venue_filter)
        after = list(
            rows.filter(open_time__gte=signal.opened_at)
            .order_by("open_time")
            .values_list("open_time", "open", "high", "low", "close")
        )
        before = (
            rows.filter(open_time__lt=signal.opened_at)
            .order_by("-open_time")
            .values_list("close", flat=True)
            .first()
        )
        if after or before is not None:
            bars = [Bar(t, float(o), float(h), float(lo), float(c)) for t, o, h, lo, c in after]
            return bars, timeframe_delta(tf), float(before) if before is not None else None
    return [], timedelta(minutes=1), None


def signal_bars(signal: DeskSignal) -> tuple[list[Bar], timedelta, float | None]:
    """The bars a signal is judged on (those it is closed on): its venue's finest stored
    timeframe since it opened, the bar length, and the newest close before them."""
    return _bars(signal)


def desk_signals_settle(*, now: datetime | None = None) -> list[DeskSignal]:
    """Close every open signal whose stop or target the later bars touched, or whose horizon
    expired; returns those closed."""
    now = now or timezone.now()
    closed = []
    for signal in DeskSignal.objects.filter(closed_at__isnull=True).order_by("opened_at"):
        bars, step, last_close = _bars(signal)
        result = outcome(
            side=signal.side,
            entry=float(signal.entry_price),
            stop=float(signal.stop_price) if signal.stop_price is not None else None,
            target=float(signal.target_price) if signal.target_price is not None else None,
            expires_at=signal.expires_at,
            bars=bars,
            step=step,
            now=now,
            last_close=last_close,
        )
        if result is not None:
            closed.append(desk_signal_close(signal=signal, result=result))
    return closed


def closed_pnls(*, desk: str | None = None, since: datetime) -> dict[str, list[float]]:
    """Closed signals' pnl per desk since `since`, in the order they closed."""
    rows = DeskSignal.objects.filter(closed_at__gte=since, pnl_pct__isnull=False)
    if desk is not None:
        rows = rows.filter(desk=desk)
    by_desk: dict[str, list[float]] = {}
    for name, pnl in rows.order_by("closed_at", "id").values_list("desk", "pnl_pct"):
        if pnl is not None:  # excluded by the query; the check narrows the type
            by_desk.setdefault(name, []).append(float(pnl))
    return by_desk


def kill_record(state: DeskState, *, now: datetime) -> Record:
    """The record the kill check reads: the window's closed signals, from the last re-enable."""
    since = now - timedelta(days=RECORD_DAYS)
    if state.record_since is not None and state.record_since > since:
        since = state.record_since
    return record_of(closed_pnls(desk=state.desk, since=since).get(state.desk, []))


def state_label(state: DeskState | None, record: Record) -> str:
    """A desk's state as the scorecard, the strategies and each signal's record show it."""
    if state is not None and state.killed_at is not None:
        return "killed"
    if state is not None and not state.enabled:
        return "disabled"
    return "active" if record.trades else "no_data"


def module_mode(record: Record, state: str) -> tuple[str, str]:
    """A desk's mode from its record: live or scout, and why."""
    need = settings.DESK_LIVE_MIN_SIGNALS
    if state in ("killed", "disabled"):
        return TradingModule.Mode.SCOUT, f"{state}: publishes nothing"
    if record.trades < need:
        return (
            TradingModule.Mode.SCOUT,
            f"{record.trades} of the {need} closed signals needed in {RECORD_DAYS} days",
        )
    if (record.expectancy_pct or 0.0) <= 0:
        return (
            TradingModule.Mode.SCOUT,
            f"expectancy {record.expectancy_pct:+.2f}% over {record.trades} signals",
        )
    return (
        TradingModule.Mode.LIVE,
        f"{record.trades} closed signals in {RECORD_DAYS} days, expectancy {record.expectancy_pct:+.2f}%",
    )


@transaction.atomic
def desk_kill(*, desk: str, reason: str, now: datetime | None = None) -> DeskState:
    state = DeskState.objects.select_for_update().get(pk=desk_state(desk).pk)
    if state.killed_at is None:
        state.killed_at = now or timezone.now()
        state.kill_reason = reason[:300]
        state.updated_at = timezone.now()
        state.save()
        logger.warning("desk %s killed: %s", desk, reason)
    return state


@transaction.atomic
def desk_enable(*, desk: str, now: datetime | None = None) -> DeskState:
    """Staff re-enable a desk (the admin action): it publishes again, and its drawdown for the
    kill check counts from now (the losses that killed it do not kill it again)."""
    state = DeskState.objects.select_for_update().get(pk=desk_state(desk).pk)
    now = now or timezone.now()
    state.enabled = True
    state.killed_at = None
    state.kill_reason = ""
    state.record_since = now
    state.updated_at = now
    state.save()
    return state


def desk_kill_check(*, now: datetime | None = None) -> list[str]:
    """Kill every publishing desk whose drawdown reached its threshold; returns their names."""
    now = now or timezone.now()
    desks = set(DeskSignal.objects.values_list("desk", flat=True).distinct())
    killed = []
    for desk in sorted(desks):
        state = desk_state(desk)
        if not state.publishing:
            continue
        record = kill_record(state, now=now)
        threshold = kill_threshold(state)
        if record.max_drawdown_pct is not None and record.max_drawdown_pct >= threshold:
            desk_kill(
                desk=desk,
                reason=f"drawdown {record.max_drawdown_pct:.2f}% reached the kill threshold {threshold:.2f}% "
                f"over {record.trades} closed signals",
                now=now,
            )
            killed.append(desk)
    return killed


# --- live fills (real executions beside the paper record) ----------------------------------------
@dataclass(frozen=True)
class LiveFills:
    """The real fills agents reported on a desk's delegated orders in a window: how many, their
    notional (size x price) and the realized pnl (FIFO per delegation and symbol, net of fees).
    Self-reported: only fills checked against the ingested market at their time count;
    `unchecked_fills` says how many in the window were left out for lacking that check."""

    fills: int = 0
    notional_usdc: float = 0.0
    fees_usdc: float = 0.0
    realized_pnl_usdc: float = 0.0
    unchecked_fills: int = 0


# (since) -> {desk: LiveFills}. The execution-delegation app (webhooks/delegation/) registers
# the function that reads its Fill rows: catalog cannot import it (the layers go one way).
LiveFillsSource = Callable[[datetime], dict[str, LiveFills]]
_LIVE_FILLS: list[LiveFillsSource] = []


def live_fills_register(func: LiveFillsSource) -> None:
    _LIVE_FILLS[:] = [func]


def live_fills(*, since: datetime) -> dict[str, LiveFills] | None:
    """Per desk, the live fills since `since`; None when no source is installed (the scorecard
    then shows live_fills: null rather than zeros it did not count)."""
    if not _LIVE_FILLS:
        return None
    return _LIVE_FILLS[0](since)
