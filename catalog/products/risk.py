"""Risk gates and alerts, computed from the feeds and the calendar (issues 12 and 13): the
decision pack (its checks are catalog/analytics/desks.py) and the exit alerts on the desks'
open signals (catalog/editorial/track_record.py writes them); a spec without a run answers 503
uncharged until it is built."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics import desks
from catalog.analytics.indicators import snapshot
from catalog.analytics.macro import (
    CALENDAR_MAX_AGE,
    MacroGate,
    calendar_sources,
    hours_to,
    macro_gate,
    upcoming,
)
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import regime_classify
from catalog.analytics.series import candle_as_of, ohlcv, timeframe_delta
from catalog.editorial.track_record import signal_bars
from catalog.models import CalendarEvent, Candle, DeskSignal, ExchangeMarket
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# --- risk decision pack -------------------------------------------------------------------------

# ccxt unified spot symbols: "BTC/USDT" (a perpetual's ":USDT" settle suffix allowed).
SYMBOL_PATTERN = r"^[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,12}(:[A-Za-z0-9]{1,12})?$"


class DecisionPackParams(QueryModel):
    symbol: Annotated[
        str, Field(max_length=40, pattern=SYMBOL_PATTERN, description="the symbol to trade (e.g. BTC/USDT)")
    ] = "BTC/USDT"
    side: Literal["long", "short"] = Field("long", description="long or short")
    notional_usdc: float = Field(10000.0, gt=0, le=1e10, description="the order's size in USDC")

    @field_validator("symbol")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class DecisionCheckOut(BaseModel):
    name: Literal["regime", "volatility", "liquidity", "spread", "funding", "macro"]
    status: Literal["pass", "warn", "fail"]
    value: float | str | None = Field(
        description=(
            "regime: the label; volatility: ATR% percentile; liquidity: notional as % of 24h volume; "
            "spread: bps; funding: annualized %, positive when longs pay; macro: high-impact events"
        )
    )
    threshold: str
    detail: str = Field(description="one sentence")


class DecisionRegimeOut(BaseModel):
    exchange: str
    label: str
    since: str | None
    bars: int
    adx: float | None
    trend_atrs: float | None
    vol_percentile: float | None
    atr_pct: float | None


class DecisionMarketOut(BaseModel):
    exchange: str = Field(description="the deepest venue with a fresh ticker")
    last_price: float | None
    bid: float
    ask: float
    spread_bps: float
    volume_24h_usd: float
    book_top_usd: float = Field(description="the size at the touch the side would take (ask for a long)")
    updated_at: str | None


class DecisionFundingOut(BaseModel):
    exchange: str
    symbol: str
    rate: float = Field(description="per funding period, a fraction")
    period_hours: float
    apr_pct: float = Field(description="annualized, %; positive: longs pay shorts")
    funding_at: str | None


class DecisionEventOut(BaseModel):
    title: str
    starts_at: str | None
    impact: str
    country: str
    category: str
    source: str


class RiskDecisionPackOut(Provenanced):
    symbol: str
    side: Literal["long", "short"]
    notional_usdc: float
    verdict: Literal["go", "caution", "no_go"] = Field(description="no_go on any fail, caution on any warn")
    summary: str
    checks: list[DecisionCheckOut]
    passes: int
    warnings: int
    failures: int
    regime: DecisionRegimeOut | None
    market: DecisionMarketOut | None
    funding: list[DecisionFundingOut]
    macro_window_hours: float
    macro_events: list[DecisionEventOut] = Field(description="high-impact events in the window")


def _has_fresh_1h() -> tuple[bool, str]:
    # The newest bar's close time (open + 1h) within the freshness limit.
    since = timezone.now() - desks.CANDLES_1H_MAX_AGE - timeframe_delta("1h")
    if Candle.objects.filter(timeframe="1h", open_time__gte=since).exists():
        return True, ""
    return False, "no fresh 1h candles have been ingested"


def _symbol_known(call: ProductCall) -> int | None:
    """price_for: a symbol the feeds do not carry (neither candles nor a ticker, while others
    have them) is a 404 before any payment. Before anything is ingested no symbol is known to
    be wrong: the call is offered (402) and, paid, answers 503 uncharged."""
    symbol = getattr(call.params, "symbol", "")
    if (
        not Candle.objects.filter(symbol=symbol, timeframe="1h").exists()
        and not ExchangeMarket.objects.filter(symbol=symbol).exists()
        and (Candle.objects.exists() or ExchangeMarket.objects.exists())
    ):
        raise NotFound(f"no market data for symbol {symbol}")
    return None


def risk_decision_pack(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, DecisionPackParams) else DecisionPackParams()
    now = timezone.now()
    symbol, side, notional = params.symbol, params.side, params.notional_usdc
    gate = macro_gate(now=now)
    hours = gate.hours
    prov = Provenance(
        method=(
            "pass/warn/fail checks: 1h regime vs side, ATR% percentile, notional vs 24h volume and "
            "book top, spread, perp funding annualized vs side, the macro gate (high-impact "
            f"calendar events within ±{hours:g} h); no_go on a fail, caution on a warn"
        ),
        max_age=desks.CANDLES_1H_MAX_AGE,
        now=now,
    )
    series = ohlcv(symbol, "1h")
    if not desks.series_fresh(series, max_age=desks.CANDLES_1H_MAX_AGE, now=now) or series is None:
        raise ProductFailed(f"no fresh 1h candles of {symbol}; nothing was charged")
    prov.add(
        source=series.source,
        venue=series.exchange,
        replay=series.replay,
        as_of=series.last_at,
        items=len(series),
    )
    regime = regime_classify(series)
    markets = desks.markets_fresh(since=now - desks.TICKER_MAX_AGE, symbol=symbol)
    market = markets[0] if markets else None
    if market is not None:
        prov.add(
            source=market.source or "manual",
            venue=market.exchange,
            replay=market.replay,
            as_of=market.updated_at,
        )
    funding = desks.funding_latest(symbol, now=now)
    for f in funding:
        prov.add(source=f.source, venue=f.exchange, replay=f.replay, as_of=f.observed_at)
    if gate.calendar_rows:
        calendar_sources(prov)
    inputs = desks.DecisionInputs(
        regime=regime,
        market=market,
        funding=funding,
        macro=gate,
    )
    checks = desks.decision_checks(inputs, side=side, notional=notional, now=now)
    outcome = desks.verdict(checks)
    failing = [c.name for c in checks if c.status == "fail"]
    warning = [c.name for c in checks if c.status == "warn"]
    summary = {
        "no_go": f"No go for a {side} of {notional:,.0f} USDC in {symbol}: {', '.join(failing)} failed.",
        "caution": f"Caution for a {side} of {notional:,.0f} USDC in {symbol}: check {', '.join(warning)}.",
        "go": f"Go for a {side} of {notional:,.0f} USDC in {symbol}: every check passed.",
    }[outcome]
    top = None
    if market is not None:
        price = (market.ask if side == "long" else market.bid) or 0
        size = (market.ask_size if side == "long" else market.bid_size) or 0
        top = {
            "exchange": market.exchange,
            "last_price": float(market.last_price) if market.last_price is not None else None,
            "bid": float(market.bid or 0),
            "ask": float(market.ask or 0),
            "spread_bps": desks.spread_bps(market),
            "volume_24h_usd": float(market.volume_24h_usd or 0),
            "book_top_usd": float(price) * float(size),
            "updated_at": iso(market.updated_at),
        }
    return {
        "symbol": symbol,
        "side": side,
        "notional_usdc": notional,
        "verdict": outcome,
        "summary": summary,
        "checks": [
            {
                "name": c.name,
                "status": c.status,
                "value": c.value,
                "threshold": c.threshold,
                "detail": c.detail,
            }
            for c in checks
        ],
        "passes": sum(c.status == "pass" for c in checks),
        "warnings": len(warning),
        "failures": len(failing),
        "regime": {
            "exchange": series.exchange,
            "label": regime.label,
            "since": iso(regime.since),
            "bars": regime.bars,
            "adx": regime.adx,
            "trend_atrs": regime.trend_atrs,
            "vol_percentile": regime.vol_percentile,
            "atr_pct": regime.atr_pct,
        },
        "market": top,
        "funding": [
            {
                "exchange": f.exchange,
                "symbol": f.symbol,
                "rate": f.rate,
                "period_hours": f.period_hours,
                "apr_pct": f.apr_pct,
                "funding_at": iso(f.funding_at),
            }
            for f in funding
        ],
        "macro_window_hours": hours,
        "macro_events": [
            {
                "title": e.title,
                "starts_at": iso(e.starts_at),
                "impact": e.impact,
                "country": e.country,
                "category": e.category,
                "source": e.source,
            }
            for e in gate.blocking
        ],
        **prov.out(),
    }


# --- calendar risk and the macro gate (catalog/analytics/macro.py) ---------------------------


class CalendarRiskParams(QueryModel):
    days: float = Field(7.0, gt=0, le=60, description="how many days ahead, up to 60")
    min_impact: Literal["low", "medium", "high"] = Field("low", description="the lowest impact listed")
    country: Annotated[
        str,
        Field(
            max_length=8,
            pattern=r"^[A-Za-z]{0,8}$",
            description="ISO country or region code (US, EU); empty for all",
        ),
    ] = ""


class CalendarEventOut(BaseModel):
    id: int
    title: str
    starts_at: str | None = Field(description="ISO 8601 UTC; an all-day event: that day's midnight UTC")
    all_day: bool
    hours_to_event: float = Field(description="hours from now to the start (negative: started)")
    impact: Literal["low", "medium", "high"]
    impact_basis: str = Field(
        description="priority (the feed's PRIORITY), rule (title/category rules), default or manual"
    )
    country: str
    category: str
    calendar: str = Field(description="the ICS calendar it came from; empty for staff events")
    source: str = Field(description="the calendar feed, or manual")
    url: str
    in_gate_window: bool = Field(description="a high-impact event within ±MACRO_GATE_HOURS of now")


class GateBriefOut(BaseModel):
    state: Literal["open", "closed"]
    window_hours: float
    reason: str


class CalendarRiskOut(Provenanced):
    days: float
    min_impact: str
    country: str
    count: int
    high_impact: int = Field(description="listed events of high impact")
    events: list[CalendarEventOut] = Field(description="by start time")
    gate: GateBriefOut


class MacroGateOut(Provenanced):
    state: Literal["open", "closed"]
    allows_new_risk: bool
    reason: str = Field(description="one sentence")
    window_hours: float = Field(
        description="closed within this many hours before or after a high-impact event"
    )
    blocking_events: list[CalendarEventOut] = Field(description="the high-impact events that close the gate")
    reopens_at: str | None = Field(description="closed: when the gate opens again")
    next_high_impact: CalendarEventOut | None = Field(description="the nearest high-impact event ahead")
    next_close_at: str | None = Field(description="when the gate next closes (the next window's start)")
    calendar_rows: int
    events_ahead: int = Field(description="calendar events of any impact still ahead")


def _has_calendar() -> tuple[bool, str]:
    if CalendarEvent.objects.exists():
        return True, ""
    return False, "no calendar has been ingested"


def event_payload(event: CalendarEvent, *, now: datetime, gate_hours: float) -> dict[str, Any]:
    to = hours_to(event, now)
    return {
        "id": event.id,
        "title": event.title,
        "starts_at": iso(event.starts_at),
        "all_day": event.all_day,
        "hours_to_event": round(to, 3),
        "impact": event.impact,
        "impact_basis": event.impact_basis,
        "country": event.country,
        "category": event.category,
        "calendar": event.calendar,
        "source": event.source,
        "url": event.url,
        "in_gate_window": event.impact == CalendarEvent.Impact.HIGH and abs(to) <= gate_hours,
    }


def _gate_or_fail(now: datetime) -> tuple[MacroGate, Provenance]:
    gate = macro_gate(now=now)
    if gate.state == "unknown":
        raise ProductFailed("no calendar has been ingested; nothing was charged")
    prov = Provenance(
        method=(
            "calendar events (ICS feeds and staff events) by start time; the gate is closed within "
            f"±{gate.hours:g} h of a high-impact event"
        ),
        max_age=CALENDAR_MAX_AGE,
        now=now,
    )
    calendar_sources(prov)
    fresh_required(prov, "calendar rows")
    return gate, prov


def calendar_risk(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, CalendarRiskParams) else CalendarRiskParams()
    now = timezone.now()
    gate, prov = _gate_or_fail(now)
    events = list(upcoming(now=now, days=params.days, min_impact=params.min_impact, country=params.country))
    if gate.state == "closed":
        state: Literal["open", "closed"] = "closed"
    else:
        state = "open"
    return {
        "days": params.days,
        "min_impact": params.min_impact,
        "country": params.country.upper(),
        "count": len(events),
        "high_impact": sum(e.impact == CalendarEvent.Impact.HIGH for e in events),
        "events": [event_payload(e, now=now, gate_hours=gate.hours) for e in events],
        "gate": {"state": state, "window_hours": gate.hours, "reason": gate.reason},
        **prov.out(),
    }


def macro_gate_product(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    gate, prov = _gate_or_fail(now)
    closed = gate.state == "closed"
    return {
        "state": "closed" if closed else "open",
        "allows_new_risk": not closed,
        "reason": gate.reason,
        "window_hours": gate.hours,
        "blocking_events": [event_payload(e, now=now, gate_hours=gate.hours) for e in gate.blocking],
        "reopens_at": iso(gate.reopens_at),
        "next_high_impact": (
            event_payload(gate.next_high, now=now, gate_hours=gate.hours) if gate.next_high else None
        ),
        "next_close_at": iso(gate.next_close_at),
        "calendar_rows": gate.calendar_rows,
        "events_ahead": gate.ahead,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="risk_decision_pack",
        path="/risk/decision-pack",
        headline="Risk decision pack: pre-trade checklist, regime and calendar gates in one call",
        price="0.12",
        family="risk",
        tier="B",
        hero=True,
        rank=9,
        client_bundle=True,
        session_callable=True,
        teaser="pre-trade-checklist",
        teasers=(
            TeaserSpec(
                name="pre-trade-checklist",
                title="Pre-trade checklist",
                summary="The checks a desk runs before opening risk: regime, calendar, liquidity.",
                highlights=("regime gate", "calendar gate", "go / no-go"),
            ),
        ),
        run=risk_decision_pack,
        params=DecisionPackParams,
        output=RiskDecisionPackOut,
        price_for=_symbol_known,
        available=_has_fresh_1h,
    )
)

# --- risk exit alerts ---------------------------------------------------------------------------

# A price older than this (a 1m close, a ticker) may already be past a stop the service did not
# see: three missed passes of the exchanges feed and the alerts are not sold (503, uncharged).
EXIT_PRICE_MAX_AGE = timedelta(minutes=15)
# The chandelier exit: the highest high (a short: lowest low) since entry, this many 1h ATRs
# back. Three ATRs is the usual chandelier distance: ordinary hourly noise does not reach it.
EXIT_TRAIL_ATR = 3.0

ExitAlertKind = Literal["stop_touched", "target_touched", "trailing_stop_hit", "regime_flip"]


class ExitAlertsParams(QueryModel):
    symbol: Annotated[
        str | None, Field(max_length=40, pattern=SYMBOL_PATTERN, description="only this symbol (BTC/USDT)")
    ] = None
    desk: Annotated[
        str | None, Field(max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="only this desk's signals")
    ] = None

    @field_validator("symbol")
    @classmethod
    def _upper(cls, value: str | None) -> str | None:
        return value.upper() if value else value


class ExitAlertOut(BaseModel):
    kind: ExitAlertKind
    level: float | None = Field(description="the price level involved (null for a regime flip)")
    reason: str = Field(description="one sentence")


class ExitPositionOut(BaseModel):
    signal_id: int
    desk: str
    symbol: str
    venue: str
    side: Literal["long", "short"]
    opened_at: str
    entry: float
    stop: float | None
    target: float | None
    price: float = Field(description="the newest ingested price: a 1m close or the ticker, the newer")
    price_source: Literal["candle_1m", "ticker", "candle_1h"]
    price_at: str | None = Field(description="ISO 8601 UTC: when that price was observed")
    price_stale: bool = Field(description="older than the freshness limit")
    unrealized_pnl_pct: float = Field(description="(price - entry) / entry x 100, negated for a short")
    atr: float | None = Field(description="the 1h ATR (14) of the venue's candles")
    distance_to_stop_pct: float | None = Field(
        description="how far the price may move against the position before the stop, % of the price "
        "(negative: beyond it)"
    )
    distance_to_stop_atr: float | None
    distance_to_target_pct: float | None = Field(
        description="how far the price must move with the position to the target, % of the price "
        "(negative: beyond it)"
    )
    distance_to_target_atr: float | None
    extreme_since_entry: float = Field(
        description="the highest high (a short: the lowest low) since entry, entry and price included"
    )
    trailing_stop: float | None = Field(
        description="the chandelier stop: extreme_since_entry -/+ EXIT_TRAIL_ATR ATRs, never looser than the stop"
    )
    distance_to_trailing_pct: float | None
    regime: str = Field(description="the symbol's 1h regime now")
    alerts: list[ExitAlertOut]
    action: Literal["exit", "take_profit", "hold"] = Field(
        description="exit on a stop, trailing stop or regime flip; take_profit on the target; else hold"
    )
    suggested_exit: float | None = Field(
        description="the level to exit at now: the trailing stop (else the stop)"
    )


class RiskExitAlertsOut(Provenanced):
    trail_atr_multiple: float
    count: int
    alerting: int = Field(description="positions with at least one alert")
    positions: list[ExitPositionOut] = Field(description="alerting positions first, then the oldest")


@dataclass(frozen=True)
class _Price:
    value: float
    at: datetime | None
    source: Literal["candle_1m", "ticker", "candle_1h"]
    replay: bool
    feed: str


def _price_now(venue: str, symbol: str) -> _Price | None:
    """The newest price of the venue's symbol: its newest 1m close or its ticker, whichever was
    observed later; the newest 1h close when neither exists."""
    where = {"exchange": venue} if venue else {}
    found: list[_Price] = []
    bar = (
        Candle.objects.filter(symbol=symbol, timeframe="1m", **where)
        .order_by("-open_time")
        .values_list("close", "open_time", "replay", "source", "observed_at")
        .first()
    )
    if bar is not None:
        found.append(_Price(float(bar[0]), candle_as_of(bar[1], "1m", bar[4]), "candle_1m", bool(bar[2]), bar[3]))
    tick = (
        ExchangeMarket.objects.filter(symbol=symbol, last_price__isnull=False, **where)
        .order_by("-updated_at")
        .first()
    )
    if tick is not None and tick.last_price is not None:
        found.append(_Price(float(tick.last_price), tick.updated_at, "ticker", tick.replay, tick.source))
    if found:
        return max(found, key=lambda p: p.at or datetime.min.replace(tzinfo=UTC))
    hour = (
        Candle.objects.filter(symbol=symbol, timeframe="1h", **where)
        .order_by("-open_time")
        .values_list("close", "open_time", "replay", "source", "observed_at")
        .first()
    )
    if hour is not None:
        return _Price(float(hour[0]), candle_as_of(hour[1], "1h", hour[4]), "candle_1h", bool(hour[2]), hour[3])
    return None


def _pct(x: float | None, n: int = 4) -> float | None:
    return None if x is None else round(x, n)


def exit_position(row: DeskSignal, *, now: datetime, prov: Provenance) -> dict[str, Any] | None:
    """One open signal's exit levels and alerts; None when no price of it was ever ingested."""
    price = _price_now(row.venue, row.symbol)
    if price is None:
        return None
    prov.add(source=price.feed or "exchanges", venue=row.venue or None, replay=price.replay, as_of=price.at)
    long = row.side == DeskSignal.Side.LONG
    sign = 1.0 if long else -1.0
    entry = float(row.entry_price)
    stop = float(row.stop_price) if row.stop_price is not None else None
    target = float(row.target_price) if row.target_price is not None else None
    p = price.value
    series = ohlcv(row.symbol, "1h", exchange=row.venue or None)
    atr = snapshot(series).atr if series is not None else None
    label = regime_classify(series).label if series is not None else "unknown"
    bars, _, _ = signal_bars(row)
    highs = [b.high for b in bars] + [entry, p]
    lows = [b.low for b in bars] + [entry, p]
    extreme = max(highs) if long else min(lows)
    trailing = stop
    if atr is not None and atr > 0:
        chandelier = extreme - sign * EXIT_TRAIL_ATR * atr
        # Never looser than the stop the desk published: the trail only tightens.
        trailing = chandelier if stop is None else (max(stop, chandelier) if long else min(stop, chandelier))

    def room(level: float | None) -> float | None:  # the move against the position to the level
        return None if level is None else sign * (p - level)

    def in_atr(x: float | None) -> float | None:
        return None if x is None or atr is None or not atr > 0 else round(x / atr, 4)

    to_stop = room(stop)
    to_target = None if target is None else sign * (target - p)
    to_trail = room(trailing)
    alerts: list[dict[str, Any]] = []
    side = row.side
    if stop is not None:
        touched = [b for b in bars if (b.low <= stop if long else b.high >= stop)]
        if touched or sign * (p - stop) <= 0:
            at = f"at {iso(touched[0].open_time)}" if touched else "by the price now"
            alerts.append(
                {
                    "kind": "stop_touched",
                    "level": stop,
                    "reason": f"The {side}'s stop {stop:g} was touched {at}.",
                }
            )
    if target is not None:
        reached = [b for b in bars if (b.high >= target if long else b.low <= target)]
        if reached or sign * (target - p) <= 0:
            at = f"at {iso(reached[0].open_time)}" if reached else "by the price now"
            alerts.append(
                {
                    "kind": "target_touched",
                    "level": target,
                    "reason": f"The {side}'s target {target:g} was reached {at}.",
                }
            )
    if trailing is not None and trailing != stop and to_trail is not None and to_trail <= 0:
        alerts.append(
            {
                "kind": "trailing_stop_hit",
                "level": round(trailing, 10),
                "reason": f"The price {p:g} is {'below' if long else 'above'} the trailing stop {trailing:.6g} "
                f"({EXIT_TRAIL_ATR:g} ATRs from the {'high' if long else 'low'} {extreme:g} since entry).",
            }
        )
    if (long and label == "down_trend") or (not long and label == "up_trend"):
        alerts.append(
            {
                "kind": "regime_flip",
                "level": None,
                "reason": f"The 1h regime of {row.symbol} is {label.replace('_', '-')} now: "
                f"the {side} fights the trend.",
            }
        )
    kinds = {a["kind"] for a in alerts}
    action = (
        "exit"
        if kinds & {"stop_touched", "trailing_stop_hit", "regime_flip"}
        else "take_profit"
        if "target_touched" in kinds
        else "hold"
    )
    return {
        "signal_id": row.pk,
        "desk": row.desk,
        "symbol": row.symbol,
        "venue": row.venue,
        "side": row.side,
        "opened_at": iso(row.opened_at),
        "entry": entry,
        "stop": stop,
        "target": target,
        "price": p,
        "price_source": price.source,
        "price_at": iso(price.at),
        "price_stale": price.at is None or now - price.at > EXIT_PRICE_MAX_AGE,
        "unrealized_pnl_pct": round(sign * (p - entry) / entry * 100, 4),
        "atr": _pct(atr, 10),
        "distance_to_stop_pct": None if to_stop is None else round(to_stop / p * 100, 4),
        "distance_to_stop_atr": in_atr(to_stop),
        "distance_to_target_pct": None if to_target is None else round(to_target / p * 100, 4),
        "distance_to_target_atr": in_atr(to_target),
        "extreme_since_entry": extreme,
        "trailing_stop": _pct(trailing, 10),
        "distance_to_trailing_pct": None if to_trail is None else round(to_trail / p * 100, 4),
        "regime": label,
        "alerts": alerts,
        "action": action,
        "suggested_exit": _pct(trailing, 10),
    }


