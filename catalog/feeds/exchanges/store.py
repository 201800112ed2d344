"""Idempotent writes of the exchange feed: upserts on the venue's own keys, so re-running a
pass updates rows in place and never duplicates them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import connection

from catalog.analytics.execution.books import quotes_fresh
from catalog.analytics.execution.gaps import best_gaps
from catalog.feeds.exchanges.parse import Bar, DepthBook, Funding, Tick
from catalog.feeds.registry import FeedPass
from catalog.feeds.unique import bulk_upsert
from catalog.models import (
    Candle,
    EquityQuote,
    ExchangeMarket,
    FundingRate,
    OrderBook,
    SpreadSnapshot,
    TokenizedAsset,
)

SOURCE = "exchanges"


def market_upsert(*, exchange: str, tick: Tick, replay: bool, seen_at: datetime) -> None:
    # One save per market (a few dozen a pass): post_save reaches the listeners (the stored
    # free documents, alerts) as any other write does.
    ExchangeMarket.objects.update_or_create(
        exchange=exchange,
        symbol=tick.symbol,
        defaults={
            "base": tick.base,
            "quote": tick.quote,
            "last_price": tick.last,
            "bid": tick.bid,
            "ask": tick.ask,
            "bid_size": tick.bid_size,
            "ask_size": tick.ask_size,
            "spread_bps": tick.spread_bps,
            "volume_24h_base": tick.volume_base,
            "volume_24h_usd": tick.volume_usd,
            "source": SOURCE,
            "replay": replay,
            "updated_at": seen_at,
        },
    )


def candles_upsert(
    *,
    exchange: str,
    symbol: str,
    timeframe: str,
    bars: Sequence[Bar],
    feed_pass: FeedPass,
    seen_at: datetime,
) -> int:
    """Thousands of rows a pass: one INSERT ... ON CONFLICT UPDATE per batch (no post_save:
    no free document shows candles). A bar the venue sent twice is written once."""
    replay = feed_pass.replay
    rows = [
        Candle(
            exchange=exchange,
            symbol=symbol,
            timeframe=timeframe,
            open_time=b.open_time,
            open=b.open,
            high=b.high,
            low=b.low,
            close=b.close,
            volume=b.volume,
            source=SOURCE,
            replay=replay,
            observed_at=seen_at,
        )
        for b in bars
    ]
    return bulk_upsert(
        Candle,
        rows,
        batch_size=500,
        unique_fields=["exchange", "symbol", "timeframe", "open_time"],
        update_fields=["open", "high", "low", "close", "volume", "source", "replay", "observed_at"],
        what=f"{exchange} {symbol} {timeframe} candles",
        feed_pass=feed_pass,
    )


def candle_newest(*, exchange: str, symbol: str, timeframe: str) -> tuple[datetime, Decimal] | None:
    """The newest stored bar's open time and close."""
    return (
        Candle.objects.filter(exchange=exchange, symbol=symbol, timeframe=timeframe)
        .order_by("-open_time")
        .values_list("open_time", "close")
        .first()
    )


