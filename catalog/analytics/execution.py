"""Execution maths over the ingested books (catalog.models.ExchangeMarket tops, OrderBook depth)
and funding readings: venue fees, walking a book for a notional, cross-venue gaps net of both
taker fees, the executable size of a gap, best execution split across venues, annualized
funding, atomic TWAP slices and correlated-pair z-scores.

Conventions: prices in the quote currency, sizes in the base asset, notionals in the quote
currency (USDT/USDC/USD taken at par), basis points of the price paid (for a gap: of the buy
price, so a gap is the return on the capital spent). Costs are positive when they cost.

Fees: the venue's public taker/maker rate from ccxt's static exchange description
(`exchange.fees["trading"]`, no network: the base tier a keyless caller pays), unless
EXCHANGE_TAKER_FEES / EXCHANGE_MAKER_FEES ("id=0.001,...") set the venue's rate."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from django.conf import settings
from django.utils import timezone

from catalog.analytics.series import Series
from catalog.models import ExchangeMarket, OrderBook

Side = Literal["buy", "sell"]
Level = tuple[float, float]  # (price, size in base)

BPS = 10_000.0
# The perpetual funding period when a reading does not tell it (the usual 8 h of the majors).
DEFAULT_FUNDING_HOURS = 8.0


# --- fees ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fees:
    exchange: str
    taker: float | None  # a fraction of the notional (0.001 = 10 bps); None: unknown venue
    maker: float | None
    source: Literal["setting", "ccxt", "unknown"]

    @property
    def taker_bps(self) -> float | None:
        return None if self.taker is None else self.taker * BPS

    @property
    def maker_bps(self) -> float | None:
        return None if self.maker is None else self.maker * BPS


@lru_cache(maxsize=64)
def _ccxt_fees(exchange_id: str) -> tuple[float | None, float | None]:
    """ccxt's static description of the venue's spot trading fees (no request is made)."""
    import ccxt

    if exchange_id not in ccxt.exchanges:
        return None, None
    trading = getattr(ccxt, exchange_id)().fees.get("trading") or {}
    if trading.get("percentage") is False:  # a flat amount per trade, not a rate: not comparable
        return None, None
    taker, maker = trading.get("taker"), trading.get("maker")
    return (
        float(taker) if isinstance(taker, int | float) else None,
        float(maker) if isinstance(maker, int | float) else None,
    )


def fees_for(exchange_id: str) -> Fees:
    taker_set = dict(settings.EXCHANGE_TAKER_FEES).get(exchange_id)
    maker_set = dict(settings.EXCHANGE_MAKER_FEES).get(exchange_id)
    taker, maker = _ccxt_fees(exchange_id)
    if taker_set is not None or maker_set is not None:
        return Fees(
            exchange=exchange_id,
            taker=float(taker_set) if taker_set is not None else taker,
            maker=float(maker_set) if maker_set is not None else maker,
            source="setting",
        )
    return Fees(
        exchange=exchange_id, taker=taker, maker=maker, source="ccxt" if taker is not None else "unknown"
    )


def taker_bps(exchange_id: str) -> float | None:
    return fees_for(exchange_id).taker_bps


# --- books ----------------------------------------------------------------------------------


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


# --- cross-venue gaps -------------------------------------------------------------------------


def gap_bps(*, buy_ask: float, sell_bid: float) -> float:
    """Buying at one venue's ask and selling at another's bid: the gross return in bps of
    the buy price (negative while the books do not cross)."""
    return (sell_bid - buy_ask) / buy_ask * BPS


@dataclass(frozen=True)
class Gap:
    symbol: str
    buy: Quote  # buy at this venue's ask
    sell: Quote  # sell at this venue's bid
    gross_bps: float
    buy_fee_bps: float | None
    sell_fee_bps: float | None

    @property
    def net_bps(self) -> float | None:
        """The gap net of both taker fees; None when a venue's fee is unknown."""
        if self.buy_fee_bps is None or self.sell_fee_bps is None:
            return None
        return self.gross_bps - self.buy_fee_bps - self.sell_fee_bps

    @property
    def rank_key(self) -> tuple[bool, float]:
        net = self.net_bps
        return (net is not None, net if net is not None else self.gross_bps)


def venue_gaps(quotes: Sequence[Quote]) -> list[Gap]:
    """Every ordered pair of distinct venues quoting the same symbol, best (net) first."""
    out = []
    for a in quotes:
        for b in quotes:
            if a.exchange == b.exchange or a.symbol != b.symbol:
                continue
            out.append(
                Gap(
                    symbol=a.symbol,
                    buy=a,
                    sell=b,
                    gross_bps=gap_bps(buy_ask=a.ask, sell_bid=b.bid),
                    buy_fee_bps=taker_bps(a.exchange),
                    sell_fee_bps=taker_bps(b.exchange),
                )
            )
    out.sort(key=lambda g: g.rank_key, reverse=True)
    return out