def risk_exit_alerts(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, ExitAlertsParams) else ExitAlertsParams()
    now = timezone.now()
    prov = Provenance(
        method=(
            "the desks' open signals against the newest 1m close or ticker: pnl, distance to stop and target "
            f"in % and 1h ATRs, a chandelier trailing stop ({EXIT_TRAIL_ATR:g} ATRs from the extreme since "
            "entry, never looser than the stop), alerts on stop/target touched since entry, the trail hit "
            "and a 1h regime against the side"
        ),
        max_age=EXIT_PRICE_MAX_AGE,
        now=now,
    )
    rows = DeskSignal.objects.filter(closed_at__isnull=True)
    if params.symbol:
        rows = rows.filter(symbol=params.symbol)
    if params.desk:
        rows = rows.filter(desk=params.desk)
    positions = [
        p for row in rows.order_by("opened_at", "id") if (p := exit_position(row, now=now, prov=prov))
    ]
    if not positions:
        # Nothing open (or nothing priced): an empty answer is honest while the prices are
        # live, so the newest ingested bar stands for the feed checked.
        newest = Candle.objects.filter(timeframe__in=("1m", "1h")).order_by("-open_time").first()
        if newest is not None:
            prov.add(
                source=newest.source or "exchanges",
                venue=newest.exchange,
                replay=newest.replay,
                as_of=candle_as_of(newest.open_time, newest.timeframe, newest.observed_at),
                items=0,
            )
    fresh_required(prov, "fresh prices")
    positions.sort(key=lambda p: 0 if p["alerts"] else 1)
    return {
        "trail_atr_multiple": EXIT_TRAIL_ATR,
        "count": len(positions),
        "alerting": sum(1 for p in positions if p["alerts"]),
        "positions": positions,
        **prov.out(),
    }


