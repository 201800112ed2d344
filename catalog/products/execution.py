"""Execution desks: spreads, pair arbitrage, funding carry, DCA routing, intent solving, tokenized routing and DeFi yields, computed from the ingested books, funding rates and pools.

Every figure comes from the exchanges feed's rows (ExchangeMarket book tops, OrderBook depth,
FundingRate, 1m/1h Candle) or DefiLlama's pools (YieldPool), with the maths in
catalog/analytics/execution/; fees are the venues' public taker/maker rates (ccxt's static
description, or EXCHANGE_TAKER_FEES / EXCHANGE_MAKER_FEES). A product with no fresh input
answers 503 and charges nothing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated, Any, Literal, cast

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import AfterValidator, BaseModel, Field, model_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.execution.books import (
    BPS,
    Book,
    Quote,
    Side,
    book_walk,
    books_fresh,
    cost_bps,
    quotes_fresh,
    since,
)
from catalog.analytics.execution.fees import fees_for, taker_bps
from catalog.analytics.execution.funding import funding_annualized_pct, funding_hours
from catalog.analytics.execution.gaps import Gap, arb_size, best_gaps
from catalog.analytics.execution.pairs import pair_zscores
from catalog.analytics.execution.routing import consolidated_mid, route_best
from catalog.analytics.execution.slicing import USDC_ATOMIC, slices_atomic, usdc_text
from catalog.analytics.indicators import snapshot
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.series import Series, ohlcv, symbols_with_candles
from catalog.models import ExchangeMarket, FundingRate, OrderBook, SpreadSnapshot, TokenizedAsset, YieldPool
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# --- freshness limits (why each) ------------------------------------------------------------
# The exchanges feed passes every 60 s: a top or a book older than five passes is no market.
BOOK_MAX_AGE = timedelta(minutes=5)
# Funding is read by the same pass (the rate changes each funding period, the reading each pass).
FUNDING_MAX_AGE = timedelta(minutes=30)
# DefiLlama is ingested hourly: three missed passes and the yields are stale.
YIELD_MAX_AGE = timedelta(hours=3)
# Correlations use 1h closes: a series whose last bar closed more than 3 h ago is left out.
CANDLE_1H_MAX_AGE = timedelta(hours=3)
# The market-making hint's volatility is the 1m ATR: older than 10 minutes says nothing of now.
CANDLE_1M_MAX_AGE = timedelta(minutes=10)
# SpreadSnapshot readings shown as "the latest snapshot" (a few exchanges passes).
SNAPSHOT_WINDOW = timedelta(minutes=15)

# --- desk policy (stated in each payload's method) ------------------------------------------
PAIR_MIN_CORR = 0.8  # correlated pairs: |1h log-return correlation| at least this
PAIR_MIN_BARS = 24  # ... over at least a day of common 1h bars
PAIR_WINDOW_BARS = 168  # ... of at most a week
PAIR_Z_ENTRY = 2.0  # a residual 2 standard deviations out is a dislocation worth a trade
PAIR_MAX_SYMBOLS = 25
TWAP_MAX_PARTICIPATION = 0.10  # a slice takes at most 10 % of the venue's average volume in its interval
TWAP_MAX_INTERVAL_MIN = 60
MM_MAX_SYMBOLS = 10
MM_TARGET_BASE_SHARE = {"neutral": 0.5, "long": 0.65, "short": 0.35}
MM_SKEW_OF_SPREAD = 0.25  # a biased quote moves both sides by a quarter of the quoted spread
DCA_MAX_BUYS = 500
YIELD_REWARD_HAIRCUT = 0.5  # reward tokens are sold into their own emissions: count half
YIELD_IL_FACTOR = 0.7  # pools with impermanent-loss exposure keep 70 %
YIELD_OUTLIER_FACTOR = 0.5  # DefiLlama's statistical outliers keep half
YIELD_REWARD_HEAVY = 0.5  # more than half the APY paid in reward tokens
YIELD_ABOVE_MEAN = 1.5  # today's APY 1.5x its 30-day mean or more


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


# === spreads ===================================================================================


class SpreadLegOut(BaseModel):
    venue: str
    price: float
    size: float | None = Field(description="the book top's size at this price, in the base asset")
    taker_fee_bps: float | None


class SpreadQuoteOut(BaseModel):
    venue: str
    bid: float
    ask: float
    bid_size: float | None
    ask_size: float | None
    spread_bps: float = Field(description="the venue's own bid/ask spread in bps of its mid")
    as_of: str | None


class SpreadRowOut(BaseModel):
    symbol: str
    venues: int
    buy: SpreadLegOut = Field(description="the venue whose ask to lift (best pair by the net gap)")
    sell: SpreadLegOut = Field(description="the venue whose bid to hit")
    gross_bps: float = Field(
        description="(sell bid - buy ask) / buy ask, in bps; negative: the books do not cross"
    )
    net_bps: float | None = Field(description="gross minus both taker fees; None when a fee is unknown")
    crossed: bool = Field(description="the buy venue's ask is below the sell venue's bid")
    actionable: bool = Field(description="the gap is positive after both taker fees")
    quotes: list[SpreadQuoteOut]


class SnapshotReadingOut(BaseModel):
    symbol: str
    venue_a: str = Field(description="the buy venue (exchanges feed's readings)")
    venue_b: str = Field(description="the sell venue")
    spread_bps: float = Field(description="gross gap in bps (an ingested reading's own figure)")
    net_bps: float | None = Field(description="net of both taker fees (exchanges feed's readings only)")
    source: str = Field(
        description="exchanges (this service's feed) or ingest (pushed to the internal endpoint)"
    )
    replay: bool
    captured_at: str | None


class ExchangeSpreadsOut(Provenanced):
    symbols: int = Field(description="symbols quoted on two venues or more")
    alert_bps: float = Field(description="PAIR_ARB_ALERT_BPS: a pair crossing it (net) pushes pair_arb_alert")
    spreads: list[SpreadRowOut] = Field(description="per symbol, its best venue pair, best net gap first")
    fees: list[FeeOut]
    snapshot: list[SnapshotReadingOut] = Field(
        description="the latest stored readings (SpreadSnapshot, last 15 minutes): newest per symbol and pair"
    )


def _quote_out(q: Quote) -> dict[str, Any]:
    return {
        "venue": q.exchange,
        "bid": _price(q.bid),
        "ask": _price(q.ask),
        "bid_size": _r(q.bid_size, 8),
        "ask_size": _r(q.ask_size, 8),
        "spread_bps": _rf(q.spread_bps, 3),
        "as_of": iso(q.at),
    }


def _snapshot_latest() -> list[dict[str, Any]]:
    rows = SpreadSnapshot.objects.filter(captured_at__gte=since(SNAPSHOT_WINDOW)).order_by(
        "-captured_at", "-pk"
    )[:2000]
    seen: set[tuple[str, str, str]] = set()
    out = []
    for row in rows:
        key = (row.symbol, row.venue_a, row.venue_b)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {
                "symbol": row.symbol,
                "venue_a": row.venue_a,
                "venue_b": row.venue_b,
                "spread_bps": float(row.spread_bps),
                "net_bps": float(row.net_bps) if row.net_bps is not None else None,
                "source": row.source or "ingest",
                "replay": row.replay,
                "captured_at": iso(row.captured_at),
            }
        )
        if len(out) >= 200:
            break
    return out


def exchange_spreads(call: ProductCall) -> dict[str, Any]:
    prov = Provenance(
        method="per symbol, every ordered pair of venues' book tops (buy at one's ask, sell at the "
        "other's bid); the best pair by the gap net of both taker fees, in bps of the buy price",
        max_age=BOOK_MAX_AGE,
    )
    quotes = quotes_fresh(seen_since=since(BOOK_MAX_AGE))
    if not quotes:
        raise ProductFailed("no exchange book tops newer than 5 minutes; nothing was charged")
    for q in quotes:
        prov.add(source=q.source, venue=q.exchange, replay=q.replay, as_of=q.at)
    fresh_required(prov, "book tops")
    by_symbol: dict[str, list[Quote]] = {}
    for q in quotes:
        by_symbol.setdefault(q.symbol, []).append(q)
    rows = []
    for gap in best_gaps(quotes):
        net = gap.net_bps
        rows.append(
            {
                "symbol": gap.symbol,
                "venues": len(by_symbol[gap.symbol]),
                "buy": {
                    "venue": gap.buy.exchange,
                    "price": _price(gap.buy.ask),
                    "size": _r(gap.buy.ask_size, 8),
                    "taker_fee_bps": _r(gap.buy_fee_bps, 3),
                },
                "sell": {
                    "venue": gap.sell.exchange,
                    "price": _price(gap.sell.bid),
                    "size": _r(gap.sell.bid_size, 8),
                    "taker_fee_bps": _r(gap.sell_fee_bps, 3),
                },
                "gross_bps": _rf(gap.gross_bps, 3),
                "net_bps": _r(net, 3),
                "crossed": gap.gross_bps > 0,
                "actionable": net is not None and net > 0,
                "quotes": [_quote_out(q) for q in by_symbol[gap.symbol]],
            }
        )
    snapshot_rows = _snapshot_latest()
    return {
        "symbols": len(rows),
        "alert_bps": float(settings.PAIR_ARB_ALERT_BPS),
        "spreads": rows,
        "fees": _fees_out([q.exchange for q in quotes]),
        "snapshot": snapshot_rows,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="exchange_spreads",
        path="/exchange-spreads",
        headline="Structural spread radar: cross-venue book-top gaps per symbol, gross and net of taker fees",
        price="0.05",
        family="trading",
        product_type=EXECUTION_INTELLIGENCE,
        rank=60,
        session_callable=True,
        credit_routes=(
            CreditRoute(
                route="api/a2a/exchange-spreads",
                operation_id="exchange_spreads",
                summary="Structural spread radar",
            ),
            # The earlier name of the radar: the same content (its `snapshot` is the stored
            # readings the old route served), with Deprecation and Link headers.
            CreditRoute(
                route="api/a2a/spread-snapshot",
                operation_id="spread_snapshot",
                summary="Spread snapshot (deprecated: use exchange-spreads)",
                deprecated=True,
                successor="/api/a2a/exchange-spreads",
            ),
        ),
        run=exchange_spreads,
        output=ExchangeSpreadsOut,
        pure=True,
        available=_fresh_markets,
    )
)


# === pair arbitrage ============================================================================


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


# === DCA routing ===============================================================================


class DcaParams(QueryModel):
    symbol: Symbol = "BTC/USDT"
    notional_usdc: Notional = 1000
    days: Annotated[int, Field(ge=1, le=365, description="how long to accumulate")] = 30
    interval_hours: Annotated[int, Field(ge=1, le=720, description="hours between buys")] = 24

    @model_validator(mode="after")
    def _few_enough_buys(self) -> DcaParams:
        if self.buys > DCA_MAX_BUYS:
            raise ValueError(f"days x 24 / interval_hours gives more than {DCA_MAX_BUYS} buys")
        return self

    @property
    def buys(self) -> int:
        return max(1, self.days * 24 // self.interval_hours)


class DcaBuyOut(BaseModel):
    n: int
    at: str = Field(description="ISO 8601 UTC")
    amount_atomic: int = Field(
        description="USDC atomic units (6 decimals); the buys add up to the notional exactly"
    )
    amount_usdc: str = Field(description="the same, as an exact decimal")


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


class DcaOut(Provenanced):
    symbol: str
    notional_usdc: float
    buys: int
    interval_hours: int
    schedule: list[DcaBuyOut]
    consolidated_mid: float
    venues: list[VenueCostOut] = Field(description="cheapest first (all-in cost of one buy)")
    recommended_venue: str | None
    est_total_cost_usdc: float | None = Field(
        description="the all-in cost of every buy at the recommended venue, at today's book"
    )


def _venue_costs(
    books: Sequence[Book], notional: float, side: Side
) -> tuple[float, list[dict[str, Any]]]:
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


def dca_routing_desk(call: ProductCall) -> dict[str, Any]:
    params = cast(DcaParams, call.params)
    prov = Provenance(
        method="buys of equal atomic USDC every interval_hours; each venue's order book walked for one "
        "buy: average price plus taker fee against the consolidated mid (price premium + half spread "
        "+ depth slippage + fee), cheapest first",
        max_age=BOOK_MAX_AGE,
    )
    books = _books_for(params.symbol, prov)
    total = round(params.notional_usdc * USDC_ATOMIC)
    amounts = slices_atomic(total, params.buys)
    start = timezone.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    step = timedelta(hours=params.interval_hours)
    schedule = [
        {"n": i + 1, "at": iso(start + step * i), "amount_atomic": a, "amount_usdc": usdc_text(a)}
        for i, a in enumerate(amounts)
    ]
    cmid, venues = _venue_costs(books, max(amounts) / USDC_ATOMIC, "buy")
    best = venues[0] if venues and venues[0]["all_in_cost_bps"] is not None else None
    return {
        "symbol": params.symbol,
        "notional_usdc": params.notional_usdc,
        "buys": params.buys,
        "interval_hours": params.interval_hours,
        "schedule": schedule,
        "consolidated_mid": _price(cmid),
        "venues": venues,
        "recommended_venue": best["venue"] if best else None,
        "est_total_cost_usdc": _r(params.notional_usdc * best["all_in_cost_bps"] / BPS, 4)
        if best
        else None,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="dca_routing_desk",
        path="/trading/dca-routing-desk",
        headline="DCA routing desk: slice schedule and venue routing for accumulation",
        price="0.12",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=25,
        session_callable=True,
        run=dca_routing_desk,
        params=DcaParams,
        output=DcaOut,
        price_for=_known_symbol,
        available=_fresh_books,
    )
)


# === funding hedge =============================================================================


class CarryOut(BaseModel):
    venue: str
    perp: str
    spot: str | None = Field(description="the venue's spot market of the same base, when ingested")
    rate: float = Field(description="the funding rate of the current period (longs pay shorts when positive)")
    period_hours: float
    annualized_pct: float
    legs: Literal["long spot, short perp", "short spot, long perp"]
    basis_bps: float | None = Field(description="perp mark against the venue's spot mid")
    round_trip_fee_bps: float | None = Field(description="four taker legs: open and close spot and perp")
    breakeven_days: float | None


class CrossCarryOut(BaseModel):
    base: str
    short_venue: str = Field(description="short the perp here (the higher funding: receive it)")
    long_venue: str = Field(description="long the perp here (the lower funding)")
    short_perp: str
    long_perp: str
    short_annualized_pct: float
    long_annualized_pct: float
    differential_annualized_pct: float = Field(description="what the pair collects a year, before fees")
    round_trip_fee_bps: float | None
    breakeven_days: float | None


class FundingHedgeOut(Provenanced):
    cross_venue: list[CrossCarryOut] = Field(description="largest funding differential first")
    cash_and_carry: list[CarryOut] = Field(description="largest |annualized funding| first")
    fees: list[FeeOut]


def _funding_latest() -> list[FundingRate]:
    rows = FundingRate.objects.filter(observed_at__gte=since(FUNDING_MAX_AGE)).order_by(
        "exchange", "symbol", "-observed_at", "-funding_at"
    )
    latest: dict[tuple[str, str], FundingRate] = {}
    for row in rows:
        latest.setdefault((row.exchange, row.symbol), row)
    return list(latest.values())


def _breakeven(fee_bps: float | None, annualized_pct: float) -> float | None:
    daily_bps = abs(annualized_pct) * 100 / 365
    if fee_bps is None or daily_bps <= 0:
        return None
    return _r(fee_bps / daily_bps, 2)


def funding_hedge_desk(call: ProductCall) -> dict[str, Any]:
    prov = Provenance(
        method="latest funding rate per venue perpetual, annualized as rate x periods a year (period "
        "from the venue's funding times, else 8 h); cash-and-carry per venue, cross-venue carry = short "
        "the higher-funding perp, long the lower; breakeven = round-trip taker fees / daily carry",
        max_age=FUNDING_MAX_AGE,
    )
    readings = _funding_latest()
    if not readings:
        raise ProductFailed("no funding rates newer than 30 minutes; nothing was charged")
    for f in readings:
        prov.add(source=f.source, venue=f.exchange, replay=f.replay, as_of=f.observed_at)
    fresh_required(prov, "funding rates")
    spots = {
        (q.exchange, q.symbol): q
        for q in quotes_fresh(
            seen_since=since(BOOK_MAX_AGE), symbols={f.symbol.split(":")[0] for f in readings}
        )
    }
    carries: list[dict[str, Any]] = []
    by_base: dict[str, list[tuple[FundingRate, float]]] = {}
    for f in readings:
        hours = funding_hours(f.funding_at, f.next_funding_at)
        rate = float(f.rate)
        annual = funding_annualized_pct(rate, hours)
        spot_symbol = f.symbol.split(":")[0]
        spot = spots.get((f.exchange, spot_symbol))
        taker = taker_bps(f.exchange)
        basis = None
        if spot is not None and f.mark_price is not None:
            basis = (float(f.mark_price) - spot.mid) / spot.mid * BPS
        fee = 4 * taker if taker is not None else None
        carries.append(
            {
                "venue": f.exchange,
                "perp": f.symbol,
                "spot": spot_symbol if spot is not None else None,
                "rate": rate,
                "period_hours": _rf(hours, 3),
                "annualized_pct": _rf(annual, 4),
                "legs": "long spot, short perp" if rate >= 0 else "short spot, long perp",
                "basis_bps": _r(basis, 3),
                "round_trip_fee_bps": _r(fee, 3),
                "breakeven_days": _breakeven(fee, annual),
            }
        )
        by_base.setdefault(spot_symbol.split("/")[0], []).append((f, annual))
    carries.sort(key=lambda c: abs(c["annualized_pct"]), reverse=True)
    cross: list[dict[str, Any]] = []
    for base, legs in by_base.items():
        for i, (fa, aa) in enumerate(legs):
            for fb, ab in legs[i + 1 :]:
                if fa.exchange == fb.exchange:
                    continue
                (hi, hi_ann), (lo, lo_ann) = ((fa, aa), (fb, ab)) if aa >= ab else ((fb, ab), (fa, aa))
                ta, tb = taker_bps(hi.exchange), taker_bps(lo.exchange)
                fee = 2 * (ta + tb) if ta is not None and tb is not None else None
                diff = hi_ann - lo_ann
                cross.append(
                    {
                        "base": base,
                        "short_venue": hi.exchange,
                        "long_venue": lo.exchange,
                        "short_perp": hi.symbol,
                        "long_perp": lo.symbol,
                        "short_annualized_pct": _rf(hi_ann, 4),
                        "long_annualized_pct": _rf(lo_ann, 4),
                        "differential_annualized_pct": _rf(diff, 4),
                        "round_trip_fee_bps": _r(fee, 3),
                        "breakeven_days": _breakeven(fee, diff),
                    }
                )
    cross.sort(key=lambda c: c["differential_annualized_pct"], reverse=True)
    return {
        "cross_venue": cross[:50],
        "cash_and_carry": carries[:50],
        "fees": _fees_out([f.exchange for f in readings]),
        **prov.out(),
    }


def _fresh_funding() -> tuple[bool, str]:
    if FundingRate.objects.filter(observed_at__gte=since(FUNDING_MAX_AGE)).exists():
        return True, ""
    return False, "no funding rates newer than 30 minutes"


register(
    ProductSpec(
        sku="funding_hedge_desk",
        path="/trading/funding-hedge-desk",
        headline="Funding hedge desk: funding-rate carry and hedge legs",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=26,
        session_callable=True,
        teaser="funding-hedge-desk",
        teasers=(
            TeaserSpec(
                name="funding-hedge-desk",
                title="Funding hedge desk",
                summary="Funding-rate carry opportunities with their hedge legs.",
                highlights=("carry", "hedge legs"),
            ),
        ),
        run=funding_hedge_desk,
        output=FundingHedgeOut,
        pure=True,
        available=_fresh_funding,
    )
)


# === intent solver / tokenized auto-route =====================================================


class IntentParams(QueryModel):
    symbol: Symbol = "BTC/USDT"
    side: Literal["buy", "sell"] = "buy"
    notional_usdc: Notional = 10000


class RouteLegOut(BaseModel):
    venue: str
    symbol: str
    notional_quote: float
    share_pct: float
    base_qty: float
    avg_price: float
    taker_fee_bps: float
    fee_quote: float
    levels_used: int


class SingleVenueOut(BaseModel):
    venue: str
    symbol: str
    avg_price: float | None
    cost_bps: float | None = Field(description="all-in (price impact + fee) against the reference mid")
    unfilled_quote: float
    complete: bool


class RouteOut(BaseModel):
    reference_mid: float = Field(description="mid of the best bid and best ask across the venues")
    legs: list[RouteLegOut]
    split: bool = Field(description="more than one venue is cheaper than any single one")
    filled_quote: float
    filled_base: float
    unfilled_quote: float = Field(description="notional the ingested books could not absorb")
    expected_avg_price: float | None = Field(description="before fees")
    all_in_avg_price: float | None = Field(description="with the taker fees in")
    cost_bps: float | None = Field(description="all-in against the reference mid; positive costs")
    fees_quote: float
    best_single_venue: SingleVenueOut | None
    split_saves_bps: float | None = Field(description="the best single venue's cost minus the split's")
    alternatives: list[SingleVenueOut]


class IntentOut(Provenanced, RouteOut):
    symbol: str
    side: Literal["buy", "sell"]
    notional_usdc: float


def _route(books: Sequence[Book], side: Side, notional: float) -> dict[str, Any]:
    fees = {b.exchange: f for b in books if (f := fees_for(b.exchange).taker) is not None}
    cmid = consolidated_mid(books)
    if cmid is None or not fees:
        raise ProductFailed("no order book with both sides and a known fee; nothing was charged")
    route = route_best(books, side=side, notional=notional, fees=fees)
    symbols = {b.exchange: b.symbol for b in books}
    singles: list[tuple[float | None, dict[str, Any]]] = []
    for book in books:
        if book.exchange not in fees:
            continue
        single = route_best([book], side=side, notional=notional, fees=fees)
        complete = single.unfilled_quote <= notional * 1e-9
        single_cost = single.cost_bps(cmid) if complete else None
        singles.append(
            (
                single_cost,
                {
                    "venue": book.exchange,
                    "symbol": book.symbol,
                    "avg_price": _price(single.avg_price),
                    "cost_bps": _r(single_cost, 3),
                    "unfilled_quote": _rf(single.unfilled_quote, 2),
                    "complete": complete,
                },
            )
        )
    # Cheapest complete fill first; venues whose book cannot absorb the notional last.
    singles.sort(key=lambda x: (x[0] is None, x[0] if x[0] is not None else 0.0))
    best_cost, best = singles[0] if singles and singles[0][0] is not None else (None, None)
    cost = route.cost_bps(cmid)
    filled = route.filled_quote
    return {
        "reference_mid": _price(cmid),
        "legs": [
            {
                "venue": leg.exchange,
                "symbol": symbols[leg.exchange],
                "notional_quote": _rf(leg.quote, 2),
                "share_pct": _rf(leg.quote / filled * 100 if filled else 0.0, 2),
                "base_qty": _rf(leg.base, 8),
                "avg_price": _price(leg.avg_price),
                "taker_fee_bps": _rf(fees[leg.exchange] * BPS, 3),
                "fee_quote": _rf(leg.fee_quote, 4),
                "levels_used": leg.levels_used,
            }
            for leg in route.legs
        ],
        "split": len(route.legs) > 1,
        "filled_quote": _rf(filled, 2),
        "filled_base": _rf(route.filled_base, 8),
        "unfilled_quote": _rf(route.unfilled_quote, 2),
        "expected_avg_price": _price(route.avg_price),
        "all_in_avg_price": _price(route.all_in_price),
        "cost_bps": _r(cost, 3),
        "fees_quote": _rf(route.fees_quote, 4),
        "best_single_venue": best,
        "split_saves_bps": _r(best_cost - cost, 3) if best_cost is not None and cost is not None else None,
        "alternatives": [out for _cost, out in singles],
    }


def intent_solver(call: ProductCall) -> dict[str, Any]:
    params = cast(IntentParams, call.params)
    prov = Provenance(
        method="every level of every venue's order book ranked by its price after the venue's taker fee "
        "and taken best first until the notional is filled (the cheapest split); cost against the "
        "consolidated mid",
        max_age=BOOK_MAX_AGE,
    )
    books = _books_for(params.symbol, prov)
    return {
        "symbol": params.symbol,
        "side": params.side,
        "notional_usdc": params.notional_usdc,
        **_route(books, params.side, params.notional_usdc),
        **prov.out(),
    }


register(
    ProductSpec(
        sku="intent_solver_desk",
        path="/trading/intent-solver",
        headline="Intent solver desk: solver quotes for a trading intent",
        price="0.25",
        family="trading",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=16,
        teaser="intent-solver",
        teasers=(
            TeaserSpec(
                name="intent-solver",
                title="Intent solver",
                summary="Solver quotes for a trading intent.",
                highlights=("quotes", "best route"),
            ),
        ),
        run=intent_solver,
        params=IntentParams,
        output=IntentOut,
        price_for=_known_symbol,
        available=_fresh_books,
    )
)


AUTO_ROUTE_NOTICE = (
    "Advice for manual routing only: this service places no orders and holds no funds; check each "
    "venue's book before you trade."
)


class AutoRouteParams(QueryModel):
    symbol: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=40,
            pattern=r"^[A-Za-z0-9]+$",
            description="a tokenized asset of the watchlist (e.g. PAXG); empty for every one",
        ),
        AfterValidator(lambda v: v.upper() if v else v),
    ] = None
    side: Literal["buy", "sell"] = "buy"
    notional_usdc: Notional = 10000


class TokenizedRouteOut(RouteOut):
    asset: str
    name: str
    underlying: str
    listings: int = Field(description="venue markets of the asset (dollar quotes) with a fresh book")


class AutoRouteOut(Provenanced):
    manual_routing_only: Literal[True]
    notice: str
    side: Literal["buy", "sell"]
    notional_usdc: float
    routes: list[TokenizedRouteOut]


def _tokenized_assets(symbol: str | None) -> list[TokenizedAsset]:
    qs = TokenizedAsset.objects.filter(on_watchlist=True)
    if symbol:
        qs = qs.filter(symbol=symbol)
    return list(qs.order_by("symbol"))


def _known_tokenized(call: ProductCall) -> int | None:
    symbol = getattr(call.params, "symbol", None)
    if symbol and not TokenizedAsset.objects.filter(symbol=symbol, on_watchlist=True).exists():
        raise NotFound(f"{symbol} is not a tokenized asset of the watchlist")
    return None


def tokenized_auto_route(call: ProductCall) -> dict[str, Any]:
    params = cast(AutoRouteParams, call.params)
    prov = Provenance(
        method="per tokenized asset, its dollar-quoted listings' order books ranked level by level by "
        "price after each venue's taker fee and taken best first (the cheapest split); advice only",
        max_age=BOOK_MAX_AGE,
    )
    routes = []
    for asset in _tokenized_assets(params.symbol):
        listings = ExchangeMarket.objects.filter(base=asset.symbol).filter(
            Q(quote="USDT") | Q(quote="USDC") | Q(quote="USD")
        )
        books = books_fresh(
            seen_since=since(BOOK_MAX_AGE), symbols=set(listings.values_list("symbol", flat=True))
        )
        if not books:
            continue
        for b in books:
            prov.add(source=b.source, venue=b.exchange, replay=b.replay, as_of=b.at)
        try:
            route = _route(books, params.side, params.notional_usdc)
        except ProductFailed:
            continue
        routes.append(
            {
                "asset": asset.symbol,
                "name": asset.name,
                "underlying": asset.underlying,
                "listings": len(books),
                **route,
            }
        )
    if not routes:
        raise ProductFailed("no order book of a tokenized asset newer than 5 minutes; nothing was charged")
    fresh_required(prov, "order books")
    return {
        "manual_routing_only": True,
        "notice": AUTO_ROUTE_NOTICE,
        "side": params.side,
        "notional_usdc": params.notional_usdc,
        "routes": routes,
        **prov.out(),
    }


def _fresh_tokenized_books() -> tuple[bool, str]:
    bases = list(TokenizedAsset.objects.filter(on_watchlist=True).values_list("symbol", flat=True))
    symbols = ExchangeMarket.objects.filter(base__in=bases).values_list("symbol", flat=True)
    if OrderBook.objects.filter(observed_at__gte=since(BOOK_MAX_AGE), symbol__in=symbols).exists():
        return True, ""
    return False, "no order books of tokenized assets newer than 5 minutes"


register(
    ProductSpec(
        sku="tokenized_auto_route",
        path="/tokenized/auto-route",
        headline="Tokenized auto-route: venue routing for tokenized assets (manual routing only)",
        price="0.2",
        family="tokenized",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=18,
        run=tokenized_auto_route,
        params=AutoRouteParams,
        output=AutoRouteOut,
        price_for=_known_tokenized,
        available=_fresh_tokenized_books,
    )
)


# === DeFi yield scout ==========================================================================


class YieldParams(QueryModel):
    chain: Annotated[
        str | None, Field(min_length=1, max_length=64, description="only this chain (any case)")
    ] = None
    stablecoin: Annotated[bool, Field(description="stablecoin pools only")] = False
    min_tvl_usd: Annotated[float, Field(ge=0, le=1e13, description="TVL floor in USD")] = 1_000_000
    limit: int = Limit(20)


class YieldPoolOut(BaseModel):
    rank: int
    pool_id: str
    chain: str
    project: str
    symbol: str
    tvl_usd: float
    apy: float
    apy_base: float | None
    apy_reward: float | None
    reward_share: float = Field(description="share of the APY paid in reward tokens, 0-1")
    apy_mean_30d: float | None
    apy_vs_30d_mean: float | None = Field(description="today's APY over its 30-day mean")
    stablecoin: bool
    il_risk: bool = Field(description="exposed to impermanent loss (DefiLlama's ilRisk)")
    exposure: str
    outlier: bool
    sustainable: bool
    flags: list[Literal["reward_heavy", "above_30d_mean", "outlier", "il_risk", "no_base_yield"]]
    risk_adjusted_apy: float


class YieldScoutOut(Provenanced):
    chain: str | None
    stablecoin_only: bool
    min_tvl_usd: float
    matched: int = Field(description="pools that pass the filters (the first `limit` are listed)")
    pools: list[YieldPoolOut]


def _yield_row(p: YieldPool) -> dict[str, Any] | None:
    apy = p.apy
    if apy is None or not math.isfinite(apy):
        return None
    base = p.apy_base if p.apy_base is not None and math.isfinite(p.apy_base) else None
    reward = p.apy_reward if p.apy_reward is not None and math.isfinite(p.apy_reward) else None
    share = (reward or 0.0) / apy if apy > 0 else 0.0
    mean = p.apy_mean_30d if p.apy_mean_30d is not None and p.apy_mean_30d > 0 else None
    vs_mean = apy / mean if mean else None
    il = p.il_risk == "yes"
    flags = []
    if share > YIELD_REWARD_HEAVY:
        flags.append("reward_heavy")
    if vs_mean is not None and vs_mean >= YIELD_ABOVE_MEAN:
        flags.append("above_30d_mean")
    if p.outlier:
        flags.append("outlier")
    if il:
        flags.append("il_risk")
    if not base and reward:
        flags.append("no_base_yield")
    estimate = (base if base is not None else apy - (reward or 0.0)) + YIELD_REWARD_HAIRCUT * (reward or 0.0)
    if mean is not None:
        estimate = min(estimate, mean)
    adjusted = estimate * (YIELD_IL_FACTOR if il else 1.0) * (YIELD_OUTLIER_FACTOR if p.outlier else 1.0)
    return {
        "pool_id": p.pool_id,
        "chain": p.chain,
        "project": p.project,
        "symbol": p.symbol,
        "tvl_usd": float(p.tvl_usd),
        "apy": _rf(apy, 4),
        "apy_base": _r(base, 4),
        "apy_reward": _r(reward, 4),
        "reward_share": _rf(share, 4),
        "apy_mean_30d": _r(mean, 4),
        "apy_vs_30d_mean": _r(vs_mean, 4),
        "stablecoin": p.stablecoin,
        "il_risk": il,
        "exposure": p.exposure,
        "outlier": p.outlier,
        "sustainable": not ({"reward_heavy", "above_30d_mean", "outlier"} & set(flags)),
        "flags": flags,
        "risk_adjusted_apy": _rf(adjusted, 4),
    }


def defi_yield_scout(call: ProductCall) -> dict[str, Any]:
    params = cast(YieldParams, call.params)
    prov = Provenance(
        method=f"risk-adjusted APY = min(base + {YIELD_REWARD_HAIRCUT} x reward, 30-day mean APY) x "
        f"{YIELD_IL_FACTOR} if exposed to impermanent loss x {YIELD_OUTLIER_FACTOR} if an outlier; "
        f"unsustainable when rewards pay over {YIELD_REWARD_HEAVY:.0%} of the APY, the APY is "
        f"{YIELD_ABOVE_MEAN}x its 30-day mean or more, or DefiLlama flags an outlier; ranked by "
        "risk-adjusted APY, then TVL",
        max_age=YIELD_MAX_AGE,
    )
    fresh = YieldPool.objects.filter(observed_at__gte=since(YIELD_MAX_AGE))
    newest = fresh.order_by("-observed_at").first()
    if newest is None:
        raise ProductFailed("no DeFi yield pools ingested in the last 3 hours; nothing was charged")
    qs = fresh.filter(tvl_usd__gte=params.min_tvl_usd)
    if params.chain:
        qs = qs.filter(chain__iexact=params.chain)
    if params.stablecoin:
        qs = qs.filter(stablecoin=True)
    rows = [r for p in qs for r in [_yield_row(p)] if r is not None]
    replays = {bool(x) for x in fresh.values_list("replay", flat=True).distinct()}
    for replay in replays:
        part = fresh.filter(replay=replay)
        latest = part.order_by("-observed_at").first()
        prov.add(
            source=newest.source,
            replay=replay,
            as_of=latest.observed_at if latest else None,
            items=part.count(),
        )
    fresh_required(prov, "DeFi yields")
    rows.sort(key=lambda r: (-r["risk_adjusted_apy"], -r["tvl_usd"], r["pool_id"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return {
        "chain": params.chain,
        "stablecoin_only": params.stablecoin,
        "min_tvl_usd": params.min_tvl_usd,
        "matched": len(rows),
        "pools": rows[: params.limit],
        **prov.out(),
    }


def _fresh_yields() -> tuple[bool, str]:
    if YieldPool.objects.filter(observed_at__gte=since(YIELD_MAX_AGE)).exists():
        return True, ""
    return False, "no DeFi yield pools ingested in the last 3 hours"


register(
    ProductSpec(
        sku="defi_yield_scout",
        path="/defi/yield-scout",
        headline="DeFi yield scout: ranked yields with risk notes",
        price="0.1",
        family="defi",
        tier="C",
        hero=True,
        rank=17,
        teaser="defi-yield-scout",
        teasers=(
            TeaserSpec(
                name="defi-yield-scout",
                title="DeFi yield scout",
                summary="Yields across lending and liquidity venues, ranked with risk notes.",
                highlights=("ranked yields", "risk notes per venue"),
            ),
            TeaserSpec(
                name="exchange-earn-desk",
                title="Exchange earn desk",
                summary="Earn products across exchanges and on-chain venues, compared.",
                highlights=("rates", "lockups"),
            ),
        ),
        run=defi_yield_scout,
        params=YieldParams,
        output=YieldScoutOut,
        available=_fresh_yields,
    )
)


# === execution previews (X-API-Key) ===========================================================


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
