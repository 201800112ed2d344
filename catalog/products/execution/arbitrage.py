"""The pair arbitrage desk: cross-venue gaps the books can carry after both taker fees, and
correlated pairs whose residual is dislocated."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from catalog.analytics.execution.books import Book, books_fresh, quotes_fresh, since
from catalog.analytics.execution.fees import fees_for
from catalog.analytics.execution.gaps import Gap, arb_size, best_gaps
from catalog.analytics.execution.pairs import pair_zscores
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.series import Series, ohlcv, symbols_with_candles
from catalog.products.execution.common import BOOK_MAX_AGE, FeeOut, _fees_out, _fresh_markets, _price, _r, _rf
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# Correlations use 1h closes: a series whose last bar closed more than 3 h ago is left out.
CANDLE_1H_MAX_AGE = timedelta(hours=3)
PAIR_MIN_CORR = 0.8  # correlated pairs: |1h log-return correlation| at least this
PAIR_MIN_BARS = 24  # ... over at least a day of common 1h bars
PAIR_WINDOW_BARS = 168  # ... of at most a week
PAIR_Z_ENTRY = 2.0  # a residual 2 standard deviations out is a dislocation worth a trade
PAIR_MAX_SYMBOLS = 25


class ArbOut(BaseModel):
    symbol: str
    buy_venue: str
    sell_venue: str
    buy_ask: float
    sell_bid: float
    gross_bps: float
    buy_fee_bps: float | None
    sell_fee_bps: float | None
    net_bps: float | None = Field(description="gross minus both taker fees, at the book tops")
    actionable: bool
    sized_by: Literal["depth", "top", "none"] = Field(
        description="depth: both venues' order books walked; top: the book tops' sizes only"
    )
    size_base: float = Field(description="what the books carry while the next unit still earns after fees")
    size_quote: float = Field(description="spent at the buy venue for that size")
    expected_profit_quote: float = Field(description="after both taker fees, at the walked prices")
    expected_net_bps: float | None = Field(description="that profit in bps of the spent notional")
    buy_levels: int
    sell_levels: int


class PairZOut(BaseModel):
    a: str
    b: str
    correlation: float = Field(description="of the 1h log returns over the common bars")
    beta: float = Field(description="hedge ratio: log(a) = alpha + beta log(b)")
    zscore: float = Field(description="the newest residual in standard deviations of the window's")
    bars: int
    half_life_hours: float | None = Field(description="mean-reversion half-life of the residual (AR(1))")
    signal: Literal["short_a_long_b", "long_a_short_b", "none"]


class PairArbOut(Provenanced):
    opportunities: int = Field(description="symbols whose best cross-venue gap is positive after fees")
    cross_venue: list[ArbOut] = Field(description="per symbol, its best venue pair, best net gap first")
    correlated_pairs: list[PairZOut] = Field(description="largest |z| first")
    z_entry: float
    min_correlation: float
    fees: list[FeeOut]


def _arb_row(gap: Gap, books: dict[tuple[str, str], Book]) -> dict[str, Any]:
    fb, fs = fees_for(gap.buy.exchange).taker, fees_for(gap.sell.exchange).taker
    net = gap.net_bps
    buy_book, sell_book = (
        books.get((gap.buy.exchange, gap.symbol)),
        books.get((gap.sell.exchange, gap.symbol)),
    )
    sized_by: Literal["depth", "top", "none"] = "none"
    size = None
    if fb is not None and fs is not None and net is not None and net > 0:
        if buy_book is not None and sell_book is not None:
            size, sized_by = arb_size(buy_book.asks, sell_book.bids, buy_fee=fb, sell_fee=fs), "depth"
        elif gap.buy.ask_size and gap.sell.bid_size:
            size = arb_size(
                [(gap.buy.ask, gap.buy.ask_size)],
                [(gap.sell.bid, gap.sell.bid_size)],
                buy_fee=fb,
                sell_fee=fs,
            )
            sized_by = "top"
    return {
        "symbol": gap.symbol,
        "buy_venue": gap.buy.exchange,
        "sell_venue": gap.sell.exchange,
        "buy_ask": _price(gap.buy.ask),
        "sell_bid": _price(gap.sell.bid),
        "gross_bps": _rf(gap.gross_bps, 3),
        "buy_fee_bps": _r(gap.buy_fee_bps, 3),
        "sell_fee_bps": _r(gap.sell_fee_bps, 3),
        "net_bps": _r(net, 3),
        "actionable": net is not None and net > 0,
        "sized_by": sized_by,
        "size_base": _rf(size.base, 8) if size else 0.0,
        "size_quote": _rf(size.buy_quote, 2) if size else 0.0,
        "expected_profit_quote": _rf(size.profit_quote, 2) if size else 0.0,
        "expected_net_bps": _r(size.net_bps, 3) if size else None,
        "buy_levels": size.buy_levels if size else 0,
        "sell_levels": size.sell_levels if size else 0,
    }


def _hourly_series(prov: Provenance) -> list[Series]:
    out = []
    cutoff = since(CANDLE_1H_MAX_AGE)
    for symbol in symbols_with_candles("1h")[:PAIR_MAX_SYMBOLS]:
        series = ohlcv(symbol, "1h", limit=PAIR_WINDOW_BARS)
        if series is None or series.last_at is None or series.last_at < cutoff or len(series) < PAIR_MIN_BARS:
            continue
        prov.add(
            source=series.source,
            venue=series.exchange,
            replay=series.replay,
            as_of=series.last_at,
            items=len(series),
        )
        out.append(series)
    return out


def pair_arb_desk(call: ProductCall) -> dict[str, Any]:
    prov = Provenance(
        method="cross-venue: best venue pair per symbol from the book tops, net of both taker fees, "
        "sized by walking both order books while the next unit earns after fees; correlated pairs: "
        f"1h log returns with correlation >= {PAIR_MIN_CORR} (numpy corrcoef), z-score of the newest "
        f"residual of log(a) on log(b) (polyfit), |z| >= {PAIR_Z_ENTRY} signals",
        max_age=BOOK_MAX_AGE,
    )
    quotes = quotes_fresh(seen_since=since(BOOK_MAX_AGE))
    if not quotes:
        raise ProductFailed("no exchange book tops newer than 5 minutes; nothing was charged")
    for q in quotes:
        prov.add(source=q.source, venue=q.exchange, replay=q.replay, as_of=q.at)
    books = {(b.exchange, b.symbol): b for b in books_fresh(seen_since=since(BOOK_MAX_AGE))}
    for b in books.values():
        prov.add(source=b.source, venue=b.exchange, replay=b.replay, as_of=b.at, items=0)
    fresh_required(prov, "book tops")
    rows = [_arb_row(gap, books) for gap in best_gaps(quotes)]
    pairs = []
    for p in pair_zscores(_hourly_series(prov), min_corr=PAIR_MIN_CORR, min_bars=PAIR_MIN_BARS)[:20]:
        signal: Literal["short_a_long_b", "long_a_short_b", "none"] = "none"
        if p.zscore >= PAIR_Z_ENTRY:
            signal = "short_a_long_b"
        elif p.zscore <= -PAIR_Z_ENTRY:
            signal = "long_a_short_b"
        pairs.append(
            {
                "a": p.a,
                "b": p.b,
                "correlation": _rf(p.correlation, 4),
                "beta": _rf(p.beta, 4),
                "zscore": _rf(p.zscore, 3),
                "bars": p.bars,
                "half_life_hours": _r(p.half_life_bars, 2),
                "signal": signal,
            }
        )
    return {
        "opportunities": sum(1 for r in rows if r["actionable"]),
        "cross_venue": rows,
        "correlated_pairs": pairs,
        "z_entry": PAIR_Z_ENTRY,
        "min_correlation": PAIR_MIN_CORR,
        "fees": _fees_out([q.exchange for q in quotes]),
        **prov.out(),
    }


register(
    ProductSpec(
        sku="pair_arb_desk",
        path="/trading/pair-arb-desk",
        headline="Pair arbitrage desk: cross-venue spreads worth trading",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=24,
        session_callable=True,
        teaser="pair-arb-desk",
        teasers=(
            TeaserSpec(
                name="pair-arb-desk",
                title="Pair arbitrage desk",
                summary="Cross-venue spreads worth trading after fees.",
                highlights=("spread in bps", "venues"),
            ),
        ),
        run=pair_arb_desk,
        output=PairArbOut,
        pure=True,
        available=_fresh_markets,
    )
)