def _has_fresh_prices() -> tuple[bool, str]:
    since = timezone.now() - EXIT_PRICE_MAX_AGE
    if (
        Candle.objects.filter(timeframe="1m", open_time__gte=since - timeframe_delta("1m")).exists()
        or Candle.objects.filter(timeframe="1h", open_time__gte=since - timeframe_delta("1h")).exists()
        or ExchangeMarket.objects.filter(updated_at__gte=since).exists()
    ):
        return True, ""
    return False, "no fresh prices have been ingested"


register(
    ProductSpec(
        sku="risk_exit_alerts",
        path="/trading/risk-exit-alerts",
        headline="Risk exit alerts: positions whose exit conditions have triggered",
        price="0.06",
        family="risk",
        tier="B",
        hero=True,
        rank=8,
        session_callable=True,
        teaser="risk-exit-alerts",
        teasers=(
            TeaserSpec(
                name="risk-exit-alerts",
                title="Risk exit alerts",
                summary="Positions whose exit conditions have triggered.",
                highlights=("trigger", "suggested exit"),
            ),
        ),
        run=risk_exit_alerts,
        params=ExitAlertsParams,
        output=RiskExitAlertsOut,
        available=_has_fresh_prices,
    )
)


register(
    ProductSpec(
        sku="macro_gate",
        path="/risk/macro-gate",
        headline="Macro gate: whether today's macro calendar allows new risk",
        price="0.06",
        family="risk",
        rank=34,
        session_callable=True,
        teaser="macro-gate",
        teasers=(
            TeaserSpec(
                name="macro-gate",
                title="Macro gate",
                summary="Whether today's macro calendar allows new risk.",
                highlights=("gate state", "blocking events"),
            ),
        ),
        run=macro_gate_product,
        output=MacroGateOut,
        pure=True,
        available=_has_calendar,
    )
)


register(
    ProductSpec(
        sku="calendar_risk",
        path="/calendar/risk",
        headline="Calendar risk: scheduled events that move markets this week",
        price="0.05",
        family="risk",
        rank=37,
        session_callable=True,
        teaser="calendar-risk",
        teasers=(
            TeaserSpec(
                name="calendar-risk",
                title="Calendar risk",
                summary="Scheduled events that can move markets in the coming week.",
                highlights=("event time", "expected impact"),
            ),
        ),
        run=calendar_risk,
        params=CalendarRiskParams,
        output=CalendarRiskOut,
        available=_has_calendar,
    )
)
