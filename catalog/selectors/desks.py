"""Desk reads: 30-day scorecards from closed signals, the performance teaser, the trading
modules and the current market regime."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.api import schemas as s
from catalog.models import (
    DeskSignal,
    RegimeSnapshot,
    TradingModule,
)
from catalog.selectors.payment import absolute

KILL_DRAWDOWN_PCT = 15.0


def latest_regime() -> RegimeSnapshot | None:
    return RegimeSnapshot.objects.order_by("-computed_at").first()


def _desk_score(desk: str, pnls: list[float]) -> s.DeskScoreOut:
    if not pnls:
        return s.DeskScoreOut(
            desk=desk,
            trades=0,
            wins=0,
            losses=0,
            win_rate=None,
            expectancy_pct=None,
            max_drawdown_pct=None,
            kill_state="no_data",
        )
    wins = sum(1 for p in pnls if p > 0)
    equity = peak = 0.0
    drawdown = 0.0
    for p in pnls:
        equity += p
        peak = max(peak, equity)
        drawdown = max(drawdown, peak - equity)
    return s.DeskScoreOut(
        desk=desk,
        trades=len(pnls),
        wins=wins,
        losses=len(pnls) - wins,
        win_rate=round(wins / len(pnls), 4),
        expectancy_pct=round(sum(pnls) / len(pnls), 4),
        max_drawdown_pct=round(drawdown, 4),
        kill_state="killed" if drawdown >= KILL_DRAWDOWN_PCT else "active",
    )


def _closed_pnls(days: int) -> dict[str, list[float]]:
    since = timezone.now() - timedelta(days=days)
    by_desk: dict[str, list[float]] = {}
    rows = DeskSignal.objects.filter(closed_at__gte=since, pnl_pct__isnull=False).order_by("closed_at")
    for desk, pnl in rows.values_list("desk", "pnl_pct"):
        if pnl is not None:  # excluded by the query; the check narrows the type
            by_desk.setdefault(desk, []).append(float(pnl))
    return by_desk


def scorecard(base: str) -> s.ScorecardOut:
    by_desk = _closed_pnls(30)
    return s.ScorecardOut(
        window_days=30,
        generated_at=iso(timezone.now()) or "",
        kill_drawdown_pct=KILL_DRAWDOWN_PCT,
        overall=_desk_score("all", [p for v in by_desk.values() for p in v]),
        desks=[_desk_score(d, v) for d, v in sorted(by_desk.items())],
    )


def performance(base: str) -> s.PerformanceOut:
    overall = _desk_score("all", [p for v in _closed_pnls(30).values() for p in v])
    return s.PerformanceOut(
        window_days=30,
        closed_trades=overall.trades,
        win_rate=overall.win_rate,
        expectancy_pct=overall.expectancy_pct,
        scorecard=absolute(base, "/api/a2a/program/scorecard-30d"),
        note="Computed from the desks' closed signals; empty until signals close.",
    )


def strategies(base: str) -> s.StrategiesOut:
    mods = list(TradingModule.objects.select_related("sku"))
    return s.StrategiesOut(
        strategies=[
            s.StrategyOut(
                slug=m.slug,
                name=m.name,
                description=m.description,
                mode=m.mode,
                sku=m.sku.sku if m.sku else None,
                paid_path=absolute(base, m.sku.path) if m.sku else None,
            )
            for m in mods
        ],
        live=sum(1 for m in mods if m.mode == TradingModule.Mode.LIVE),
        scout=sum(1 for m in mods if m.mode == TradingModule.Mode.SCOUT),
    )


REGIME_GATES = {"risk_on": "open", "risk_off": "closed", "neutral": "reduced", "high_volatility": "reduced"}


def regime(base: str) -> s.RegimeOut:
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
