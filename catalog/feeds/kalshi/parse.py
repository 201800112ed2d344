"""Kalshi's public markets API, parsed into normalized market rows.

GET /markets answers {"markets": [...], "cursor": "..."} (an empty cursor ends the listing).
Prices come as dollar strings ("yes_bid_dollars": "0.4200", "last_price_dollars", ...) and, in
older answers, as integer cents ("yes_bid": 42); the dollar fields win when present. Volume is
counted in contracts ("volume_fp": "1520.00", or the integer "volume"), each worth the market's
notional ("notional_value_dollars": "1.0000", or "notional_value" in cents): volume_usd is their
product. Liquidity: "liquidity_dollars", or "liquidity" in cents. A market's own "category" is
mostly empty now: its event's (GET /events: {"events": [{"event_ticker", "category", ...}],
"cursor"}) fills it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from catalog.feeds.jsonbody import number, probability, text, timestamp, usd
from catalog.feeds.prediction_store import MarketRow
from catalog.feeds.registry import FeedError
from catalog.models import PredictionMarket

VENUE = "kalshi"
WEB = "https://kalshi.com/markets"
# A quote this wide says little: the last trade is the better reading.
MAX_SPREAD = Decimal("0.10")

STATUS = {
    "open": PredictionMarket.Status.OPEN,
    "active": PredictionMarket.Status.OPEN,
    "initialized": PredictionMarket.Status.OPEN,
    "unopened": PredictionMarket.Status.OPEN,
    "closed": PredictionMarket.Status.CLOSED,
    "inactive": PredictionMarket.Status.CLOSED,
    "paused": PredictionMarket.Status.CLOSED,
    "disputed": PredictionMarket.Status.CLOSED,
    "determined": PredictionMarket.Status.RESOLVED,
    "amended": PredictionMarket.Status.RESOLVED,
    "finalized": PredictionMarket.Status.RESOLVED,
    "settled": PredictionMarket.Status.RESOLVED,
}


@dataclass(frozen=True)
class MarketsPage:
    rows: list[MarketRow]
    cursor: str


def dollars(market: dict[str, Any], name: str) -> Decimal | None:
    """A price in dollars: `<name>_dollars`, else the cent field `<name>` / 100."""
    if market.get(f"{name}_dollars") is not None:
        return probability(market.get(f"{name}_dollars"))
    cents = number(market.get(name))
    return probability(cents / 100) if cents is not None else None


def yes_price(market: dict[str, Any]) -> Decimal | None:
    """The midpoint of a tight yes quote, else the last trade, else the midpoint of a wide one;
    None for an empty book that never traded (bid 0, ask 1, last 0)."""
    bid, ask, last = dollars(market, "yes_bid"), dollars(market, "yes_ask"), dollars(market, "last_price")
    quoted = bid is not None and ask is not None and 0 < bid <= ask < 1
    mid = (
        ((bid + ask) / 2).quantize(Decimal("0.000001"))
        if quoted and bid is not None and ask is not None
        else None
    )
    if mid is not None and ask is not None and bid is not None and ask - bid <= MAX_SPREAD:
        return mid
    if last is not None and last > 0:
        return last
    return mid


def volume_usd(market: dict[str, Any]) -> Decimal | None:
    contracts = number(market.get("volume_fp"))
    if contracts is None:
        contracts = number(market.get("volume"))
    if contracts is None:
        return None
    notional = number(market.get("notional_value_dollars"))
    if notional is None:
        cents = number(market.get("notional_value"))
        notional = cents / 100 if cents is not None else 1.0
    return usd(contracts * notional)


def liquidity_usd(market: dict[str, Any]) -> Decimal | None:
    if market.get("liquidity_dollars") is not None:
        return usd(market.get("liquidity_dollars"))
    cents = number(market.get("liquidity"))
    return usd(cents / 100) if cents is not None else None


def market_parse(market: dict[str, Any]) -> MarketRow | None:
    ticker = text(market.get("ticker"), max_length=200)
    question = text(market.get("title"), max_length=500)
    if not ticker or not question:
        return None
    event = text(market.get("event_ticker"), max_length=200)
    series = event.split("-", 1)[0].lower() if event else ticker.split("-", 1)[0].lower()
    return MarketRow(
        venue=VENUE,
        external_id=ticker,
        question=question,
        category=text(market.get("category"), max_length=64),
        event_id=event,
        outcomes=["Yes", "No"],
        yes_price=yes_price(market),
        volume_usd=volume_usd(market),
        liquidity_usd=liquidity_usd(market),
        closes_at=timestamp(market.get("close_time")),
        status=STATUS.get(str(market.get("status") or "").lower(), PredictionMarket.Status.OPEN),
        url=f"{WEB}/{series}",
        # Kalshi names its settlement source on the event, not the market; the rules say it.
        resolution_source=text(market.get("settlement_source"), max_length=300),
        rules=" ".join(
            x
            for x in (text(market.get(k), max_length=2000) for k in ("rules_primary", "rules_secondary"))
            if x
        ),
    )


def markets_page_parse(payload: Any) -> MarketsPage:
    if not isinstance(payload, dict) or not isinstance(payload.get("markets"), list):
        raise FeedError("Kalshi /markets answered no markets list")
    items = payload["markets"]
    rows = [r for r in (market_parse(x) for x in items if isinstance(x, dict)) if r is not None]
    cursor = payload.get("cursor")
    return MarketsPage(rows=rows, cursor=cursor if isinstance(cursor, str) else "")


@dataclass(frozen=True)
class EventsPage:
    categories: dict[str, str]  # event ticker -> category
    cursor: str


def events_page_parse(payload: Any) -> EventsPage:
    if not isinstance(payload, dict) or not isinstance(payload.get("events"), list):
        raise FeedError("Kalshi /events answered no events list")
    categories = {
        text(e.get("event_ticker"), max_length=200): text(e.get("category"), max_length=64)
        for e in payload["events"]
        if isinstance(e, dict)
    }
    cursor = payload.get("cursor")
    return EventsPage(
        categories={k: v for k, v in categories.items() if k and v},
        cursor=cursor if isinstance(cursor, str) else "",
    )
