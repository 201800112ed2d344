"""Execution delegation, read: positions and PnL from the reported fills, marks from the
ingested prices, and the desks' live fills for the scorecard (registered in catalog's hook).

PnL is FIFO per delegation and symbol: a buy adds a long lot or closes the oldest short lots, a
sell closes the oldest long lots (sells against buys) or opens a short lot; each closed part
realizes size x (exit - entry) for a long lot, size x (entry - exit) for a short one. Fees are
counted apart and subtracted in the net. The open lots are marked at the newest ingested price of
the symbol (the order's venue first: its exchange ticker or its newest candle close)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import Count

from catalog.analytics.series import candle_as_of
from catalog.editorial.track_record import LiveFills
from catalog.models import Candle, ExchangeMarket
from webhooks.models import DelegatedFill

ZERO = Decimal(0)
CANDLE_STEPS = {"1m": timedelta(minutes=1), "1h": timedelta(hours=1)}


@dataclass
class Book:
    """One symbol's FIFO book: open lots (signed size, price) and what closing them realized."""

    lots: deque[tuple[Decimal, Decimal]] = field(default_factory=deque)
    realized: Decimal = ZERO
    fees: Decimal = ZERO

    def apply(self, *, side: str, size: Decimal, price: Decimal, fee: Decimal = ZERO) -> Decimal:
        """Book one fill; returns what it realized."""
        self.fees += fee
        signed = size if side == "buy" else -size
        realized = ZERO
        while signed and self.lots and (self.lots[0][0] > 0) != (signed > 0):
            lot_size, lot_price = self.lots[0]
            matched = min(abs(signed), abs(lot_size))
            direction = 1 if lot_size > 0 else -1
            realized += matched * (price - lot_price) * direction
            remaining = lot_size - direction * matched
            if remaining:
                self.lots[0] = (remaining, lot_price)
            else:
                self.lots.popleft()
            signed += direction * matched
        if signed:
            self.lots.append((signed, price))
        self.realized += realized
        return realized

    @property
    def position(self) -> Decimal:
        return sum((lot[0] for lot in self.lots), ZERO)

    @property
    def avg_entry(self) -> Decimal | None:
        pos = self.position
        if not pos:
            return None
        return sum((s * p for s, p in self.lots), ZERO) / pos

    def unrealized(self, mark: Decimal) -> Decimal:
        return sum((s * (mark - p) for s, p in self.lots), ZERO)


def books_of(fills: Iterable[DelegatedFill]) -> dict[str, Book]:
    books: dict[str, Book] = {}
    for f in sorted(fills, key=lambda x: (x.filled_at, x.id)):
        books.setdefault(f.symbol, Book()).apply(
            side=f.side, size=f.size, price=f.price, fee=Decimal(f.fee_atomic) / 10**6
        )
    return books


@dataclass(frozen=True)
class Mark:
    price: Decimal
    as_of: datetime
    source: str
    venue: str
    replay: bool


def mark_price(symbol: str, venue: str = "") -> Mark | None:
    """The newest ingested price of `symbol`: its exchange ticker (last price) or newest 1m/1h
    candle close, the venue's own when it has one, else any venue's. None when none is stored."""
    marks: list[Mark] = []
    for row in ExchangeMarket.objects.filter(symbol=symbol, last_price__isnull=False).only(
        "exchange", "last_price", "updated_at", "source", "replay"
    ):
        if row.last_price is not None:
            marks.append(
                Mark(
                    row.last_price,
                    row.updated_at,
                    f"ticker:{row.source or 'exchanges'}",
                    row.exchange,
                    row.replay,
                )
            )
    for tf in CANDLE_STEPS:
        rows = Candle.objects.filter(symbol=symbol, timeframe=tf)
        for ex in [venue, ""] if venue else [""]:
            pick = rows.filter(exchange=ex) if ex else rows
            fields = ("exchange", "close", "open_time", "source", "replay", "observed_at")
            c = pick.order_by("-open_time").only(*fields).first()
            if c is not None:
                # An open bar's close time lies ahead: the mark is as of its observation then.
                at = candle_as_of(c.open_time, tf, c.observed_at)
                marks.append(Mark(c.close, at, f"candle {tf}:{c.source}", c.exchange, c.replay))
    if not marks:
        return None
    own = [m for m in marks if m.venue == venue]
    return max(own or marks, key=lambda m: m.as_of)


