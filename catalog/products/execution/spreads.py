"""The structural spread radar: cross-venue book-top gaps per symbol, gross and net of taker
fees, with the latest stored spread snapshot."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.execution.books import Quote, quotes_fresh, since
from catalog.analytics.execution.gaps import best_gaps
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import SpreadSnapshot
from catalog.products.execution.common import BOOK_MAX_AGE, FeeOut, _fees_out, _fresh_markets, _price, _r, _rf
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    fresh_required,
    register,
)

# SpreadSnapshot readings shown as "the latest snapshot" (a few exchanges passes).
SNAPSHOT_WINDOW = timedelta(minutes=15)


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
