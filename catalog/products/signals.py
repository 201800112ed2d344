"""Signals, copy signals, the regime gate and the composite intelligence: computed from the
exchange feed's candles (catalog/analytics/signals.py, gate.py) and the desks' track record
(catalog/editorial/track_record.py, catalog/editorial/intel.py).

- `signals` (/signals, GET /api/a2a/signals): every symbol with fresh candles, its votes,
  score, label, timeframes' agreement, entry, ATR stop and target, horizon and confidence,
  with its desk's historical_performance.
- `copy_signals`: catalog/products/copy_signals.py.
- `regime_gate` (/risk/regime-gate): each symbol's regime, the market's, the families open.
- `intel_latest` (/intel/latest, GET /api/a2a/intel/latest) and `intel_history`
  (/intel/history, GET /api/a2a/intel/history): the stored intel snapshots."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal, cast

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, Limit24Query, QueryModel
from catalog.analytics.gate import GATE_SIZE, market_regime, symbol_families
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import regime_classify
from catalog.analytics.series import ohlcv, symbols_with_candles
from catalog.analytics.signals import (
    BUY_THRESHOLD,
    MIN_BARS,
    PRIMARY,
    STRONG_THRESHOLD,
    TIMEFRAME_WEIGHTS,
    SymbolSignal,
    fresh_limit,
    signals_compute,
)
from catalog.editorial.intel import (
    TREND_DESK,
    desk_performance,
    frame_payload,
    market_payload,
    regime_payload,
    signal_provenance,
)
from catalog.models import Candle, DeskSignal, IntelSnapshot
from catalog.products.registry import (
    CreditRoute,
    ProductCall,
    ProductFailed,
    TeaserSpec,
    fresh_required,
    product,
)

Gate = Literal["open", "reduced", "closed"]
SignalLabel = Literal["STRONG_SELL", "SELL", "NEUTRAL", "BUY", "STRONG_BUY"]
RegimeLabel = Literal["up_trend", "down_trend", "range", "high_volatility", "unknown"]
MarketLabel = Literal["risk_on", "risk_off", "neutral", "high_volatility", "unknown"]
# --- output models ---------------------------------------------------------------------------------
class SignalVoteOut(BaseModel):
    name: Literal["ema_cross", "ema_slope", "adx_di", "rsi", "macd", "bollinger"]
    family: Literal["trend", "momentum", "mean_reversion"]
    value: float = Field(description="the vote in [-1, 1]: +1 buys, -1 sells")
    weight: float = Field(description="its weight in this timeframe's score (the weights sum to 1)")
    contribution: float = Field(description="value x weight: the votes' contributions sum to the score")
    reading: str = Field(description="what the indicator read, in numbers")


class SignalIndicatorsOut(BaseModel):
    close: float | None
    rsi: float | None
    ema20: float | None
    ema50: float | None
    macd: float | None
    macd_signal: float | None
    macd_hist: float | None
    bb_lower: float | None
    bb_mid: float | None
    bb_upper: float | None
    bb_pct_b: float | None
    adx: float | None
    plus_di: float | None
    minus_di: float | None
    atr: float | None
    atr_pct: float | None


class SignalTimeframeOut(BaseModel):
    timeframe: str
    venue: str
    bars: int
    last_close_at: str | None = Field(
        description="ISO 8601 UTC: when the newest close was true: the newest bar's close time, or while "
        "that bar is still open, when it was observed (never in the future)"
    )
    stale: bool
    regime: RegimeLabel
    score: float = Field(description="weighted mean of the votes, in [-1, 1]")
    label: SignalLabel
    votes: list[SignalVoteOut]
    indicators: SignalIndicatorsOut


class SignalRegimeOut(BaseModel):
    label: RegimeLabel
    direction: Literal["up", "down", "flat"]
    adx: float | None = Field(description="trend strength (ADX 14)")
    ema_slope_pct: float | None = Field(description="% move of EMA50 over the last 10 bars")
    trend_atrs: float | None = Field(description="that move in ATRs (signed)")
    vol_percentile: float | None = Field(description="where the current ATR% ranks in the window, 0-100")
    atr_pct: float | None
    since: str | None = Field(description="ISO 8601 UTC: the first bar of the current regime")
    bars: int = Field(description="bars in the current regime")
    range_low: float = Field(
        description="lowest low of the regime's bars; in a range, of the band observed over days "
        "(the longest recent window whose closes crossed its middle at least 4 times)"
    )
    range_high: float = Field(description="highest high, likewise")


class HistoricalPerformanceOut(BaseModel):
    desk: str
    window_days: int
    closed_signals: int
    wins: int
    losses: int
    win_rate: float | None
    avg_win_pct: float | None
    avg_loss_pct: float | None
    expectancy_pct: float | None = Field(description="mean pnl per closed signal, percent, before fees")
    max_drawdown_pct: float | None = Field(description="largest fall of the cumulative pnl from its peak")
    state: Literal["no_data", "active", "killed", "disabled"]


class DeskSignalRefOut(BaseModel):
    id: int
    status: Literal["open", "closed"]
    side: Literal["long", "short"]
    opened_at: str
    entry: float


class SignalOut(BaseModel):
    symbol: str
    label: SignalLabel
    score: float = Field(
        description="the deciding score in [-1, 1]: the timeframes' scores weighted by timeframe_weights, "
        "or in a 1h range the 1h score alone (mean reversion)"
    )
    side: Literal["long", "short"] | None = Field(description="null for NEUTRAL")
    confidence: float = Field(description="agreement x (0.5 + 0.5 x the 1h trend strength ADX/40), 0..1")
    agreement: float = Field(description="share of timeframes pointing the same way (neutral counts half)")
    venue: str = Field(description="the venue of the entry price")
    entry: float = Field(description="the freshest close (1m)")
    stop: float | None = Field(
        description="SIGNAL_STOP_ATR ATRs (1h) against the trade (in a range: no further than the band's edge); "
        "null for NEUTRAL"
    )
    target: float | None = Field(
        description="SIGNAL_TARGET_ATR ATRs (1h) with the trade (in a range: at most the band's middle); "
        "null for NEUTRAL"
    )
    decided_by: str = Field(description="the timeframe(s) whose score set the label: 1h (a range), 1h+1m")
    decision: str = Field(description="how the label and levels were decided, in a sentence")
    atr: float | None = Field(description="the 1h ATR the levels are measured in")
    risk_reward: float | None
    horizon_hours: float = Field(description="how long the signal holds: SIGNAL_HORIZON_BARS 1h bars")
    expires_at: str | None
    regime: SignalRegimeOut = Field(description="the 1h regime")
    timeframes: list[SignalTimeframeOut]
    desk: str = Field(description="the desk that publishes this kind of signal")
    desk_signal: DeskSignalRefOut | None = Field(description="the desk's open signal on this symbol, if any")
    historical_performance: HistoricalPerformanceOut


class SignalsOut(Provenanced):
    count: int
    thresholds: dict[str, float] = Field(description="|score| for BUY/SELL and STRONG_BUY/STRONG_SELL")
    timeframe_weights: dict[str, float]
    signals: list[SignalOut]


class SymbolRegimeGateOut(SignalRegimeOut):
    symbol: str
    venue: str
    timeframe: str
    stale: bool
    families: dict[str, Gate] = Field(description="what this symbol's regime allows, per strategy family")


class MajorRegimeOut(SignalRegimeOut):
    symbol: str


class MarketRegimeOut(BaseModel):
    regime: MarketLabel
    confidence: float
    gate: str = Field(description="new directional risk: open (risk_on), reduced, closed (risk_off)")
    since: str | None = Field(description="ISO 8601 UTC: since when the market is in this regime")
    families: dict[str, Gate]
    majors: list[MajorRegimeOut]


class RegimeGateOut(Provenanced):
    market: MarketRegimeOut
    symbols: list[SymbolRegimeGateOut]
    open_families: dict[str, list[str]] = Field(
        description="per family, the symbols where it is open or reduced (the lower of market and symbol gate)"
    )


class IntelSignalOut(BaseModel):
    symbol: str
    label: SignalLabel
    score: float
    side: Literal["long", "short"] | None
    decided_by: str | None = Field(
        default=None, description="the timeframe(s) whose score set the label (null in older snapshots)"
    )
    confidence: float
    agreement: float
    regime: RegimeLabel
    venue: str
    entry: float | None
    stop: float | None
    target: float | None
    horizon_hours: float


class IntelSentimentOut(BaseModel):
    asset: str
    score: float
    label: str
    items: int


class IntelNewsOut(BaseModel):
    id: int
    title: str
    tickers: list[str]
    category: str
    source: str
    url: str
    published_at: str | None


class IntelSnapshotOut(BaseModel):
    snapshot_id: int
    computed_at: str
    regime: MarketRegimeOut
    top_signals: list[IntelSignalOut]
    sentiment: list[IntelSentimentOut] | None = Field(
        description="per asset news sentiment when the service computes it; null otherwise"
    )
    news: list[IntelNewsOut] = Field(description="the latest ingested news naming assets")


class IntelLatestOut(IntelSnapshotOut, Provenanced):
    pass


class IntelHistoryOut(Provenanced):
    count: int
    snapshots: list[IntelSnapshotOut]


# --- params --------------------------------------------------------------------------------------
class SignalsParams(QueryModel):
    symbol: str | None = Field(
        default=None,
        min_length=2,
        max_length=40,
        pattern=r"^[A-Za-z0-9]+(/[A-Za-z0-9]+)?$",
        description="one symbol (BTC/USDT, or a base: BTC); default every symbol with fresh candles",
    )
    limit: int = Limit(20)


class IntelHistoryParams(Limit24Query):
    pass


# --- helpers -------------------------------------------------------------------------------------
def _resolve_symbol(raw: str) -> str:
    """A symbol as the candles store it: BTC/USDT as given, a base tried against USDT, USD, USDC."""
    raw = raw.upper()
    candidates = [raw] if "/" in raw else [f"{raw}/{q}" for q in ("USDT", "USD", "USDC")]
    for symbol in candidates:
        if Candle.objects.filter(symbol=symbol, timeframe=PRIMARY).exists():
            return symbol
    raise NotFound(f"no candles for {raw}; see /api/a2a/exchange/markets for the symbols")


def _performance(cache: dict[str, dict[str, Any]], desk: str) -> dict[str, Any]:
    if desk not in cache:
        cache[desk] = desk_performance(desk)
    return cache[desk]


def _risk_reward(sig: SymbolSignal) -> float | None:
    if sig.stop is None or sig.target is None or sig.stop == sig.entry:
        return None
    return round(abs(sig.target - sig.entry) / abs(sig.entry - sig.stop), 3)


def signal_payload(sig: SymbolSignal, *, now: datetime, perf: dict[str, Any]) -> dict[str, Any]:
    open_row = (
        DeskSignal.objects.filter(desk=TREND_DESK, symbol=sig.symbol, closed_at__isnull=True)
        .order_by("-opened_at")
        .first()
    )
    return {
        "symbol": sig.symbol,
        "label": sig.label,
        "score": sig.score,
        "side": sig.side,
        "confidence": sig.confidence,
        "agreement": sig.agreement,
        "venue": sig.venue,
        "entry": round(sig.entry, 10),
        "stop": None if sig.stop is None else round(sig.stop, 10),
        "target": None if sig.target is None else round(sig.target, 10),
        "atr": None if sig.atr is None else round(sig.atr, 10),
        "risk_reward": _risk_reward(sig),
        "decided_by": sig.decided_by,
        "decision": sig.decision,
        "horizon_hours": round(sig.horizon.total_seconds() / 3600, 2),
        "expires_at": iso(now + sig.horizon) if sig.side else None,
        "regime": regime_payload(sig.primary.regime),
        "timeframes": [frame_payload(f) for f in sig.frames],
        "desk": TREND_DESK,
        "desk_signal": None
        if open_row is None
        else {
            "id": open_row.pk,
            "status": open_row.status,
            "side": open_row.side,
            "opened_at": iso(open_row.opened_at),
            "entry": float(open_row.entry_price),
        },
        "historical_performance": perf,
    }


def _has_candles() -> tuple[bool, str]:
    newest = (
        Candle.objects.filter(timeframe=PRIMARY)
        .order_by("-open_time")
        .values_list("open_time", flat=True)
        .first()
    )
    if newest is None:
        return False, "no candles have been ingested yet"
    if timezone.now() - newest > fresh_limit(PRIMARY) + timedelta(hours=1):
        return False, "the newest candles are stale"
    return True, ""


# --- signals -------------------------------------------------------------------------------------
@product(
    sku="signals",
    path="/signals",
    headline="Trading signals from the desks",
    price="0.1",
    family="trading",
    rank=43,
    marketplace_paid=True,
    session_callable=True,
    teaser="trend-momentum-desk",
    teasers=(
        TeaserSpec(
            name="trend-momentum-desk",
            title="Trend and momentum desk",
            summary="Trend and momentum signals from the desks.",
            highlights=("direction", "strength"),
        ),
    ),
    credit_routes=(CreditRoute(route="api/a2a/signals", operation_id="signals", summary="Trading signals"),),
    params=SignalsParams,
    output=SignalsOut,
    available=_has_candles,
)
def signals(call: ProductCall) -> dict[str, Any]:
    params = cast(SignalsParams, call.params)
    now = timezone.now()
    symbols = [_resolve_symbol(params.symbol)] if params.symbol else None
    computed = [s for s in signals_compute(symbols=symbols, now=now) if not s.stale]
    if not computed:
        raise ProductFailed("no symbol has fresh candles with enough history; nothing was charged")
    computed = computed[: params.limit]
    prov = signal_provenance(computed, now=now)
    fresh_required(prov, "fresh candles")
    perf: dict[str, dict[str, Any]] = {}
    return {
        "count": len(computed),
        "thresholds": {"buy_sell": BUY_THRESHOLD, "strong": STRONG_THRESHOLD},
        "timeframe_weights": dict(TIMEFRAME_WEIGHTS),
        "signals": [signal_payload(s, now=now, perf=_performance(perf, TREND_DESK)) for s in computed],
        **prov.out(),
    }


# --- regime gate ---------------------------------------------------------------------------------
@product(
    sku="regime_gate",
    path="/risk/regime-gate",
    headline="Regime gate: the current market regime and what it allows",
    price="0.06",
    family="risk",
    rank=35,
    session_callable=True,
    teaser="macro-gate",
    output=RegimeGateOut,
    pure=True,
    available=_has_candles,
)
def regime_gate(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    prov = Provenance(
        method="ADX and EMA50 slope in ATRs (trend), ATR% percentile (volatility) on 1h candles; market from "
        + ", ".join(settings.REGIME_MAJORS),
        max_age=fresh_limit(PRIMARY),
        now=now,
    )
    rows = []
    regimes = {}
    for symbol in symbols_with_candles(PRIMARY):
        series = ohlcv(symbol, PRIMARY)
        if series is None or len(series) < MIN_BARS:
            continue
        regime = regime_classify(series)
        last_at = series.last_at
        stale = last_at is None or now - last_at > fresh_limit(PRIMARY)
        if not stale:
            regimes[symbol] = regime
            prov.add(
                source=series.source or "exchanges",
                venue=series.exchange,
                replay=series.replay,
                as_of=last_at,
                items=len(series),
            )
        rows.append(
            {
                "symbol": symbol,
                "venue": series.exchange,
                "timeframe": PRIMARY,
                "stale": stale,
                "families": symbol_families(regime),
                **regime_payload(regime),
            }
        )
    fresh_required(prov, "fresh 1h candles")
    market = market_regime(regimes)
    open_families: dict[str, list[str]] = {}
    for family, market_gate in market.families.items():
        open_families[family] = [
            r["symbol"]
            for r in rows
            if not r["stale"] and min(GATE_SIZE[market_gate], GATE_SIZE[r["families"][family]]) > 0
        ]
    rows.sort(key=lambda r: (r["stale"], r["symbol"]))
    return {
        "market": market_payload(market, now=now),
        "symbols": rows,
        "open_families": open_families,
        **prov.out(),
    }


# --- intel ---------------------------------------------------------------------------------------
def intel_max_age() -> timedelta:
    return timedelta(seconds=settings.INTEL_MAX_AGE_SECONDS)


def snapshot_payload(snap: IntelSnapshot) -> dict[str, Any]:
    data = snap.payload or {}
    return {
        "snapshot_id": snap.pk,
        "computed_at": iso(snap.computed_at),
        "regime": data.get("regime"),
        "top_signals": data.get("top_signals", []),
        "sentiment": data.get("sentiment"),
        "news": data.get("news", []),
    }


def snapshot_provenance(snap: IntelSnapshot, *, now: datetime, max_age: timedelta) -> dict[str, Any]:
    stored = dict((snap.payload or {}).get("provenance") or {})
    as_of = snap.as_of or snap.computed_at
    return {
        "as_of": iso(snap.as_of),
        "sources": stored.get("sources", []),
        "replay": bool(stored.get("replay", snap.replay)),
        "method": "the stored intel snapshot: " + str(stored.get("method", "")),
        "stale": now - as_of > max_age,
    }


def _has_intel() -> tuple[bool, str]:
    snap = IntelSnapshot.objects.order_by("-computed_at").first()
    if snap is None:
        return False, "no intel snapshot has been computed yet"
    if timezone.now() - snap.computed_at > intel_max_age():
        return False, "the newest intel snapshot is stale"
    return True, ""


@product(
    sku="intel_latest",
    path="/intel/latest",
    headline="Latest intelligence: market regime, top signals, notable news",
    price="0.08",
    family="intel",
    rank=44,
    marketplace_paid=True,
    session_callable=True,
    teaser="trend-momentum-desk",
    credit_routes=(
        CreditRoute(route="api/a2a/intel/latest", operation_id="intel_latest", summary="Latest intelligence"),
    ),
    output=IntelLatestOut,
    pure=True,
    available=_has_intel,
)
def intel_latest(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    snap = IntelSnapshot.objects.order_by("-computed_at").first()
    if snap is None:
        raise ProductFailed("no intel snapshot has been computed yet; nothing was charged")
    if now - snap.computed_at > intel_max_age():
        raise ProductFailed(
            f"the newest intel snapshot is older than {settings.INTEL_MAX_AGE_SECONDS} s; nothing was charged"
        )
    return {**snapshot_payload(snap), **snapshot_provenance(snap, now=now, max_age=intel_max_age())}


def _has_history() -> tuple[bool, str]:
    if IntelSnapshot.objects.exists():
        return True, ""
    return False, "no intel snapshot has been computed yet"


@product(
    sku="intel_history",
    path="/intel/history",
    headline="Intelligence history: the stored intel snapshots, newest first",
    price="0.1",
    family="intel",
    rank=45,
    session_callable=True,
    teaser="trend-momentum-desk",
    credit_routes=(
        CreditRoute(
            route="api/a2a/intel/history", operation_id="intel_history", summary="Intelligence history"
        ),
    ),
    params=IntelHistoryParams,
    output=IntelHistoryOut,
    available=_has_history,
)
def intel_history(call: ProductCall) -> dict[str, Any]:
    params = cast(IntelHistoryParams, call.params)
    now = timezone.now()
    snaps = list(IntelSnapshot.objects.order_by("-computed_at")[: params.limit])
    if not snaps:
        raise ProductFailed("no intel snapshot has been computed yet; nothing was charged")
    newest = snapshot_provenance(snaps[0], now=now, max_age=intel_max_age())
    replay = any(s.replay for s in snaps)
    return {
        "count": len(snaps),
        "snapshots": [snapshot_payload(s) for s in snaps],
        **newest,
        "replay": replay,
        "method": f"the {len(snaps)} newest stored intel snapshots (computed every {int(settings.INTEL_COMPUTE_SECONDS)} s)",
    }