def best_gaps(quotes: Sequence[Quote]) -> list[Gap]:
    """Per symbol quoted on two venues or more, its best venue pair (by the gap net of fees),
    best first."""
    by_symbol: dict[str, list[Quote]] = {}
    for q in quotes:
        by_symbol.setdefault(q.symbol, []).append(q)
    best = [gaps[0] for qs in by_symbol.values() if (gaps := venue_gaps(qs))]
    best.sort(key=lambda g: g.rank_key, reverse=True)
    return best


@dataclass(frozen=True)
class ArbSize:
    """How much of a cross-venue gap the books can carry: buy the asks of one venue and sell
    the bids of the other for as long as the next unit still earns after both taker fees."""

    base: float
    buy_quote: float  # spent at the buy venue (before its fee)
    sell_quote: float  # received at the sell venue (before its fee)
    profit_quote: float  # after both fees
    buy_levels: int
    sell_levels: int

    @property
    def net_bps(self) -> float | None:
        return self.profit_quote / self.buy_quote * BPS if self.buy_quote > 0 else None


def arb_size(asks: Sequence[Level], bids: Sequence[Level], *, buy_fee: float, sell_fee: float) -> ArbSize:
    i = j = 0
    ask_left = asks[0][1] if asks else 0.0
    bid_left = bids[0][1] if bids else 0.0
    base = spent = got = 0.0
    touched_asks: set[int] = set()
    touched_bids: set[int] = set()
    while i < len(asks) and j < len(bids):
        ask, bid = asks[i][0], bids[j][0]
        if bid * (1 - sell_fee) <= ask * (1 + buy_fee):
            break  # the next unit loses after fees
        q = min(ask_left, bid_left)
        touched_asks.add(i)
        touched_bids.add(j)
        base += q
        spent += q * ask
        got += q * bid
        ask_left -= q
        bid_left -= q
        if ask_left <= 1e-15:
            i += 1
            ask_left = asks[i][1] if i < len(asks) else 0.0
        if bid_left <= 1e-15:
            j += 1
            bid_left = bids[j][1] if j < len(bids) else 0.0
    return ArbSize(
        base=base,
        buy_quote=spent,
        sell_quote=got,
        profit_quote=got * (1 - sell_fee) - spent * (1 + buy_fee),
        buy_levels=len(touched_asks),
        sell_levels=len(touched_bids),
    )


# --- best execution across venues ----------------------------------------------------------


@dataclass(frozen=True)
class Leg:
    exchange: str
    quote: float  # notional traded on this venue (before its fee)
    base: float
    fee_quote: float
    levels_used: int

    @property
    def avg_price(self) -> float:
        return self.quote / self.base if self.base > 0 else 0.0


@dataclass
class Route:
    side: Side
    requested: float
    legs: list[Leg] = field(default_factory=list)

    @property
    def filled_quote(self) -> float:
        return sum(leg.quote for leg in self.legs)

    @property
    def filled_base(self) -> float:
        return sum(leg.base for leg in self.legs)

    @property
    def fees_quote(self) -> float:
        return sum(leg.fee_quote for leg in self.legs)

    @property
    def unfilled_quote(self) -> float:
        return max(self.requested - self.filled_quote, 0.0)

    @property
    def avg_price(self) -> float | None:
        base = self.filled_base
        return self.filled_quote / base if base > 0 else None

    @property
    def all_in_price(self) -> float | None:
        """The average price with the fees in: paid per unit on a buy, kept per unit on a sell."""
        base = self.filled_base
        if base <= 0:
            return None
        signed = self.fees_quote if self.side == "buy" else -self.fees_quote
        return (self.filled_quote + signed) / base

    def cost_bps(self, reference: float) -> float | None:
        price = self.all_in_price
        if price is None or reference <= 0:
            return None
        diff = price - reference if self.side == "buy" else reference - price
        return diff / reference * BPS


