"""Best execution across venues: a notional filled over several books at the best price after
each venue's taker fee, and the consolidated mid a cost is measured against."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from catalog.analytics.execution.books import BPS, Book, Side


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