def candles_wanted(*, exchange: str, symbol: str, timeframe: str, limit: int, now: datetime) -> int:
    """How many of the newest bars a live pass asks for: all `limit` the first time (the
    indicators need the history), then only the bars since the newest stored one (that one
    again: it was still forming), so a pass a minute does not rewrite hours of bars."""
    stored = candle_newest(exchange=exchange, symbol=symbol, timeframe=timeframe)
    if stored is None:
        return limit
    newest = stored[0]
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    step = timedelta(seconds=ccxt.Exchange.parse_timeframe(timeframe))
    missing = int((now - newest) // step) + 1  # the newest stored bar and every one opened since
    return max(2, min(limit, missing))


def funding_upsert(
    *, exchange: str, rates: Sequence[Funding], feed_pass: FeedPass, seen_at: datetime
) -> int:
    replay = feed_pass.replay
    rows = [
        FundingRate(
            exchange=exchange,
            symbol=f.symbol,
            rate=f.rate,
            funding_at=f.funding_at,
            next_funding_at=f.next_funding_at,
            mark_price=f.mark_price,
            source=SOURCE,
            replay=replay,
            observed_at=seen_at,
        )
        for f in rates
    ]
    return bulk_upsert(
        FundingRate,
        rows,
        unique_fields=["exchange", "symbol", "funding_at"],
        update_fields=["rate", "next_funding_at", "mark_price", "source", "replay", "observed_at"],
        what=f"{exchange} funding rates",
        feed_pass=feed_pass,
    )


def books_upsert(
    *, exchange: str, books: Sequence[DepthBook], depth: int, feed_pass: FeedPass, seen_at: datetime
) -> int:
    """One row per venue and symbol, replaced by every pass: one INSERT ... ON CONFLICT UPDATE
    (nothing listens to books, and no free document shows them)."""
    rows = [
        OrderBook(
            exchange=exchange,
            symbol=b.symbol,
            bids=[[str(p), str(s)] for p, s in b.bids],
            asks=[[str(p), str(s)] for p, s in b.asks],
            depth=depth,
            book_at=b.at or seen_at,
            source=SOURCE,
            replay=feed_pass.replay,
            observed_at=seen_at,
        )
        for b in books
    ]
    return bulk_upsert(
        OrderBook,
        rows,
        unique_fields=["exchange", "symbol"],
        update_fields=["bids", "asks", "depth", "book_at", "source", "replay", "observed_at"],
        what=f"{exchange} order books",
        feed_pass=feed_pass,
    )


def spreads_record(*, replay: bool, seen_at: datetime) -> int:
    """The pass's cross-venue spreads as SpreadSnapshot rows: per symbol quoted by two venues
    or more in this pass, its best venue pair (buy at venue_a's ask, sell at venue_b's bid)
    with the gross gap and the gap net of both taker fees. Each row is saved on its own so
    that post_save reaches the pair_arb_alert receiver (webhooks/signals.py)."""
    # Only the tops this pass wrote: a venue that failed this pass must not pair with itself
    # from an earlier one.
    quotes = quotes_fresh(seen_since=seen_at)
    written = 0
    for gap in best_gaps(quotes):
        net = gap.net_bps
        SpreadSnapshot.objects.create(
            symbol=gap.symbol,
            venue_a=gap.buy.exchange,
            venue_b=gap.sell.exchange,
            spread_bps=_bps(gap.gross_bps),
            net_bps=_bps(net) if net is not None else None,
            source=SOURCE,
            replay=replay,
            captured_at=seen_at,
        )
        written += 1
    return written


def _bps(value: float) -> Decimal:
    return Decimal(str(round(value, 3)))


def tokenized_upsert(
    *, symbol: str, name: str, underlying: str, venue: str, tick: Tick, replay: bool, seen_at: datetime
) -> None:
    """Name and underlying are set when the asset is first seen; staff may edit them after."""
    asset, _ = TokenizedAsset.objects.get_or_create(
        symbol=symbol, defaults={"name": name, "underlying": underlying, "venue": venue}
    )
    if asset.underlying and asset.underlying_price is None:
        # A token first seen after the equities feed quoted its underlying takes that quote
        # now rather than at the equities feed's next pass (the two feeds run in any order).
        quote = (
            EquityQuote.objects.filter(symbol=asset.underlying.strip().upper(), currency="USD")
            .order_by("-quoted_at")
            .first()
        )
        if quote is not None:
            asset.underlying_price = quote.price
            asset.underlying_source = quote.source
            asset.underlying_as_of = quote.quoted_at
            asset.underlying_replay = quote.replay
    asset.venue = venue
    asset.last_price = tick.last
    asset.change_24h_pct = tick.change_24h_pct
    asset.source = SOURCE
    asset.replay = replay
    asset.updated_at = seen_at
    asset.save()


def prune(*, before: datetime) -> int:
    """Delete candles that opened and funding readings observed before `before`. Plain DELETEs:
    the ORM's delete would load every row to send post_delete (a receiver listens to all
    models), and nothing needs to hear of these."""
    deleted = 0
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Candle._meta.db_table} WHERE open_time < %s", [before])  # noqa: S608
        deleted += max(cursor.rowcount, 0)
        cursor.execute(f"DELETE FROM {FundingRate._meta.db_table} WHERE observed_at < %s", [before])  # noqa: S608
        deleted += max(cursor.rowcount, 0)
    return deleted
