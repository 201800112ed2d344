"""Risk exit alerts on the desks' open signals (catalog/editorial/track_record.py writes them):
stop or target touched, the chandelier trailing stop hit, or the regime flipped against the
position, on the freshest price the feeds hold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics.indicators import snapshot
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import regime_classify
from catalog.analytics.series import candle_as_of, ohlcv, timeframe_delta
from catalog.editorial.track_record import signal_bars
from catalog.models import Candle, DeskSignal, ExchangeMarket
from catalog.products.registry import ProductCall, ProductSpec, TeaserSpec, fresh_required, register
from catalog.products.risk.decision import SYMBOL_PATTERN

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
        found.append(
            _Price(float(bar[0]), candle_as_of(bar[1], "1m", bar[4]), "candle_1m", bool(bar[2]), bar[3])
        )
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
        return _Price(
            float(hour[0]), candle_as_of(hour[1], "1h", hour[4]), "candle_1h", bool(hour[2]), hour[3]
        )
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
