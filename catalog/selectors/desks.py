"""Desk reads: the 30-day scorecard and the performance teaser from the desks' closed signals
(catalog/editorial/track_record.py writes them; catalog/analytics/track.py has the maths), the trading
modules with their live/scout state from that record, and the current market regime."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.analytics.gate import REGIME_GATES
from catalog.analytics.track import record_of
from catalog.editorial.track_record import (
    RECORD_DAYS,
    LiveFills,
    closed_pnls,
    live_fills,
    module_mode,
    state_label,
)
from catalog.models import DeskSignal, DeskState, RegimeSnapshot, TradingModule
from catalog.selectors import schemas as s
from catalog.selectors.payment import absolute


def latest_regime() -> RegimeSnapshot | None:
    return RegimeSnapshot.objects.order_by("-computed_at").first()


def _live(fills: dict[str, LiveFills] | None, desk: str | None) -> s.LiveFillsOut | None:
    """One desk's live fills (desk None: all desks summed); None when none are counted."""
    if fills is None:
        return None
    rows = list(fills.values()) if desk is None else [fills.get(desk, LiveFills())]
    return s.LiveFillsOut(
        fills=sum(r.fills for r in rows),
        notional_usdc=round(sum(r.notional_usdc for r in rows), 6),
        fees_usdc=round(sum(r.fees_usdc for r in rows), 6),
        realized_pnl_usdc=round(sum(r.realized_pnl_usdc for r in rows), 6),
        unchecked_fills=sum(r.unchecked_fills for r in rows),
    )


def _desk_score(
    desk: str,
    pnls: list[float],
    *,
    state: DeskState | None,
    published: int,
    open_now: int,
    live: s.LiveFillsOut | None = None,
) -> s.DeskScoreOut:
    r = record_of(pnls)
    return s.DeskScoreOut(
        desk=desk,
        trades=r.trades,
        wins=r.wins,
        losses=r.losses,
        win_rate=r.win_rate,
        avg_win_pct=r.avg_win_pct,
        avg_loss_pct=r.avg_loss_pct,
        expectancy_pct=r.expectancy_pct,
        max_drawdown_pct=r.max_drawdown_pct,
        signals=published,
        open_signals=open_now,
        kill_state=state_label(state, r),
        killed_at=iso(state.killed_at) if state is not None else None,
        kill_reason=(state.kill_reason or None) if state is not None and state.killed_at else None,
        live_fills=live,
    )


def _since(now: datetime) -> datetime:
    return now - timedelta(days=RECORD_DAYS)


def _counts(since: datetime) -> tuple[dict[str, int], dict[str, int]]:
    """Signals published in the window, and open now, per desk."""
    published = dict(
        DeskSignal.objects.filter(opened_at__gte=since)
        .order_by()
        .values("desk")
        .annotate(n=Count("id"))
        .values_list("desk", "n")
    )
    open_now = dict(
        DeskSignal.objects.filter(closed_at__isnull=True)
        .order_by()
        .values("desk")
        .annotate(n=Count("id"))
        .values_list("desk", "n")
    )
    return published, open_now


def scorecard(base: str) -> s.ScorecardOut:
    now = timezone.now()
    since = _since(now)
    by_desk = closed_pnls(since=since)
    published, open_now = _counts(since)
    states = {st.desk: st for st in DeskState.objects.all()}
    fills = live_fills(since=since)
    desks = sorted(set(by_desk) | set(published) | set(open_now) | set(states) | set(fills or {}))
    overall = [p for d in sorted(by_desk) for p in by_desk[d]]
    return s.ScorecardOut(
        window_days=RECORD_DAYS,
        generated_at=iso(now) or "",
        kill_drawdown_pct=settings.DESK_KILL_DRAWDOWN_PCT,
        overall=_desk_score(
            "all",
            overall,
            state=None,
            published=sum(published.values()),
            open_now=sum(open_now.values()),
            live=_live(fills, None),
        ),
        desks=[
            _desk_score(
                d,
                by_desk.get(d, []),
                state=states.get(d),
                published=published.get(d, 0),
                open_now=open_now.get(d, 0),
                live=_live(fills, d),
            )
            for d in desks
        ],
    )


def performance(base: str) -> s.PerformanceOut:
    now = timezone.now()
    by_desk = closed_pnls(since=_since(now))
    # Overall figures in closing order across desks (the drawdown of the whole book).
    rows = DeskSignal.objects.filter(closed_at__gte=_since(now), pnl_pct__isnull=False).order_by(
        "closed_at", "id"
    )
    overall = record_of([float(p) for p in rows.values_list("pnl_pct", flat=True) if p is not None])
    published, _ = _counts(_since(now))
    return s.PerformanceOut(
        window_days=RECORD_DAYS,
        closed_trades=overall.trades,
        win_rate=overall.win_rate,
        avg_win_pct=overall.avg_win_pct,
        avg_loss_pct=overall.avg_loss_pct,
        expectancy_pct=overall.expectancy_pct,
        max_drawdown_pct=overall.max_drawdown_pct,
        desks=len(set(by_desk) | set(published)),
        killed_desks=sorted(DeskState.objects.filter(killed_at__isnull=False).values_list("desk", flat=True)),
        scorecard=absolute(base, "/api/a2a/program/scorecard-30d"),
        note="Computed from the desks' closed signals (target, stop or horizon expiry on the ingested prices), "
        "before fees; empty until signals close. live_fills: the fills agents reported on delegated orders, "
        "self-reported and checked against the market price at their time, shown apart (never in the figures above).",
        live_fills=_live(live_fills(since=_since(now)), None),
    )


def strategies(base: str) -> s.StrategiesOut:
    now = timezone.now()
    by_desk = closed_pnls(since=_since(now))
    _, open_now = _counts(_since(now))
    states = {st.desk: st for st in DeskState.objects.all()}
    out = []
    for m in TradingModule.objects.select_related("sku"):
        record = record_of(by_desk.get(m.slug, []))
        state = state_label(states.get(m.slug), record)
        mode, reason = module_mode(record, state)
        out.append(
            s.StrategyOut(
                slug=m.slug,
                name=m.name,
                description=m.description,
                mode=mode,
                mode_reason=reason,
                state=state,
                closed_signals_30d=record.trades,
                open_signals=open_now.get(m.slug, 0),
                win_rate=record.win_rate,
                expectancy_pct=record.expectancy_pct,
                max_drawdown_pct=record.max_drawdown_pct,
                sku=m.sku.sku if m.sku else None,
                paid_path=absolute(base, m.sku.path) if m.sku else None,
            )
        )
    return s.StrategiesOut(
        strategies=out,
        live=sum(1 for x in out if x.mode == TradingModule.Mode.LIVE),
        scout=sum(1 for x in out if x.mode == TradingModule.Mode.SCOUT),
    )


def regime(base: str) -> s.RegimeOut:
    """The newest market regime the analytics pass recorded (catalog/editorial/intel.py writes a snapshot
    when it changes; the regime gate product has the per-symbol detail)."""
    snap = latest_regime()
    if snap is None:
        return s.RegimeOut(regime="unknown", confidence=None, as_of=None, inputs={}, gate="unknown")
    return s.RegimeOut(
        regime=snap.regime,
        confidence=snap.confidence,
        as_of=iso(snap.computed_at),
        inputs=dict(snap.inputs),
        gate=REGIME_GATES.get(snap.regime, "unknown"),
    )
