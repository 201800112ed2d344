"""From ccxt's unified structures (ticker, OHLCV list, funding rate: ccxt has already parsed
each venue's own format) to the rows we keep. Pure: no database, no network."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from catalog.feeds.registry import FeedError

# Quotes worth one US dollar, for the 24h volume in USD.
USD_QUOTES = frozenset({"USD", "USDT", "USDC", "FDUSD", "DAI", "TUSD", "USDE"})
# The quotes a bare base in MARKET_SYMBOLS is tried against, in this order.
QUOTES = ("USDT", "USD", "USDC")


def dec(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def when(ms: Any) -> datetime | None:
    if ms is None or isinstance(ms, bool):
        return None
    try:
        return datetime.fromtimestamp(int(ms) / 1000, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def spread_bps(bid: Decimal | None, ask: Decimal | None) -> Decimal | None:
    """The quoted spread in basis points of the mid; None for a missing or crossed book."""
    if bid is None or ask is None or bid <= 0 or ask < bid:
        return None
    mid = (bid + ask) / 2
    return ((ask - bid) / mid * 10000).quantize(Decimal("0.001"))


@dataclass(frozen=True)
class Tick:
    symbol: str
    base: str
    quote: str
    last: Decimal | None
    bid: Decimal | None
    ask: Decimal | None
    bid_size: Decimal | None
    ask_size: Decimal | None
    volume_base: Decimal | None
    volume_usd: Decimal | None
    change_24h_pct: Decimal | None

    @property
    def spread_bps(self) -> Decimal | None:
        return spread_bps(self.bid, self.ask)


def tick(ticker: dict[str, Any], market: dict[str, Any]) -> Tick:
    """A ccxt ticker (with the market it is for) as a Tick. The ticker's bid/ask are the
    order book's top (venues send them with the 24h ticker)."""
    if not isinstance(ticker, dict):
        raise FeedError(f"ticker for {market.get('symbol')} is not an object")
    last = dec(ticker.get("last")) or dec(ticker.get("close"))
    volume_base = dec(ticker.get("baseVolume"))
    volume_quote = dec(ticker.get("quoteVolume"))
    quote = str(market.get("quote") or "")
    volume_usd: Decimal | None = None
    if quote in USD_QUOTES:
        volume_usd = (
            volume_quote
            if volume_quote is not None
            else (volume_base * last if volume_base is not None and last is not None else None)
        )
    if volume_usd is not None:
        volume_usd = volume_usd.quantize(Decimal("0.01"))
    change = dec(ticker.get("percentage"))
    if change is None:
        opened = dec(ticker.get("open"))
        if opened and last is not None:
            change = (last - opened) / opened * 100
    return Tick(
        symbol=str(market["symbol"]),
        base=str(market.get("base") or ""),
        quote=quote,
        last=last,
        bid=dec(ticker.get("bid")),
        ask=dec(ticker.get("ask")),
        bid_size=dec(ticker.get("bidVolume")),
        ask_size=dec(ticker.get("askVolume")),
        volume_base=volume_base,
        volume_usd=volume_usd,
        change_24h_pct=change.quantize(Decimal("0.0001")) if change is not None else None,
    )


@dataclass(frozen=True)
class Bar:
    open_time: datetime
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal


def bars(ohlcv: Any) -> list[Bar]:
    """ccxt's OHLCV list ([[ms, o, h, l, c, v], ...]) as Bars; a malformed row fails the pass."""
    if not isinstance(ohlcv, list):
        raise FeedError("OHLCV answer is not a list")
    out: list[Bar] = []
    for row in ohlcv:
        if not isinstance(row, list | tuple) or len(row) < 6:
            raise FeedError(f"OHLCV row {row!r} is not [time, o, h, l, c, v]")
        opened = when(row[0])
        values = [dec(v) for v in row[1:6]]
        if opened is None or any(v is None for v in values[:4]):
            raise FeedError(f"OHLCV row {row!r} lacks a time or a price")
        o, h, l, c = (v for v in values[:4] if v is not None)  # noqa: E741
        out.append(Bar(open_time=opened, open=o, high=h, low=l, close=c, volume=values[4] or Decimal(0)))
    return out


@dataclass(frozen=True)
class Funding:
    symbol: str
    rate: Decimal
    funding_at: datetime
    next_funding_at: datetime | None
    mark_price: Decimal | None


def funding(entry: dict[str, Any], *, observed_at: datetime) -> Funding | None:
    """A ccxt funding-rate structure; None when the venue gave no rate. The funding time is
    the one the rate applies to (ccxt's fundingTimestamp), else the next one, else when seen."""
    if not isinstance(entry, dict):
        raise FeedError("funding rate is not an object")
    rate = dec(entry.get("fundingRate"))
    if rate is None or not entry.get("symbol"):
        return None
    current = when(entry.get("fundingTimestamp"))
    following = when(entry.get("nextFundingTimestamp"))
    return Funding(
        symbol=str(entry["symbol"]),
        rate=rate,
        funding_at=current or following or observed_at.replace(second=0, microsecond=0),
        next_funding_at=following or current,
        mark_price=dec(entry.get("markPrice")),
    )


def pick_spot(markets: dict[str, Any], wanted: str) -> str | None:
    """The spot symbol a MARKET_SYMBOLS entry means on this venue ("BTC" -> "BTC/USDT", else
    /USD, else /USDC; "ETH/BTC" as it is), or None when the venue does not list it."""
    candidates = [wanted] if "/" in wanted else [f"{wanted}/{q}" for q in QUOTES]
    for symbol in candidates:
        market = markets.get(symbol)
        if market and market.get("spot") and market.get("active") is not False:
            return symbol
    return None


def pick_perp(markets: dict[str, Any], base: str) -> str | None:
    """The base's linear perpetual on this venue, if any."""
    for quote in QUOTES:
        market = markets.get(f"{base}/{quote}:{quote}")
        if market and market.get("swap") and market.get("active") is not False:
            return f"{base}/{quote}:{quote}"
    return None


@dataclass(frozen=True)
class DepthBook:
    symbol: str
    bids: list[tuple[Decimal, Decimal]]  # best (highest) first
    asks: list[tuple[Decimal, Decimal]]  # best (lowest) first
    at: datetime | None  # the venue's stamp, when it sends one


def _side(rows: Any, *, descending: bool, depth: int) -> list[tuple[Decimal, Decimal]]:
    if not isinstance(rows, list):
        raise FeedError("order book side is not a list")
    out = []
    for row in rows:
        if not isinstance(row, list | tuple) or len(row) < 2:
            raise FeedError(f"order book level {row!r} is not [price, size]")
        price, size = dec(row[0]), dec(row[1])
        if price is None or size is None:
            raise FeedError(f"order book level {row!r} lacks a price or a size")
        if price > 0 and size > 0:
            out.append((price, size))
    # Best first whatever order the venue used (ccxt sorts, but a stand-in might not).
    out.sort(key=lambda level: level[0], reverse=descending)
    return out[:depth]


def depth_book(order_book: Any, *, symbol: str, depth: int) -> DepthBook:
    """ccxt's order book structure ({"bids": [[price, amount], ...], "asks": ..., "timestamp"})
    as at most `depth` levels a side, best first."""
    if not isinstance(order_book, dict):
        raise FeedError(f"order book for {symbol} is not an object")
    return DepthBook(
        symbol=symbol,
        bids=_side(order_book.get("bids"), descending=True, depth=depth),
        asks=_side(order_book.get("asks"), descending=False, depth=depth),
        at=when(order_book.get("timestamp")),
    )
