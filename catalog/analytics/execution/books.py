"""The venues' books as stored (book tops and depth, the fresh ones), and walking one side of a
book for a notional: the fill, its slippage and its all-in cost."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from django.utils import timezone

from catalog.models import ExchangeMarket, OrderBook

Side = Literal["buy", "sell"]
Level = tuple[float, float]  # (price, size in base)

BPS = 10_000.0


@dataclass(frozen=True)
class Quote:
    """One venue's book top for a symbol (catalog.models.ExchangeMarket)."""

    exchange: str
    symbol: str
    bid: float
    ask: float
    bid_size: float | None
    ask_size: float | None
    volume_24h_usd: float | None
    at: datetime
    replay: bool
    source: str = "exchanges"

    @property
    def mid(self) -> float:
        return (self.bid + self.ask) / 2

    @property
    def spread_bps(self) -> float:
        return (self.ask - self.bid) / self.mid * BPS


@dataclass(frozen=True)
class Book:
    """One venue's depth for a symbol (catalog.models.OrderBook), best levels first."""

    exchange: str
    symbol: str
    bids: list[Level]
    asks: list[Level]
    at: datetime
    replay: bool
    source: str = "exchanges"

    @property
    def mid(self) -> float | None:
        if not self.bids or not self.asks:
            return None
        return (self.bids[0][0] + self.asks[0][0]) / 2

    def side(self, side: Side) -> list[Level]:
        """The levels a taker of `side` trades against (a buy lifts the asks)."""
        return self.asks if side == "buy" else self.bids


def levels(raw: Any) -> list[Level]:
    """Stored [[price, size], ...] (decimal strings) as floats; malformed rows are skipped."""
    out: list[Level] = []
    for row in raw if isinstance(raw, list) else []:
        try:
            price, size = float(row[0]), float(row[1])
        except (TypeError, ValueError, IndexError):
            continue
        if price > 0 and size > 0 and math.isfinite(price) and math.isfinite(size):
            out.append((price, size))
    return out


def since(max_age: timedelta) -> datetime:
    return timezone.now() - max_age


def quotes_fresh(
    *, seen_since: datetime, symbol: str | None = None, symbols: Iterable[str] | None = None
) -> list[Quote]:
    """Book tops seen since `seen_since`, with a bid and an ask that do not cross."""
    qs = ExchangeMarket.objects.filter(
        updated_at__gte=seen_since, bid__gt=0, ask__gt=0, bid__isnull=False, ask__isnull=False
    )
    if symbol is not None:
        qs = qs.filter(symbol=symbol)
    if symbols is not None:
        qs = qs.filter(symbol__in=list(symbols))
    out = []
    for m in qs.order_by("symbol", "exchange"):
        assert m.bid is not None and m.ask is not None  # filtered above
        if m.ask < m.bid:
            continue  # a crossed top on one venue is a broken reading, not a market
        out.append(
            Quote(
                exchange=m.exchange,
                symbol=m.symbol,
                bid=float(m.bid),
                ask=float(m.ask),
                bid_size=_f(m.bid_size),
                ask_size=_f(m.ask_size),
                volume_24h_usd=_f(m.volume_24h_usd),
                at=m.updated_at,
                replay=m.replay,
                source=m.source,
            )
        )
    return out


def books_fresh(
    *, seen_since: datetime, symbol: str | None = None, symbols: Iterable[str] | None = None
) -> list[Book]:
    """Order books observed since `seen_since` that have both sides."""
    qs = OrderBook.objects.filter(observed_at__gte=seen_since)
    if symbol is not None:
        qs = qs.filter(symbol=symbol)
    if symbols is not None:
        qs = qs.filter(symbol__in=list(symbols))
    out = []
    for b in qs.order_by("symbol", "exchange"):
        book = Book(
            exchange=b.exchange,
            symbol=b.symbol,
            bids=levels(b.bids),
            asks=levels(b.asks),
            at=b.book_at,
            replay=b.replay,
            source=b.source,
        )
        if book.bids and book.asks:
            out.append(book)
    return out


def _f(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)


# --- walking a book -------------------------------------------------------------------------


@dataclass(frozen=True)
class Fill:
    """A taker order of `requested` quote notional walked through one side of a book."""

    side: Side
    requested: float  # quote notional asked for
    filled_quote: float  # quote notional the levels absorbed
    filled_base: float
    avg_price: float | None
    top_price: float | None  # the first level's price
    worst_price: float | None  # the last level touched
    slippage_bps: float | None  # average against the top, positive = worse
    levels_used: int
    unfilled_quote: float  # what the book's levels could not absorb

    @property
    def complete(self) -> bool:
        return self.unfilled_quote <= self.requested * 1e-9


def book_walk(side_levels: Sequence[Level], *, side: Side, notional: float) -> Fill:
    """Fill `notional` (quote) against `side_levels` (asks for a buy, bids for a sell; best
    first): each level gives up to price x size of quote notional."""
    remaining = notional
    base = quote = 0.0
    used = 0
    worst: float | None = None
    for price, size in side_levels:
        if remaining <= notional * 1e-12:
            break
        take = min(remaining, price * size)
        base += take / price
        quote += take
        remaining -= take
        used += 1
        worst = price
    top = side_levels[0][0] if side_levels else None
    avg = quote / base if base > 0 else None
    slip = None
    if avg is not None and top:
        slip = (avg - top) / top * BPS if side == "buy" else (top - avg) / top * BPS
    return Fill(
        side=side,
        requested=notional,
        filled_quote=quote,
        filled_base=base,
        avg_price=avg,
        top_price=top,
        worst_price=worst,
        slippage_bps=slip,
        levels_used=used,
        unfilled_quote=max(remaining, 0.0),
    )


def cost_bps(fill: Fill, *, reference: float, fee: float | None) -> float | None:
    """All-in cost of a fill against a reference price (a mid): price impact plus the taker
    fee, in bps; None when nothing filled or the fee is unknown."""
    if fill.avg_price is None or fee is None or reference <= 0:
        return None
    if fill.side == "buy":
        paid = fill.avg_price * (1 + fee)
        return (paid - reference) / reference * BPS
    got = fill.avg_price * (1 - fee)
    return (reference - got) / reference * BPS
