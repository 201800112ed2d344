"""Execution previews (X-API-Key): the TWAP preview (slices, times, participation and cost from
the order books) and the market-making hint (a quote spread from volatility and fees, skewed
by bias)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Annotated, Any, Literal, cast

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics.execution.books import BPS, Book, book_walk, books_fresh, cost_bps, since
from catalog.analytics.execution.fees import fees_for
from catalog.analytics.execution.slicing import USDC_ATOMIC, slices_atomic, usdc_text
from catalog.analytics.indicators import snapshot
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.series import Series, ohlcv
from catalog.models import ExchangeMarket
from catalog.products.execution.common import (
    BOOK_MAX_AGE,
    VenueCostOut,
    _books_for,
    _fresh_books,
    _known_symbol,
    _price,
    _r,
    _rf,
    _venue_costs,
)
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    fresh_required,
    register,
)

# The market-making hint's volatility is the 1m ATR: older than 10 minutes says nothing of now.
CANDLE_1M_MAX_AGE = timedelta(minutes=10)
TWAP_MAX_PARTICIPATION = 0.10  # a slice takes at most 10 % of the venue's average volume in its interval
TWAP_MAX_INTERVAL_MIN = 60
MM_MAX_SYMBOLS = 10
MM_TARGET_BASE_SHARE = {"neutral": 0.5, "long": 0.65, "short": 0.35}
MM_SKEW_OF_SPREAD = 0.25  # a biased quote moves both sides by a quarter of the quoted spread


class TwapPreviewQuery(QueryModel):
    symbol: Annotated[str, Field(min_length=3, max_length=40, pattern=r"^[A-Za-z0-9]+/[A-Za-z0-9]+$")] = (
        "BTC/USDT"
    )
    notional_usdc: Annotated[float, Field(gt=0, le=1_000_000_000)] = 10000
    slices: Annotated[int, Field(ge=1, le=200)] = 6


class TwapSliceOut(BaseModel):
    n: int
    at: str = Field(description="ISO 8601 UTC")
    amount_atomic: int = Field(
        description="USDC atomic units (6 decimals); the slices add up to the notional exactly"
    )
    amount_usdc: str = Field(description="the same, as an exact decimal")
    est_base_qty: float | None = Field(description="at today's book (a buy)")
    participation_pct: float | None = Field(
        description="of the venue's average volume over the slice's interval"
    )


class TwapOut(Provenanced):
    symbol: str
    venue: str = Field(description="the venue with the cheapest slice (buy)")
    notional_usdc: float
    slices: int
    interval_minutes: int = Field(
        description="so that a slice takes at most 10 % of the venue's average volume in its interval (1-60 min)"
    )
    schedule: list[TwapSliceOut]
    volume_24h_usd: float | None = Field(description="the venue's")
    volume_24h_usd_all_venues: float | None
    participation_24h_pct: float | None = Field(description="the notional against the venue's 24 h volume")
    est_cost_bps_buy: float | None = Field(description="one slice walked through the asks, plus fee, vs mid")
    est_cost_bps_sell: float | None = Field(description="one slice walked through the bids, plus fee, vs mid")
    single_order_cost_bps_buy: float | None = Field(description="the whole notional at once, for comparison")
    levels_used: int
    taker_fee_bps: float | None
    venues: list[VenueCostOut] = Field(description="one slice's buy cost at every venue with a fresh book")


def _volumes(symbol: str) -> dict[str, float]:
    rows = ExchangeMarket.objects.filter(
        symbol=symbol, updated_at__gte=since(BOOK_MAX_AGE), volume_24h_usd__isnull=False
    )
    return {m.exchange: float(m.volume_24h_usd or 0) for m in rows}


def twap_preview(call: ProductCall) -> dict[str, Any]:
    params = cast(TwapPreviewQuery, call.params)
    symbol = params.symbol.upper()
    prov = Provenance(
        method="equal atomic USDC slices; each slice walked through the venue's order book (the book "
        "assumed to refill between slices) plus taker fee against the mid; interval sized so a slice "
        f"takes at most {TWAP_MAX_PARTICIPATION:.0%} of the venue's average volume per minute",
        max_age=BOOK_MAX_AGE,
    )
    books = _books_for(symbol, prov)
    total = round(params.notional_usdc * USDC_ATOMIC)
    amounts = slices_atomic(total, params.slices)
    slice_notional = max(amounts) / USDC_ATOMIC
    cmid, venues = _venue_costs(books, slice_notional, "buy")
    chosen = next((v for v in venues if v["all_in_cost_bps"] is not None), venues[0])
    book = next(b for b in books if b.exchange == chosen["venue"])
    mid = book.mid or cmid
    fee = fees_for(book.exchange).taker
    buy = book_walk(book.asks, side="buy", notional=slice_notional)
    sell = book_walk(book.bids, side="sell", notional=slice_notional)
    whole = book_walk(book.asks, side="buy", notional=params.notional_usdc)
    volumes = _volumes(symbol)
    volume = volumes.get(book.exchange)
    per_minute = volume / 1440 if volume else None
    interval = TWAP_MAX_INTERVAL_MIN
    if per_minute:
        interval = min(
            max(math.ceil(slice_notional / (TWAP_MAX_PARTICIPATION * per_minute)), 1), TWAP_MAX_INTERVAL_MIN
        )
    start = timezone.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
    schedule = []
    for i, amount in enumerate(amounts):
        usd = amount / USDC_ATOMIC
        fill = book_walk(book.asks, side="buy", notional=usd)
        schedule.append(
            {
                "n": i + 1,
                "at": iso(start + timedelta(minutes=interval * i)),
                "amount_atomic": amount,
                "amount_usdc": usdc_text(amount),
                "est_base_qty": _r(fill.filled_base, 8) if fill.complete else None,
                "participation_pct": _r(usd / (per_minute * interval) * 100, 4) if per_minute else None,
            }
        )
    return {
        "symbol": symbol,
        "venue": book.exchange,
        "notional_usdc": params.notional_usdc,
        "slices": params.slices,
        "interval_minutes": interval,
        "schedule": schedule,
        "volume_24h_usd": _r(volume, 2),
        "volume_24h_usd_all_venues": _r(sum(volumes.values()), 2) if volumes else None,
        "participation_24h_pct": _r(params.notional_usdc / volume * 100, 6) if volume else None,
        "est_cost_bps_buy": _r(cost_bps(buy, reference=mid, fee=fee), 3) if buy.complete else None,
        "est_cost_bps_sell": _r(cost_bps(sell, reference=mid, fee=fee), 3) if sell.complete else None,
        "single_order_cost_bps_buy": _r(cost_bps(whole, reference=mid, fee=fee), 3)
        if whole.complete
        else None,
        "levels_used": buy.levels_used,
        "taker_fee_bps": _r(fee * BPS if fee is not None else None, 3),
        "venues": venues,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="twap_preview",
        path="/twap/preview",
        headline="TWAP preview: slices, times, participation and estimated cost from the order books",
        price="0.03",
        family="trading",
        product_type=EXECUTION_INTELLIGENCE,
        rank=61,
        session_callable=True,
        credit_routes=(
            CreditRoute(
                route="api/a2a/twap/preview", operation_id="twap_preview", summary="TWAP slicing preview"
            ),
        ),
        run=twap_preview,
        params=TwapPreviewQuery,
        output=TwapOut,
        price_for=_known_symbol,
        available=_fresh_books,
    )
)


class MmHintQuery(QueryModel):
    bias: Literal["neutral", "long", "short"] = "neutral"


class MmQuoteOut(BaseModel):
    symbol: str
    venue: str = Field(description="the symbol's deepest venue (24 h volume) with a fresh book")
    mid: float
    atr_1m: float = Field(description="talipp ATR(14) of the 1m candles")
    atr_bps: float
    maker_fee_bps: float | None
    venue_spread_bps: float
    quote_spread_bps: float = Field(
        description="max(2 x maker fee + 1m ATR, the venue's spread): a round trip pays the maker fee "
        "twice and the quote must outlast a typical minute's move"
    )
    skew_bps: float = Field(description="both quotes moved by this (up for long, down for short)")
    bid: float
    ask: float
    hourly_move_bps: float = Field(description="1m ATR x sqrt(60): a typical hour's move")
    target_base_share: float = Field(description="of the inventory's value held in the base asset")
    max_inventory_quote: float = Field(
        description="the bid depth within an hour's typical move of the mid: inventory the book could take back"
    )
    guidance: str


class MmHintOut(Provenanced):
    bias: Literal["neutral", "long", "short"]
    quotes: list[MmQuoteOut]


def mm_hint(call: ProductCall) -> dict[str, Any]:
    params = cast(MmHintQuery, call.params)
    bias = params.bias
    prov = Provenance(
        method="per liquid symbol: quote spread = max(2 x maker fee + 1m ATR(14) in bps, venue spread), "
        f"skewed by {MM_SKEW_OF_SPREAD} of the spread toward the bias; inventory cap = bid depth within "
        "1m ATR x sqrt(60) of the mid",
        max_age=BOOK_MAX_AGE,
    )
    books = books_fresh(seen_since=since(BOOK_MAX_AGE))
    if not books:
        raise ProductFailed("no order books newer than 5 minutes; nothing was charged")
    volumes: dict[tuple[str, str], float] = {
        (m.exchange, m.symbol): float(m.volume_24h_usd or 0)
        for m in ExchangeMarket.objects.filter(updated_at__gte=since(BOOK_MAX_AGE))
    }
    deepest: dict[str, Book] = {}
    for b in books:
        held = deepest.get(b.symbol)
        if held is None or volumes.get((b.exchange, b.symbol), 0) > volumes.get(
            (held.exchange, held.symbol), 0
        ):
            deepest[b.symbol] = b
    ranked = sorted(deepest.values(), key=lambda b: -volumes.get((b.exchange, b.symbol), 0))
    cutoff = since(CANDLE_1M_MAX_AGE)
    quotes: list[dict[str, Any]] = []
    for book in ranked:
        if len(quotes) >= MM_MAX_SYMBOLS:
            break
        mid = book.mid
        series = ohlcv(book.symbol, "1m", exchange=book.exchange, limit=120) or ohlcv(
            book.symbol, "1m", limit=120
        )
        if mid is None or series is None or series.last_at is None or series.last_at < cutoff:
            continue
        atr = snapshot(series).atr
        if atr is None or atr <= 0:
            continue
        prov.add(source=book.source, venue=book.exchange, replay=book.replay, as_of=book.at)
        prov.add(
            source=series.source,
            venue=series.exchange,
            replay=series.replay,
            as_of=series.last_at,
            items=len(series),
        )
        quotes.append(_mm_quote(book, mid, atr, series, bias))
    if not quotes:
        raise ProductFailed("no symbol with a fresh order book and fresh 1m candles; nothing was charged")
    fresh_required(prov, "order books")
    return {"bias": bias, "quotes": quotes, **prov.out()}


def _mm_quote(book: Book, mid: float, atr: float, series: Series, bias: str) -> dict[str, Any]:
    atr_bps = atr / series.last * BPS
    maker = fees_for(book.exchange).maker_bps
    venue_spread = (book.asks[0][0] - book.bids[0][0]) / mid * BPS
    spread = max(2 * (maker or 0.0) + atr_bps, venue_spread)
    skew = {"long": 1.0, "short": -1.0}.get(bias, 0.0) * MM_SKEW_OF_SPREAD * spread
    half = spread / 2
    hourly = atr_bps * math.sqrt(60)
    floor = mid * (1 - hourly / BPS)
    capacity = sum(p * s for p, s in book.bids if p >= floor)
    share = MM_TARGET_BASE_SHARE.get(bias, 0.5)
    lean = {"long": "lean long: bid nearer the mid", "short": "lean short: ask nearer the mid"}.get(
        bias, "stay flat: quotes centred on the mid"
    )
    guidance = (
        f"{lean}; hold about {share:.0%} of inventory value in {book.symbol.split('/')[0]}; cap inventory "
        f"near {capacity:,.0f} {book.symbol.split('/')[1]} (what the bids take back within an hour's "
        f"typical move of {hourly:.1f} bps); widen quotes when the 1m ATR rises"
    )
    return {
        "symbol": book.symbol,
        "venue": book.exchange,
        "mid": _price(mid),
        "atr_1m": _price(atr),
        "atr_bps": _rf(atr_bps, 3),
        "maker_fee_bps": _r(maker, 3),
        "venue_spread_bps": _rf(venue_spread, 3),
        "quote_spread_bps": _rf(spread, 3),
        "skew_bps": _rf(skew, 3),
        "bid": _price(mid * (1 - (half - skew) / BPS)),
        "ask": _price(mid * (1 + (half + skew) / BPS)),
        "hourly_move_bps": _rf(hourly, 3),
        "target_base_share": share,
        "max_inventory_quote": _rf(capacity, 2),
        "guidance": guidance,
    }


register(
    ProductSpec(
        sku="mm_hint",
        path="/mm/hint",
        headline="Market-making hint: quote spread from volatility and fees, skew by bias, inventory guidance",
        price="0.03",
        family="trading",
        product_type=EXECUTION_INTELLIGENCE,
        rank=62,
        session_callable=True,
        credit_routes=(
            CreditRoute(route="api/a2a/mm/hint", operation_id="mm_hint", summary="Market-making hint"),
        ),
        run=mm_hint,
        params=MmHintQuery,
        output=MmHintOut,
        available=_fresh_books,
    )
)
