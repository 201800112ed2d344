"""Cross-venue gaps: buying at one venue's ask and selling at another's bid, gross and net of
both taker fees, and how much of a gap the two books can carry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog.analytics.execution.books import BPS, Level, Quote
from catalog.analytics.execution.fees import taker_bps


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
