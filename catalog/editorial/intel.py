"""The scheduled analytics pass (`intel_compute`: Celery beat every INTEL_COMPUTE_SECONDS,
`manage.py compute_intel`, once after the local stack's first feed pass):

1. the signals of every symbol with candles (catalog/analytics/signals.py);
2. the market regime from the majors (catalog/analytics/gate.py): a RegimeSnapshot is written
   when it changed, and that save pushes the signed `regime_attestation`;
3. the open desk signals closed on the prices ingested since (target, stop or expiry);
4. the kill check: a desk whose drawdown passed its threshold stops publishing;
5. each desk publishes its new signals (DeskSignal rows: `copy_signal` is pushed);
6. the composite intelligence snapshot stored (intel/latest sells the newest).

Desks register here (`desk_register`): a desk is a slug (the TradingModule slug), its
strategy family (the regime gate) and a function proposing signals from the pass's context.
This module registers the trend-momentum desk; other desks register theirs the same way."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.analytics.gate import (
    GATE_SIZE,
    REGIME_GATES,
    MarketRegime,
    gate_for,
    market_regime,
    symbol_families,
)
from catalog.analytics.provenance import Provenance
from catalog.analytics.regime import Regime
from catalog.analytics.signals import PRIMARY, SymbolSignal, TimeframeSignal, fresh_limit, signals_compute
from catalog.analytics.track import Record, record_of
from catalog.editorial.track_record import (
    RECORD_DAYS,
    closed_pnls,
    desk_kill_check,
    desk_signal_publish,
    desk_signals_settle,
    desk_state,
    module_mode,
    state_label,
)
from catalog.feeds.retention import retention_register
from catalog.models import DeskSignal, DeskState, IntelSnapshot, NewsItem, RegimeSnapshot, TradingModule
from catalog.signals import data_pass_finished

logger = logging.getLogger(__name__)

# Snapshots every INTEL_COMPUTE_SECONDS: the feeds' pruning keeps INTEL_RETENTION_DAYS of them.
retention_register(model=IntelSnapshot, time_field="computed_at", days_setting="INTEL_RETENTION_DAYS")

LOCK_KEY = "a2a:intel:lock"
# Top signals and news items a snapshot keeps; the news window it looks back over.
INTEL_TOP_SIGNALS = 5
INTEL_NEWS_ITEMS = 8
INTEL_NEWS_WINDOW = timedelta(hours=48)
METHOD = (
    "EMA20/EMA50 cross and slope, ADX/DI, RSI, MACD and Bollinger %b votes on 1h and 1m candles, "
    "weighted by regime; ATR stop/target"
)


# --- desks ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """A signal a desk proposes to publish (desk_signal_publish's arguments)."""

    symbol: str
    side: str
    venue: str
    timeframe: str
    entry: float
    stop: float | None
    target: float | None
    expires_at: datetime | None
    label: str = ""
    score: float | None = None
    confidence: float | None = None
    basis: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DeskContext:
    now: datetime
    signals: list[SymbolSignal]  # fresh ones only
    market: MarketRegime


@dataclass(frozen=True)
class Desk:
    slug: str
    family: str  # trend_following, mean_reversion or carry (catalog/analytics/gate.py)
    propose: Callable[[DeskContext], list[Candidate]]
    description: str = ""


DESKS: dict[str, Desk] = {}


def desk_register(desk: Desk) -> Desk:
    DESKS[desk.slug] = desk
    return desk


def gate_basis(*, family: str, market: MarketRegime, regime: Regime) -> dict[str, Any]:
    gate = gate_for(family=family, market=market, regime=regime)
    return {
        "family": family,
        "gate": gate,
        "size_factor": GATE_SIZE[gate],
        "market_regime": market.label,
        "symbol_regime": regime.label,
    }


TREND_DESK = "trend-momentum"


def trend_momentum_candidates(ctx: DeskContext) -> list[Candidate]:
    """BUY/SELL signals (and stronger) with at least DESK_MIN_CONFIDENCE, where the regime
    gate leaves trend following open or reduced for the symbol."""
    out = []
    for sig in ctx.signals:
        if sig.side is None or sig.stop is None or sig.confidence < settings.DESK_MIN_CONFIDENCE:
            continue
        basis = gate_basis(family="trend_following", market=ctx.market, regime=sig.primary.regime)
        if basis["gate"] == "closed":
            continue
        basis.update(
            agreement=sig.agreement,
            atr=sig.atr,
            scores={f.timeframe: f.score for f in sig.frames},
        )
        out.append(
            Candidate(
                symbol=sig.symbol,
                side=sig.side,
                venue=sig.venue,
                timeframe=sig.primary.timeframe,
                entry=sig.entry,
                stop=sig.stop,
                target=sig.target,
                expires_at=ctx.now + sig.horizon,
                label=sig.label,
                score=sig.score,
                confidence=sig.confidence,
                basis=basis,
            )
        )
    return out


desk_register(
    Desk(
        slug=TREND_DESK,
        family="trend_following",
        propose=trend_momentum_candidates,
        description="Trend and momentum signals on 1h with 1m timing",
    )
)


def desks_publish(ctx: DeskContext) -> list[DeskSignal]:
    published = []
    for desk in DESKS.values():
        if not desk_state(desk.slug).publishing:
            continue
        for c in desk.propose(ctx):
            row = desk_signal_publish(
                desk=desk.slug,
                symbol=c.symbol,
                side=c.side,
                venue=c.venue,
                timeframe=c.timeframe,
                entry_price=c.entry,
                stop_price=c.stop,
                target_price=c.target,
                expires_at=c.expires_at,
                label=c.label,
                score=c.score,
                confidence=c.confidence,
                basis=c.basis,
                opened_at=ctx.now,
            )
            if row is not None:
                published.append(row)
    return published


# --- desk records ------------------------------------------------------------------------------
def desk_performance(desk: str, *, now: datetime | None = None) -> dict[str, Any]:
    """A desk's historical_performance: its record over the last RECORD_DAYS, and its state."""
    now = now or timezone.now()
    record = record_of(closed_pnls(desk=desk, since=now - timedelta(days=RECORD_DAYS)).get(desk, []))
    state = DeskState.objects.filter(desk=desk).first()
    return performance_payload(desk, record, state_label(state, record))


def performance_payload(desk: str, record: Record, state: str) -> dict[str, Any]:
    return {
        "desk": desk,
        "window_days": RECORD_DAYS,
        "closed_signals": record.trades,
        "wins": record.wins,
        "losses": record.losses,
        "win_rate": record.win_rate,
        "avg_win_pct": record.avg_win_pct,
        "avg_loss_pct": record.avg_loss_pct,
        "expectancy_pct": record.expectancy_pct,
        "max_drawdown_pct": record.max_drawdown_pct,
        "state": state,
    }


# --- payloads ------------------------------------------------------------------------------------
def _r(x: float | None, n: int = 6) -> float | None:
    return None if x is None else round(float(x), n)


def regime_payload(regime: Regime) -> dict[str, Any]:
    return {
        "label": regime.label,
        "direction": regime.direction,
        "adx": _r(regime.adx, 2),
        "ema_slope_pct": _r(regime.ema_slope_pct, 4),
        "trend_atrs": _r(regime.trend_atrs, 3),
        "vol_percentile": _r(regime.vol_percentile, 1),
        "atr_pct": _r(regime.atr_pct, 4),
        "since": iso(regime.since),
        "bars": regime.bars,
        "range_low": _r(regime.range_low, 10),
        "range_high": _r(regime.range_high, 10),
    }


def frame_payload(frame: TimeframeSignal) -> dict[str, Any]:
    snap = frame.snap
    return {
        "timeframe": frame.timeframe,
        "venue": frame.series.exchange,
        "bars": len(frame.series),
        "last_close_at": iso(frame.series.last_at),
        "stale": frame.stale,
        "regime": frame.regime.label,
        "score": frame.score,
        "label": frame.label,
        "votes": [
            {
                "name": v.name,
                "family": v.family,
                "value": v.value,
                "weight": v.weight,
                "contribution": round(v.contribution, 4),
                "reading": v.reading,
            }
            for v in frame.votes
        ],
        "indicators": {
            "close": _r(snap.close, 10),
            "rsi": _r(snap.rsi, 2),
            "ema20": _r(snap.ema_fast, 10),
            "ema50": _r(snap.ema_slow, 10),
            "macd": _r(snap.macd, 10),
            "macd_signal": _r(snap.macd_signal, 10),
            "macd_hist": _r(snap.macd_hist, 10),
            "bb_lower": _r(snap.bb_lower, 10),
            "bb_mid": _r(snap.bb_mid, 10),
            "bb_upper": _r(snap.bb_upper, 10),
            "bb_pct_b": _r(snap.bb_pct_b, 4),
            "adx": _r(snap.adx, 2),
            "plus_di": _r(snap.plus_di, 2),
            "minus_di": _r(snap.minus_di, 2),
            "atr": _r(snap.atr, 10),
            "atr_pct": _r(snap.atr_pct, 4),
        },
    }


def signal_brief(sig: SymbolSignal) -> dict[str, Any]:
    """The compact form (intel snapshots' top signals)."""
    return {
        "symbol": sig.symbol,
        "label": sig.label,
        "score": sig.score,
        "side": sig.side,
        "decided_by": sig.decided_by,
        "confidence": sig.confidence,
        "agreement": sig.agreement,
        "regime": sig.primary.regime.label,
        "venue": sig.venue,
        "entry": _r(sig.entry, 10),
        "stop": _r(sig.stop, 10),
        "target": _r(sig.target, 10),
        "horizon_hours": round(sig.horizon.total_seconds() / 3600, 2),
    }


def signal_provenance(signals: list[SymbolSignal], *, now: datetime) -> Provenance:
    prov = Provenance(method=METHOD, max_age=signals_max_age(), now=now)
    for sig in signals:
        for f in sig.frames:
            prov.add(
                source=f.series.source or "exchanges",
                venue=f.series.exchange,
                replay=f.series.replay,
                as_of=f.series.last_at,
                items=len(f.series),
            )
    return prov


def signals_max_age() -> timedelta:
    """The freshness limit of a signal payload: its primary (1h) bars' (two bars and a minute)."""
    return fresh_limit(PRIMARY)


def market_payload(market: MarketRegime, *, now: datetime) -> dict[str, Any]:
    latest = RegimeSnapshot.objects.order_by("-computed_at").first()
    since = latest.computed_at if latest is not None and latest.regime == market.label else market.since
    return {
        "regime": market.label,
        "confidence": market.confidence,
        "gate": REGIME_GATES.get(market.label, "closed"),
        "since": iso(since),
        "families": market.families,
        "majors": [{"symbol": s, **regime_payload(r)} for s, r in sorted(market.majors.items())],
    }


# --- sentiment (another module computes it; intel includes it only when one is installed) ------
IntelSentiment = Callable[[datetime], list[dict[str, Any]] | None]
_SENTIMENT: list[IntelSentiment] = []


def intel_sentiment_register(func: IntelSentiment) -> None:
    """The sentiment analytics register the function intel snapshots call for their
    `sentiment` section: (now) -> [{"asset", "score", "label", "items"}] or None. Without
    one, snapshots carry `sentiment: null` (nothing is made up)."""
    _SENTIMENT[:] = [func]


def sentiment_section(now: datetime) -> list[dict[str, Any]] | None:
    if not _SENTIMENT:
        return None
    try:
        return _SENTIMENT[0](now)
    except Exception:  # noqa: BLE001 - a failing section leaves the rest of the snapshot
        logger.exception("intel: the sentiment section failed")
        return None


def notable_news(*, now: datetime, prov: Provenance) -> list[dict[str, Any]]:
    """The latest ingested news that names assets (tickers), newest first."""
    rows = (
        NewsItem.objects.filter(ingested_at__gte=now - INTEL_NEWS_WINDOW)
        .exclude(tickers=[])
        .order_by("-published_at", "-id")[: INTEL_NEWS_ITEMS * 4]
    )
    out = []
    for item in rows:
        tickers = [str(t) for t in (item.tickers or []) if str(t).strip()]
        if not tickers:
            continue
        out.append(
            {
                "id": item.id,
                "title": item.title,
                "tickers": tickers,
                "category": item.category,
                "source": item.source,
                "url": item.url,
                "published_at": iso(item.published_at or item.ingested_at),
            }
        )
        prov.add(source="news", replay=item.replay, as_of=item.published_at or item.ingested_at)
        if len(out) >= INTEL_NEWS_ITEMS:
            break
    return out


# --- writes --------------------------------------------------------------------------------------
@transaction.atomic
def regime_snapshot_record(*, market: MarketRegime, now: datetime) -> RegimeSnapshot | None:
    """Write a RegimeSnapshot when the market regime changed (or none was written yet); its
    save pushes the signed regime_attestation. None when unchanged or unknown."""
    if market.label == "unknown":
        return None
    latest = RegimeSnapshot.objects.select_for_update().order_by("-computed_at").first()
    if latest is not None and latest.regime == market.label:
        return None
    return RegimeSnapshot.objects.create(
        regime=market.label,
        confidence=market.confidence,
        computed_at=now,
        inputs={
            "majors": {s: regime_payload(r) for s, r in sorted(market.majors.items())},
            "families": market.families,
            "previous": latest.regime if latest is not None else None,
        },
    )


@transaction.atomic
def intel_snapshot_store(
    *, now: datetime, signals: list[SymbolSignal], market: MarketRegime
) -> IntelSnapshot:
    prov = signal_provenance(signals, now=now)
    top = [s for s in signals if s.side is not None][:INTEL_TOP_SIGNALS]
    news = notable_news(now=now, prov=prov)  # before prov.out(): the news are inputs too
    provenance = prov.out()
    payload = {
        "computed_at": iso(now),
        "regime": market_payload(market, now=now),
        "top_signals": [signal_brief(s) for s in top],
        "sentiment": sentiment_section(now),
        "news": news,
        "provenance": provenance,
    }
    return IntelSnapshot.objects.create(
        computed_at=now,
        regime=market.label,
        as_of=prov.latest,
        replay=bool(provenance["replay"]),
        payload=payload,
    )


def modules_mode_sync(*, now: datetime) -> None:
    """Store each trading module's live/scout mode as its record gives it (the admin shows the
    stored one; /api/mcp/strategies computes it at read time the same way)."""
    by_desk = closed_pnls(since=now - timedelta(days=RECORD_DAYS))
    states = {s.desk: s for s in DeskState.objects.all()}
    for module in TradingModule.objects.all():
        record = record_of(by_desk.get(module.slug, []))
        mode, _ = module_mode(record, state_label(states.get(module.slug), record))
        if module.mode != mode:
            module.mode = mode
            module.save(update_fields=["mode"])


@dataclass
class IntelRun:
    signals: int = 0
    fresh: int = 0
    regime: str = "unknown"
    regime_snapshot: int | None = None
    closed: list[int] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)
    published: list[int] = field(default_factory=list)
    intel_snapshot: int | None = None
    skipped: str = ""