@dataclass(frozen=True)
class MarketRange:
    """The prices the market traded at around a time: the lowest and highest of the ingested
    bars overlapping the window (the finest timeframe stored) and the tickers updated in it."""

    low: Decimal
    high: Decimal
    source: str


def market_range(symbol: str, at: datetime, window: timedelta) -> MarketRange | None:
    """What `symbol` traded at within `window` of `at`, on any venue (an agent may fill on
    another venue than the desk's): the 1m bars overlapping [at - window, at + window], else the
    1h bars, with any ticker updated in that span. None when nothing ingested covers it."""
    lows: list[Decimal] = []
    highs: list[Decimal] = []
    sources: list[str] = []
    for tf, step in CANDLE_STEPS.items():
        rows = Candle.objects.filter(
            symbol=symbol, timeframe=tf, open_time__lte=at + window, open_time__gt=at - window - step
        ).values_list("low", "high", "exchange", "source")
        bars = list(rows[:500])
        if bars:
            lows += [b[0] for b in bars]
            highs += [b[1] for b in bars]
            sources.append(f"candle {tf}:" + ",".join(sorted({f"{b[2]}/{b[3]}" for b in bars})))
            break
    tickers = ExchangeMarket.objects.filter(
        symbol=symbol, last_price__isnull=False, updated_at__gte=at - window, updated_at__lte=at + window
    ).values_list("last_price", "bid", "ask", "exchange")
    for last, bid, ask, exchange in tickers:
        prices = [p for p in (last, bid, ask) if p is not None and p > 0]
        if prices:
            lows.append(min(prices))
            highs.append(max(prices))
            sources.append(f"ticker:{exchange}")
    lows = [p for p in lows if p > 0]
    if not lows:
        return None
    return MarketRange(low=min(lows), high=max(highs), source="; ".join(sources)[:200])


def live_fills_by_desk(since: datetime) -> dict[str, LiveFills]:
    """For the scorecard: per desk, the fills since `since`, their notional and fees, and the
    pnl the fills in the window realized (FIFO over each delegation's whole book, so a sell in
    the window is matched with the buy before it) net of the window's fees. Only fills checked
    against the market at their time count (fill_report refuses the others; rows recorded
    before the check existed are left out and counted as unchecked_fills)."""
    desks = set(DelegatedFill.objects.filter(filled_at__gte=since).values_list("desk", flat=True).distinct())
    unchecked = dict(
        DelegatedFill.objects.filter(filled_at__gte=since, market_source="")
        .order_by()
        .values("desk")
        .annotate(n=Count("id"))
        .values_list("desk", "n")
    )
    out: dict[str, LiveFills] = {}
    for desk in sorted(desks):
        count, notional, fees, realized = 0, 0, 0, ZERO
        rows = (
            DelegatedFill.objects.filter(desk=desk)
            .exclude(market_source="")
            .order_by("delegation_id", "symbol", "filled_at", "id")
        )
        books: dict[tuple[str, str], Book] = {}
        for f in rows:
            gained = books.setdefault((str(f.delegation_id), f.symbol), Book()).apply(
                side=f.side, size=f.size, price=f.price
            )
            if f.filled_at >= since:
                count += 1
                notional += f.notional_atomic
                fees += f.fee_atomic
                realized += gained
        out[desk] = LiveFills(
            fills=count,
            notional_usdc=notional / 10**6,
            fees_usdc=fees / 10**6,
            realized_pnl_usdc=round(float(realized) - fees / 10**6, 6),
            unchecked_fills=unchecked.get(desk, 0),
        )
    return out