def route_best(books: Sequence[Book], *, side: Side, notional: float, fees: Mapping[str, float]) -> Route:
    """Fill `notional` across the venues' books at the best price after each venue's taker
    fee: every level of every book is ranked by its fee-inclusive price and taken best first
    (with fees proportional to the notional this is the cheapest split)."""
    ranked: list[tuple[float, int, str, float, float]] = []
    for book in books:
        fee = fees.get(book.exchange)
        if fee is None:
            continue  # an unknown fee cannot be compared
        for depth, (price, size) in enumerate(book.side(side)):
            effective = price * (1 + fee) if side == "buy" else -price * (1 - fee)
            ranked.append((effective, depth, book.exchange, price, size))
    ranked.sort()
    remaining = notional
    per: dict[str, list[float]] = {}  # exchange -> [quote, base, levels]
    for _effective, _depth, exchange, price, size in ranked:
        if remaining <= notional * 1e-12:
            break
        take = min(remaining, price * size)
        acc = per.setdefault(exchange, [0.0, 0.0, 0.0])
        acc[0] += take
        acc[1] += take / price
        acc[2] += 1
        remaining -= take
    route = Route(side=side, requested=notional)
    for exchange, (quote, base, used) in sorted(per.items(), key=lambda kv: -kv[1][0]):
        route.legs.append(
            Leg(
                exchange=exchange,
                quote=quote,
                base=base,
                fee_quote=quote * fees[exchange],
                levels_used=int(used),
            )
        )
    return route


def consolidated_mid(books: Sequence[Book]) -> float | None:
    """The mid of the best bid and the best ask across venues (the reference a cost is
    measured against)."""
    bids = [b.bids[0][0] for b in books if b.bids]
    asks = [b.asks[0][0] for b in books if b.asks]
    if not bids or not asks:
        return None
    return (max(bids) + min(asks)) / 2


# --- funding --------------------------------------------------------------------------------


def funding_hours(funding_at: datetime | None, next_funding_at: datetime | None) -> float:
    """The funding period: the distance between the reading's funding time and the next one
    when the venue gives both (okx), else DEFAULT_FUNDING_HOURS."""
    if funding_at is not None and next_funding_at is not None and next_funding_at > funding_at:
        hours = (next_funding_at - funding_at).total_seconds() / 3600
        if 0.5 <= hours <= 24:
            return hours
    return DEFAULT_FUNDING_HOURS


def funding_annualized_pct(rate: float, hours: float) -> float:
    """A per-period funding rate as a simple annual percentage (periods a year x rate)."""
    return rate * (24.0 / hours) * 365.0 * 100.0


# --- TWAP / DCA slicing ---------------------------------------------------------------------

USDC_ATOMIC = 1_000_000


def slices_atomic(total_atomic: int, n: int) -> list[int]:
    """`total_atomic` split in `n` near-equal integer parts that add up exactly (the first
    parts carry the remainder, one atomic unit each)."""
    share, rest = divmod(total_atomic, n)
    return [share + (1 if i < rest else 0) for i in range(n)]


def usdc_text(atomic: int) -> str:
    """Atomic USDC as an exact decimal string (6 places)."""
    return str((Decimal(atomic) / USDC_ATOMIC).quantize(Decimal("0.000001")))


# --- correlated pairs -----------------------------------------------------------------------


@dataclass(frozen=True)
class PairZ:
    a: str
    b: str
    correlation: float  # of the 1h log returns
    beta: float  # log(a) = alpha + beta x log(b)
    zscore: float  # of the newest residual against the window's residuals
    bars: int
    half_life_bars: float | None  # mean reversion speed of the residual (AR(1)), None if not reverting


def pair_zscores(series: Sequence[Series], *, min_corr: float, min_bars: int) -> list[PairZ]:
    """Pairs of series whose log returns correlate at `min_corr` or more over their common
    bars, with the z-score of the newest residual of log(a) regressed on log(b) (numpy:
    corrcoef, polyfit), strongest dislocation first."""
    if len(series) < 2:
        return []
    common = set(series[0].times)
    for s in series[1:]:
        common &= set(s.times)
    times = sorted(common)
    if len(times) < min_bars:
        return []
    cols = []
    for s in series:
        index = {t: i for i, t in enumerate(s.times)}
        cols.append(np.log(np.array([s.close[index[t]] for t in times], dtype=np.float64)))
    logs = np.vstack(cols)
    returns = np.diff(logs, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(returns)
    out = []
    for i in range(len(series)):
        for j in range(i + 1, len(series)):
            c = float(corr[i, j])
            if not math.isfinite(c) or c < min_corr:
                continue
            beta, alpha = np.polyfit(logs[j], logs[i], 1)
            resid = logs[i] - (alpha + beta * logs[j])
            sd = float(np.std(resid, ddof=1))
            if sd <= 0 or not math.isfinite(sd):
                continue
            z = float((resid[-1] - np.mean(resid)) / sd)
            phi = float(np.polyfit(resid[:-1], resid[1:], 1)[0]) if len(resid) > 2 else 1.0
            half_life = math.log(0.5) / math.log(phi) if 0 < phi < 1 else None
            out.append(
                PairZ(
                    a=series[i].symbol,
                    b=series[j].symbol,
                    correlation=c,
                    beta=float(beta),
                    zscore=z,
                    bars=len(times),
                    half_life_bars=half_life,
                )
            )
    out.sort(key=lambda p: abs(p.zscore), reverse=True)
    return out
