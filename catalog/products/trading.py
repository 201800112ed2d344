"""The trading desks computed from the exchange feed's candles and tickers: the grid range desk
(ranging symbols and their fee-paying grids) and the broker scalp desk (1m setups on the most
liquid pairs). The maths is catalog/analytics/desks.py; federation signal resale is a spec only
(503 uncharged until built)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics import desks, grid
from catalog.analytics.indicators import indicator_columns, snapshot
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import BAND_LOOKBACK_BARS, BAND_MIN_CROSSINGS, Regime, regime_classify
from catalog.analytics.series import Series, ohlcv, symbols_with_candles, timeframe_delta
from catalog.models import Candle, ExchangeMarket
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# ccxt unified spot symbols: "BTC/USDT" (a perpetual's ":USDT" settle suffix allowed).
SYMBOL_PATTERN = r"^[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,12}(:[A-Za-z0-9]{1,12})?$"


def _symbol_upper(value: str | None) -> str | None:
    return value.upper() if isinstance(value, str) else value


# --- grid range desk ----------------------------------------------------------------------------


class GridRangeDeskParams(QueryModel):
    symbol: Annotated[
        str | None,
        Field(max_length=40, pattern=SYMBOL_PATTERN, description="only this symbol (e.g. BTC/USDT)"),
    ] = None
    max_symbols: int = Field(10, ge=1, le=50, description="at most this many grids, 1..50")

    _upper = field_validator("symbol")(_symbol_upper)


class GridLevelOut(BaseModel):
    price: float
    crossings: int = Field(description="times the 1h closes crossed this level over the band's bars")


class GridRegimeOut(BaseModel):
    label: str = Field(description="the 1h regime (range)")
    since: str | None = Field(description="ISO 8601 UTC: the first bar of the current range")
    bars: int = Field(description="1h bars the range has lasted")
    adx: float | None
    vol_percentile: float | None = Field(description="where the current ATR% ranks in the window, 0-100")


class GridInvalidationOut(BaseModel):
    below: float = Field(description="a 1h close below this invalidates the grid")
    above: float = Field(description="a 1h close above this invalidates the grid")
    rule: str


class GridOut(BaseModel):
    symbol: str
    exchange: str = Field(description="the venue whose candles and taker fee the grid uses")
    last_price: float
    regime: GridRegimeOut
    band_low: float = Field(description="lowest low of the observed range's bars (band_bars of them)")
    band_high: float = Field(description="highest high of the observed range's bars")
    band_since: str = Field(description="ISO 8601 UTC: the first bar of the observed range")
    band_bars: int = Field(description="1h bars the band was observed over")
    middle_crossings: int = Field(description="times the 1h closes crossed the band's middle in them")
    band_rule: str = Field(description="how the band was chosen, in words and numbers")
    bb_lower: float | None = Field(description="1h Bollinger lower band (20, 2), for context: not a bound")
    bb_upper: float | None = Field(description="1h Bollinger upper band (20, 2), for context: not a bound")
    atr: float = Field(description="1h ATR (14)")
    atr_pct: float
    edge_inset: float = Field(description="how far the outer levels sit inside the band")
    lower: float = Field(description="the lowest grid level")
    upper: float = Field(description="the highest grid level")
    level_count: int
    spacing: float = Field(description="price step between two levels")
    spacing_pct: float = Field(description="the step in % of the grid's middle")
    spacing_atr: float = Field(description="the step in ATRs")
    taker_fee_pct: float = Field(description="the venue's taker fee, %")
    fee_source: Literal["ccxt", "assumed"] = Field(description="ccxt's static schedule, or assumed")
    round_trip_fee_pct: float = Field(description="two taker fees, % (one step's buy and sell)")
    min_spacing: float = Field(description="the fee floor of the step: fee_multiple round trips")
    net_step_pct: float = Field(description="one step's gain at the middle, % after the round-trip fees")
    levels: list[GridLevelOut]
    expected_fills: int = Field(description="crossings of all levels over the band's bars")
    fills_per_day: float
    bars_counted: int
    invalidation: GridInvalidationOut


class GridSkippedOut(BaseModel):
    symbol: str
    exchange: str
    regime: str
    reason: str


class GridRangeDeskOut(Provenanced):
    timeframe: str = Field(description="the candles the regime and the grids are computed on")
    fee_multiple: float = Field(description="a step is at least this many round-trip taker fees")
    symbols_checked: int
    grids: list[GridOut] = Field(description="ranging symbols, most expected fills per day first")
    skipped: list[GridSkippedOut] = Field(description="symbols checked without a grid, and why")


def _has_fresh_1h() -> tuple[bool, str]:
    # The newest bar's close time (open + 1h) within the freshness limit.
    since = timezone.now() - desks.CANDLES_1H_MAX_AGE - timeframe_delta("1h")
    if Candle.objects.filter(timeframe="1h", open_time__gte=since).exists():
        return True, ""
    return False, "no fresh 1h candles have been ingested"


def _symbol_has_candles(call: ProductCall, timeframe: str = "1h") -> int | None:
    """price_for: a symbol without candles, while others have them, is a 404 before any payment
    (the list price otherwise)."""
    symbol = getattr(call.params, "symbol", None)
    candles = Candle.objects.filter(timeframe=timeframe)
    if symbol and not candles.filter(symbol=symbol).exists() and candles.exists():
        raise NotFound(f"no {timeframe} candles for symbol {symbol}")
    return None


def _regime_out(regime: Regime) -> dict[str, Any]:
    return {
        "label": regime.label,
        "since": iso(regime.since),
        "bars": regime.bars,
        "adx": regime.adx,
        "vol_percentile": regime.vol_percentile,
    }


def _grid(series: Series, regime: Regime, plan: grid.GridPlan) -> dict[str, Any]:
    middle = (plan.lower + plan.upper) / 2
    round_trip = 2 * plan.taker_fee * 100
    spacing_pct = plan.spacing / middle * 100
    total = sum(plan.crossings)
    edge = f"{grid.GRID_INVALIDATION_ATR:g} ATR"
    return {
        "symbol": series.symbol,
        "exchange": series.exchange,
        "last_price": series.last,
        "regime": _regime_out(regime),
        "band_low": plan.band_low,
        "band_high": plan.band_high,
        "band_since": iso(plan.band_since),
        "band_bars": plan.band_bars,
        "middle_crossings": plan.middle_crossings,
        "band_rule": plan.band_rule,
        "bb_lower": plan.bb_lower,
        "bb_upper": plan.bb_upper,
        "atr": plan.atr,
        "atr_pct": plan.atr / series.last * 100,
        "edge_inset": plan.edge_inset,
        "lower": plan.lower,
        "upper": plan.upper,
        "level_count": len(plan.levels),
        "spacing": plan.spacing,
        "spacing_pct": spacing_pct,
        "spacing_atr": plan.spacing / plan.atr,
        "taker_fee_pct": plan.taker_fee * 100,
        "fee_source": plan.fee_source,
        "round_trip_fee_pct": round_trip,
        "min_spacing": plan.min_spacing,
        "net_step_pct": spacing_pct - round_trip,
        "levels": [{"price": p, "crossings": n} for p, n in zip(plan.levels, plan.crossings, strict=True)],
        "expected_fills": total,
        "fills_per_day": total / plan.days_counted if plan.days_counted > 0 else 0.0,
        "bars_counted": plan.bars_counted,
        "invalidation": {
            "below": plan.invalid_below,
            "above": plan.invalid_above,
            "rule": f"a 1h close more than {edge} below the band's low or above its high",
        },
    }


def grid_range_desk(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, GridRangeDeskParams) else GridRangeDeskParams()
    now = timezone.now()
    prov = Provenance(
        method=(
            "1h regime (ADX, EMA50 slope in ATRs, ATR% percentile); band = the observed range: lowest "
            "low..highest high of the longest recent window (<= "
            f"{BAND_LOOKBACK_BARS} bars) whose closes crossed its middle >= "
            f"{BAND_MIN_CROSSINGS} times without a trend (else the range run's bars); "
            f"levels inside it less min({grid.GRID_EDGE_ATR:g} ATR, {grid.GRID_EDGE_SHARE:g} of the band) "
            f"per edge, step ~{grid.GRID_SPACING_ATR:g} ATR but >= {settings.GRID_FEE_MULTIPLE:g} round-trip "
            f"taker fees (ccxt), >= {grid.GRID_MIN_STEPS} steps; fills = close-to-close crossings of each "
            "level over the band's bars"
        ),
        max_age=desks.CANDLES_1H_MAX_AGE,
        now=now,
    )
    symbols = [params.symbol] if params.symbol else symbols_with_candles("1h")
    grids: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for symbol in symbols:
        series = ohlcv(symbol, "1h")
        if series is None:
            continue
        if not desks.series_fresh(series, max_age=desks.CANDLES_1H_MAX_AGE, now=now):
            skipped.append(
                {
                    "symbol": symbol,
                    "exchange": series.exchange,
                    "regime": "unknown",
                    "reason": "1h candles stale",
                }
            )
            continue
        prov.add(
            source=series.source,
            venue=series.exchange,
            replay=series.replay,
            as_of=series.last_at,
            items=len(series),
        )
        cols = indicator_columns(series)
        regime = regime_classify(series, cols)
        if regime.label != "range":
            reason = (
                "too few 1h candles to classify"
                if regime.label == "unknown"
                else f"the 1h regime is {regime.label.replace('_', '-')} since {regime.bars} bars"
            )
            skipped.append(
                {"symbol": symbol, "exchange": series.exchange, "regime": regime.label, "reason": reason}
            )
            continue
        plan = grid.grid_plan(series, snapshot(series, cols), regime, exchange=series.exchange)
        if isinstance(plan, grid.NoGrid):
            skipped.append(
                {"symbol": symbol, "exchange": series.exchange, "regime": regime.label, "reason": plan.reason}
            )
            continue
        grids.append(_grid(series, regime, plan))
    fresh_required(prov, "fresh 1h candles")
    grids.sort(key=lambda g: (-g["fills_per_day"], g["symbol"]))
    return {
        "timeframe": "1h",
        "fee_multiple": float(settings.GRID_FEE_MULTIPLE),
        "symbols_checked": len(grids) + len(skipped),
        "grids": grids[: params.max_symbols],
        "skipped": skipped,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="grid_range_desk",
        path="/trading/grid-range-desk",
        headline="Grid range desk: ranges, grid levels and invalidation for liquid pairs",
        price="0.15",
        family="trading",
        tier="D",
        hero=True,
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=5,
        session_callable=True,
        teaser="grid-range-desk",
        teasers=(
            TeaserSpec(
                name="grid-range-desk",
                title="Grid range desk",
                summary="Ranges, grid levels and invalidation for liquid pairs.",
                highlights=("range", "grid levels"),
            ),
        ),
        run=grid_range_desk,
        params=GridRangeDeskParams,
        output=GridRangeDeskOut,
        price_for=_symbol_has_candles,
        available=_has_fresh_1h,
    )
)


# --- broker scalp desk --------------------------------------------------------------------------


class BrokerScalpDeskParams(QueryModel):
    max_symbols: int = Field(8, ge=1, le=30, description="the most liquid pairs considered, 1..30")


class ScalpSetupOut(BaseModel):
    symbol: str
    exchange: str = Field(description="the venue of the book and the 1m candles")
    kind: Literal["mean_reversion", "pullback"]
    side: Literal["long", "short"]
    entry: float = Field(description="the newest 1m close")
    stop: float
    target: float
    risk_reward: float
    horizon_minutes: int
    target_bps: float = Field(description="the target's distance from the entry, bps")
    spread_bps: float = Field(description="the book top's spread, bps")
    spread_share_pct: float = Field(description="the spread as a % of the target distance")
    fees_round_trip_bps: float = Field(description="two taker fees (ccxt's schedule), bps")
    net_target_bps: float = Field(description="the target distance less the spread and the fees, bps")
    rsi_1m: float
    context_regime: str = Field(description="the regime the setup reads (1h; 1m when 1h is unknown)")
    context_timeframe: str
    volume_24h_usd: float
    why: str


class ScalpNoSetupOut(BaseModel):
    symbol: str
    exchange: str
    context_regime: str
    reason: str


class BrokerScalpDeskOut(Provenanced):
    timeframe: str = Field(description="the candles the setups are read on")
    pairs_considered: int
    min_volume_usd: float = Field(description="a pair's deepest venue trades at least this much a day")
    max_spread_share_pct: float = Field(
        description="a setup whose spread exceeds this % of its target is skipped"
    )
    setups: list[ScalpSetupOut]
    no_setup: list[ScalpNoSetupOut]


def _has_fresh_scalp_data() -> tuple[bool, str]:
    now = timezone.now()
    if not ExchangeMarket.objects.filter(updated_at__gte=now - desks.TICKER_MAX_AGE).exists():
        return False, "no fresh tickers have been ingested"
    since = now - desks.CANDLES_1M_MAX_AGE - timeframe_delta("1m")
    if not Candle.objects.filter(timeframe="1m", open_time__gte=since).exists():
        return False, "no fresh 1m candles have been ingested"
    return True, ""


def scalp_context(
    symbol: str, exchange: str, s1m: Series, now: datetime
) -> tuple[Regime, str, Series | None]:
    """The 1h regime (the venue's candles, else any venue's), or the 1m regime when 1h is
    unknown or stale; with the 1h series used, if any."""
    s1h = ohlcv(symbol, "1h", exchange=exchange) or ohlcv(symbol, "1h")
    if desks.series_fresh(s1h, max_age=desks.CANDLES_1H_MAX_AGE, now=now) and s1h is not None:
        regime = regime_classify(s1h)
        if regime.label != "unknown":
            return regime, "1h", s1h
    return regime_classify(s1m), "1m", None


def setup_payload(
    *,
    symbol: str,
    exchange: str,
    found: desks.ScalpSetup,
    regime: Regime,
    context_timeframe: str,
    volume_24h_usd: float,
) -> dict[str, Any]:
    """One setup as ScalpSetupOut (the tokenized scalp desk adds its own fields to them)."""
    return {
        "symbol": symbol,
        "exchange": exchange,
        "kind": found.kind,
        "side": found.side,
        "entry": found.entry,
        "stop": found.stop,
        "target": found.target,
        "risk_reward": found.risk_reward,
        "horizon_minutes": found.horizon_minutes,
        "target_bps": found.target_bps,
        "spread_bps": found.spread_bps,
        "spread_share_pct": found.spread_share * 100,
        "fees_round_trip_bps": found.fees_bps,
        "net_target_bps": found.net_target_bps,
        "rsi_1m": found.rsi,
        "context_regime": regime.label,
        "context_timeframe": context_timeframe,
        "volume_24h_usd": volume_24h_usd,
        "why": found.why,
    }


@dataclass(frozen=True)
class ScalpScan:
    """One market scanned for a scalp setup: `setup` (ScalpSetupOut's fields), or None with the
    `reason` there is none. `scanned` is False when the market has no fresh 1m candles (the
    reason says which); `exchange` is the venue of the candles read (the market's own when none
    were), `context_regime` the regime they were read in."""

    scanned: bool
    exchange: str
    reason: str = ""
    context_regime: str = "unknown"
    setup: dict[str, Any] | None = None


def scalp_scan(market: ExchangeMarket, *, now: datetime, prov: Provenance) -> ScalpScan:
    """Scan one market's 1m candles (its venue's, else any venue's) for a scalp setup, as the
    broker scalp desk and the tokenized scalp desk both do; the candles read are added to
    `prov` (the market's own book top is the caller's to add)."""
    symbol = market.symbol
    s1m = ohlcv(symbol, "1m", exchange=market.exchange, limit=240) or ohlcv(symbol, "1m", limit=240)
    if s1m is None or not desks.series_fresh(s1m, max_age=desks.CANDLES_1M_MAX_AGE, now=now):
        why = "no 1m candles" if s1m is None else "1m candles stale"
        return ScalpScan(scanned=False, exchange=market.exchange, reason=why)
    prov.add(source=s1m.source, venue=s1m.exchange, replay=s1m.replay, as_of=s1m.last_at, items=len(s1m))
    regime, context_tf, s1h = scalp_context(symbol, s1m.exchange, s1m, now)
    if s1h is not None:
        prov.add(source=s1h.source, venue=s1h.exchange, replay=s1h.replay, as_of=s1h.last_at, items=len(s1h))
    found = desks.scalp_setup(
        s1m,
        snapshot(s1m),
        context=regime.label,
        context_timeframe=context_tf,
        spread=desks.spread_bps(market),
        exchange=s1m.exchange,
    )
    if isinstance(found, desks.NoSetup):
        return ScalpScan(
            scanned=True, reason=found.reason, exchange=s1m.exchange, context_regime=regime.label
        )
    setup = setup_payload(
        symbol=symbol,
        exchange=s1m.exchange,
        found=found,
        regime=regime,
        context_timeframe=context_tf,
        volume_24h_usd=float(market.volume_24h_usd or 0),
    )
    return ScalpScan(scanned=True, exchange=s1m.exchange, context_regime=regime.label, setup=setup)


def broker_scalp_desk(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, BrokerScalpDeskParams) else BrokerScalpDeskParams()
    now = timezone.now()
    prov = Provenance(
        method=(
            "most liquid pairs by 24h USD volume (tightest venue); on 1m candles, RSI extreme + "
            "Bollinger touch in a range or an EMA20 pullback in a trend (1h regime context), stop "
            f"{desks.SCALP_STOP_ATR:g} ATR, skipped when the spread exceeds "
            f"{settings.SCALP_MAX_SPREAD_SHARE * 100:g}% of the target distance"
        ),
        max_age=desks.CANDLES_1M_MAX_AGE,
        now=now,
    )
    pairs = desks.liquid_pairs(since=now - desks.TICKER_MAX_AGE, limit=params.max_symbols)
    if not pairs:
        raise ProductFailed("no fresh ticker of a liquid pair; nothing was charged")
    setups: list[dict[str, Any]] = []
    none: list[dict[str, Any]] = []
    fresh_1m = 0
    for market in pairs:
        prov.add(
            source=market.source or "manual",
            venue=market.exchange,
            replay=market.replay,
            as_of=market.updated_at,
        )
        scan = scalp_scan(market, now=now, prov=prov)
        fresh_1m += int(scan.scanned)
        if scan.setup is not None:
            setups.append(scan.setup)
            continue
        none.append(
            {
                "symbol": market.symbol,
                "exchange": scan.exchange,
                "context_regime": scan.context_regime,
                "reason": scan.reason,
            }
        )
    if not fresh_1m:
        raise ProductFailed("no fresh 1m candles of the liquid pairs; nothing was charged")
    fresh_required(prov, "fresh 1m candles")
    return {
        "timeframe": "1m",
        "pairs_considered": len(pairs),
        "min_volume_usd": float(settings.SCALP_MIN_VOLUME_USD),
        "max_spread_share_pct": float(settings.SCALP_MAX_SPREAD_SHARE) * 100,
        "setups": setups,
        "no_setup": none,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="broker_scalp_desk",
        path="/trading/broker-scalp-desk",
        headline="Broker scalp desk: short-horizon setups on broker venues",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=27,
        session_callable=True,
        teaser="broker-scalp-desk",
        teasers=(
            TeaserSpec(
                name="broker-scalp-desk",
                title="Broker scalp desk",
                summary="Short-horizon setups on broker venues.",
                highlights=("entry", "stop", "target"),
            ),
        ),
        run=broker_scalp_desk,
        params=BrokerScalpDeskParams,
        output=BrokerScalpDeskOut,
        available=_has_fresh_scalp_data,
    )
)
