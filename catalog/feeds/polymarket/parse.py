"""Polymarket's Gamma markets and CLOB midpoints, parsed into normalized market rows.

Gamma answers GET /markets with a JSON array of market objects. Three of their fields are JSON
*strings* holding lists: `outcomes` ('["Yes", "No"]'), `outcomePrices` ('["0.62", "0.38"]') and
`clobTokenIds` (the CLOB token of each outcome, same order). Amounts come both as strings
(`volume`, `liquidity`) and numbers (`volumeNum`, `liquidityNum`). Each market embeds the
events it belongs to (`events`), which carry the grouping and often the category. The CLOB's
GET /midpoint?token_id=... answers {"mid": "0.455"}."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from catalog.feeds.jsonbody import number, probability, text, timestamp, usd
from catalog.feeds.prediction_store import MarketRow
from catalog.feeds.registry import FeedError
from catalog.models import PredictionMarket

VENUE = "polymarket"
WEB = "https://polymarket.com"


@dataclass(frozen=True)
class GammaMarket:
    row: MarketRow
    yes_token: str | None  # the CLOB token of the yes outcome, for a midpoint when Gamma has no price
    last_trade: Decimal | None


def json_list(value: Any) -> list[Any]:
    """A Gamma list field: a JSON string holding a list (the usual form), or already a list."""
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip():
        try:
            parsed = json.loads(value)
        except ValueError:
            return []
        return parsed if isinstance(parsed, list) else []
    return []


def yes_index(outcomes: list[str]) -> int:
    """The outcome the yes price is of: "Yes" when there is one, else the first (a two-team
    market's yes price is its first team's)."""
    for i, name in enumerate(outcomes):
        if name.strip().lower() == "yes":
            return i
    return 0


def _status(market: dict[str, Any]) -> str:
    if market.get("closed") is True:
        resolved = str(market.get("umaResolutionStatus") or "").lower() == "resolved"
        return PredictionMarket.Status.RESOLVED if resolved else PredictionMarket.Status.CLOSED
    if market.get("active") is False:
        return PredictionMarket.Status.CLOSED
    return PredictionMarket.Status.OPEN


def market_parse(market: dict[str, Any]) -> GammaMarket | None:
    """One Gamma market, or None when it lacks an id or a question."""
    external_id = text(market.get("id"), max_length=200) or (
        str(market["id"]) if isinstance(market.get("id"), int) else ""
    )
    question = text(market.get("question"), max_length=500)
    if not external_id or not question:
        return None
    outcomes = [str(o) for o in json_list(market.get("outcomes"))]
    prices = json_list(market.get("outcomePrices"))
    tokens = [str(t) for t in json_list(market.get("clobTokenIds"))]
    i = yes_index(outcomes)
    events = [e for e in market.get("events") or [] if isinstance(e, dict)]
    event = events[0] if events else {}
    category = text(market.get("category"), max_length=64) or text(event.get("category"), max_length=64)
    event_slug = text(event.get("slug"), max_length=200)
    slug = text(market.get("slug"), max_length=300)
    url = f"{WEB}/event/{event_slug}" if event_slug else (f"{WEB}/market/{slug}" if slug else "")
    volume = market.get("volumeNum") if number(market.get("volumeNum")) is not None else market.get("volume")
    liquidity = (
        market.get("liquidityNum")
        if number(market.get("liquidityNum")) is not None
        else market.get("liquidity")
    )
    row = MarketRow(
        venue=VENUE,
        external_id=external_id,
        question=question,
        category=category,
        event_id=event_slug or text(str(event.get("id") or ""), max_length=200),
        outcomes=outcomes,
        yes_price=probability(prices[i]) if i < len(prices) else None,
        volume_usd=usd(volume),
        liquidity_usd=usd(liquidity),
        closes_at=timestamp(market.get("endDate")) or timestamp(market.get("endDateIso")),
        status=_status(market),
        url=url,
        resolution_source=text(market.get("resolutionSource"), max_length=300),
        rules=text(market.get("description"), max_length=4000),
    )
    return GammaMarket(
        row=row,
        yes_token=tokens[i] if i < len(tokens) else None,
        last_trade=probability(market.get("lastTradePrice")),
    )


def markets_page_parse(payload: Any) -> list[GammaMarket]:
    """A page of GET /markets: a JSON array; anything else is garbage."""
    if not isinstance(payload, list):
        raise FeedError(f"Gamma /markets answered a {type(payload).__name__}, not a list")
    return [m for m in (market_parse(x) for x in payload if isinstance(x, dict)) if m is not None]


def midpoint_parse(payload: Any) -> Decimal | None:
    """GET /midpoint: {"mid": "0.455"}."""
    return probability(payload.get("mid")) if isinstance(payload, dict) else None


def with_price(market: GammaMarket, price: Decimal | None) -> MarketRow:
    return replace(market.row, yes_price=price)