def intel_compute(*, now: datetime | None = None) -> IntelRun:
    """One analytics pass (see the module's docstring). Runs one at a time (a cache lock);
    a second caller while one runs returns at once with `skipped` set."""
    token = secrets.token_hex(8)
    if not cache.add(LOCK_KEY, token, timeout=max(int(settings.INTEL_COMPUTE_SECONDS) * 2, 120)):
        return IntelRun(skipped="another analytics pass is running")
    try:
        return _compute(now or timezone.now())
    finally:
        # Only our own lease: a pass that outlived it must not release the next pass's.
        if cache.get(LOCK_KEY) == token:
            cache.delete(LOCK_KEY)
        data_pass_finished.send(sender=intel_compute)  # what it changed may make a product (un)available


def _compute(now: datetime) -> IntelRun:
    run = IntelRun()
    signals = signals_compute(now=now)
    fresh = [s for s in signals if not s.stale]
    run.signals, run.fresh = len(signals), len(fresh)
    market = market_regime({s.symbol: s.primary.regime for s in fresh})
    run.regime = market.label
    snap = regime_snapshot_record(market=market, now=now)
    run.regime_snapshot = snap.pk if snap else None
    run.closed = [s.pk for s in desk_signals_settle(now=now)]
    run.killed = desk_kill_check(now=now)
    modules_mode_sync(now=now)
    if fresh:
        ctx = DeskContext(now=now, signals=fresh, market=market)
        run.published = [s.pk for s in desks_publish(ctx)]
        run.intel_snapshot = intel_snapshot_store(now=now, signals=fresh, market=market).pk
    else:
        run.skipped = "no fresh candles: no signals published, no intel snapshot stored"
    logger.info(
        "intel: %d signals (%d fresh), regime %s, %d closed, %d published, killed %s",
        run.signals,
        run.fresh,
        run.regime,
        len(run.closed),
        len(run.published),
        run.killed or "none",
    )
    return run


__all__ = [
    "DESKS",
    "Candidate",
    "Desk",
    "DeskContext",
    "IntelRun",
    "desk_performance",
    "desk_register",
    "intel_compute",
    "intel_sentiment_register",
    "symbol_families",
]
