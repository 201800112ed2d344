"""What the execution desks share: the books' freshness limit, the symbol and notional
parameters, rounding, the fee table, the checks before payment and each venue's cost of a buy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from a2a_service.core.errors import NotFound
from catalog.analytics.execution.books import BPS, Book, Side, book_walk, books_fresh, cost_bps, since
from catalog.analytics.execution.fees import fees_for
from catalog.analytics.execution.routing import consolidated_mid
from catalog.analytics.provenance import Provenance
from catalog.models import ExchangeMarket, OrderBook
from catalog.products.registry import ProductCall, ProductFailed, fresh_required

# --- freshness limits (why each) ------------------------------------------------------------
# The exchanges feed passes every 60 s: a top or a book older than five passes is no market.
BOOK_MAX_AGE = timedelta(minutes=5)


def _upper(value: str) -> str:
    return value.upper()


Symbol = Annotated[
    str,
    Field(
        min_length=3,
        max_length=40,
        pattern=r"^[A-Za-z0-9]+/[A-Za-z0-9]+$",
        description="a spot market, BASE/QUOTE (e.g. BTC/USDT)",
    ),
    AfterValidator(_upper),
]
Notional = Annotated[float, Field(gt=0, le=1_000_000_000, description="quote notional (USDC/USDT at par)")]


def _r(value: float | None, places: int = 4) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, places)


def _rf(value: float, places: int = 4) -> float:
    return round(value, places) if math.isfinite(value) else 0.0


def _price(value: float | None) -> float | None:
    """A price to 10 significant digits (prices range from 1e-5 to 1e5)."""
    if value is None or not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.10g}")


def _fresh_markets() -> tuple[bool, str]:
    if ExchangeMarket.objects.filter(updated_at__gte=since(BOOK_MAX_AGE), bid__gt=0).exists():
        return True, ""
    return False, "no exchange book tops newer than 5 minutes"


def _fresh_books() -> tuple[bool, str]:
    if OrderBook.objects.filter(observed_at__gte=since(BOOK_MAX_AGE)).exists():
        return True, ""
    return False, "no order books newer than 5 minutes"


def _known_symbol(call: ProductCall) -> int | None:
    """price_for of the products with a `symbol`: a market the exchanges feed does not list
    answers 404 before any payment (the price stays the SKU's). Before the feed's first pass
    nothing is known yet: the call goes on and answers 503 uncharged."""
    symbol = str(getattr(call.params, "symbol", "") or "").upper()
    if (
        symbol
        and not ExchangeMarket.objects.filter(symbol=symbol).exists()
        and ExchangeMarket.objects.exists()
    ):
        raise NotFound(f"no venue of the exchanges feed lists {symbol}")
    return None


def _fees_out(venues: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for venue in sorted(set(venues)):
        fees = fees_for(venue)
        out.append(
            {
                "venue": venue,
                "taker_bps": _r(fees.taker_bps, 3),
                "maker_bps": _r(fees.maker_bps, 3),
                "source": fees.source,
            }
        )
    return out


class FeeOut(BaseModel):
    venue: str
    taker_bps: float | None = Field(description="the taker fee in bps (None: the venue's fee is unknown)")
    maker_bps: float | None
    source: Literal["setting", "ccxt", "unknown"] = Field(
        description="setting: EXCHANGE_TAKER_FEES/EXCHANGE_MAKER_FEES; ccxt: the venue's public base tier"
    )


class VenueCostOut(BaseModel):
    venue: str
    ask: float
    mid: float
    taker_fee_bps: float | None
    half_spread_bps: float = Field(description="the venue's ask above its own mid")
    premium_bps: float = Field(description="the venue's mid against the consolidated mid (all venues)")
    slippage_bps: float | None = Field(description="walking the asks for one buy, against the top ask")
    all_in_cost_bps: float | None = Field(description="average price plus fee against the consolidated mid")
    levels_used: int
    complete: bool = Field(description="the book's levels absorb a whole buy")


def _venue_costs(books: Sequence[Book], notional: float, side: Side) -> tuple[float, list[dict[str, Any]]]:
    cmid = consolidated_mid(books)
    if cmid is None:
        raise ProductFailed("no order book with both sides; nothing was charged")
    out = []
    for book in books:
        fee = fees_for(book.exchange).taker
        fill = book_walk(book.side(side), side=side, notional=notional)
        mid = book.mid or cmid
        top = book.side(side)[0][0]
        half = (top - mid) / mid * BPS if side == "buy" else (mid - top) / mid * BPS
        cost = cost_bps(fill, reference=cmid, fee=fee) if fill.complete else None
        out.append(
            {
                "venue": book.exchange,
                "ask": _price(book.asks[0][0]),
                "mid": _price(mid),
                "taker_fee_bps": _r(fee * BPS if fee is not None else None, 3),
                "half_spread_bps": _rf(half, 3),
                "premium_bps": _rf((mid - cmid) / cmid * BPS, 3),
                "slippage_bps": _r(fill.slippage_bps, 3),
                "all_in_cost_bps": _r(cost, 3),
                "levels_used": fill.levels_used,
                "complete": fill.complete,
            }
        )
    # Cheapest first; venues that cannot fill a whole buy or whose fee is unknown last.
    out.sort(key=lambda v: (v["all_in_cost_bps"] is None, v["all_in_cost_bps"] or 0.0))
    return cmid, out


def _books_for(symbol: str, prov: Provenance) -> list[Book]:
    books = books_fresh(seen_since=since(BOOK_MAX_AGE), symbol=symbol)
    if not books:
        raise ProductFailed(f"no order book of {symbol} newer than 5 minutes; nothing was charged")
    for b in books:
        prov.add(source=b.source, venue=b.exchange, replay=b.replay, as_of=b.at)
    fresh_required(prov, "order books")
    return books
