"""The exchange feed: tickers (last, bid/ask = the book's top, 24h volumes), order books
(EXCHANGE_BOOK_DEPTH levels a side), OHLCV candles and perpetual funding rates from the venues
of EXCHANGES (ccxt, public endpoints, no keys), for the markets of MARKET_SYMBOLS, plus the
tokenized assets of TOKENIZED_WATCHLIST priced from the same tickers. After the venues, the
pass records each symbol's best cross-venue spread (SpreadSnapshot, net of taker fees), which
pushes pair_arb_alert when a pair crosses PAIR_ARB_ALERT_BPS.

The tokenized watchlist is written by this pass rather than a source of its own: its prices
are these venues' tickers, fetched once; a second source would fetch them again.

Venues fail on their own: each venue's writes are in a savepoint, a venue that fails is rolled
back, logged and warned of, and the pass fails only when every venue failed (with the network
error itself when none could be reached, else FeedError), so one venue that blocks us does not
stop the others. Retention: `exchanges_prune(before=...)`."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import requests
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from a2a_service.core.http import TargetRefused
from catalog.feeds.exchanges import parse, store
from catalog.feeds.exchanges.client import api_bases, exchange_for
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.feeds.retention import retention_register
from catalog.models import Candle, FundingRate

logger = logging.getLogger(__name__)

NAME = "exchanges"
# Failures that mean a venue could not be reached (not a bad answer from it).
UNREACHABLE = (requests.exceptions.ConnectionError, requests.exceptions.Timeout, TargetRefused)
# The replay samples: catalog/feeds/samples/exchange_<ccxt id>/<the venue's REST path>.
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
# Replayed funding times move in whole hours (venues fund on the hour).
FUNDING_SHIFT_STEP = timedelta(hours=1)


def watchlist() -> list[tuple[str, str, str]]:
    """TOKENIZED_WATCHLIST as (symbol, name, underlying)."""
    out = []
    for entry in settings.TOKENIZED_WATCHLIST:
        symbol, _, rest = str(entry).partition("|")
        name, _, underlying = rest.partition("|")
        if symbol.strip():
            out.append((symbol.strip().upper(), name.strip() or symbol.strip(), underlying.strip()))
    return out


def candle_limits() -> dict[str, int]:
    return {str(tf): int(n) for tf, n in dict(settings.EXCHANGE_CANDLE_LIMITS).items() if int(n) > 0}


def replay_bars(
    bars: list[parse.Bar], *, timeframe: str, feed_pass: FeedPass
) -> tuple[list[parse.Bar], datetime]:
    """A recorded series moved so that its newest bar ends at the pass's start (whole bars:
    the shape is kept, only its time moves); and when the recording's newest bar ended."""
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    step = timedelta(seconds=ccxt.Exchange.parse_timeframe(timeframe))
    end = bars[-1].open_time + step
    shift = feed_pass.replay_shift(end, step=step)
    if not shift:
        return bars, end
    return [replace(b, open_time=b.open_time + shift) for b in bars], end


def replay_funding(
    rates: list[parse.Funding], *, recorded: datetime | None, feed_pass: FeedPass
) -> list[parse.Funding]:
    """Recorded funding readings moved with the recording's "now" (`recorded`: the venue's
    own timestamp, else its newest candle's end) onto the pass's start, in whole hours so
    the funding times stay on the hour."""
    if recorded is None:
        return rates
    shift = feed_pass.replay_shift(recorded, step=FUNDING_SHIFT_STEP)
    if not shift:
        return rates
    return [
        replace(
            f,
            funding_at=f.funding_at + shift,
            next_funding_at=f.next_funding_at + shift if f.next_funding_at else None,
        )
        for f in rates
    ]


def venue_pass(
    exchange_id: str, feed_pass: FeedPass, *, seen_at: datetime
) -> tuple[int, dict[str, parse.Tick]]:
    """One venue: its rows written, and its ticks by base (for the tokenized watchlist)."""
    exchange = exchange_for(exchange_id, feed_pass)
    markets: dict[str, Any] = exchange.load_markets()
    wanted = [str(s).strip().upper() for s in settings.MARKET_SYMBOLS if str(s).strip()]
    tokenized = [symbol for symbol, _, _ in watchlist()]
    # Each venue symbol once: one symbol may be named in both lists, or twice in one ("PAXG"
    # in the watchlist and "PAXG/USDT" in MARKET_SYMBOLS are the same market).
    symbols = list(
        dict.fromkeys(s for w in dict.fromkeys(wanted + tokenized) if (s := parse.pick_spot(markets, w)))
    )
    if not symbols:
        logger.info("exchanges: %s lists none of the symbols", exchange_id)
        return 0, {}
    rows = 0
    ticks: dict[str, parse.Tick] = {}
    # The tickers of several symbols in one request (the venue's all-tickers answer, filtered);
    # for a single symbol some venues ask for that one alone (bybit adds symbol=): ask for all.
    tickers: dict[str, Any] = (
        exchange.fetch_tickers(symbols)
        if len(symbols) > 1
        else exchange.fetch_tickers(None, {"type": "spot"})
    )
    for symbol in symbols:
        ticker = tickers.get(symbol)
        if ticker is None:
            continue
        t = parse.tick(ticker, markets[symbol])
        store.market_upsert(exchange=exchange_id, tick=t, replay=feed_pass.replay, seen_at=seen_at)
        if t.quote in parse.USD_QUOTES or t.base not in ticks:  # a dollar price for the watchlist
            ticks[t.base] = t
        rows += 1
    rows += books_pass(exchange, exchange_id, symbols, feed_pass, seen_at=seen_at)
    # The sample's "now" in replay (the newest bar's end), for the funding times below.
    recorded_now: datetime | None = None
    if exchange.has.get("fetchOHLCV"):
        limits = {tf: n for tf, n in candle_limits().items() if tf in (exchange.timeframes or {})}
        # Every market, the tokenized watchlist's too: tokenized signals and scalp score the
        # tokens' own candles.
        for symbol in symbols:
            for timeframe, limit in limits.items():
                fetch = (
                    limit
                    if feed_pass.replay
                    else store.candles_wanted(
                        exchange=exchange_id, symbol=symbol, timeframe=timeframe, limit=limit, now=seen_at
                    )
                )
                bars = parse.bars(exchange.fetch_ohlcv(symbol, timeframe, limit=fetch))[-limit:]
                if bars and feed_pass.replay:
                    bars, end = replay_bars(bars, timeframe=timeframe, feed_pass=feed_pass)
                    recorded_now = max(recorded_now or end, end)
                    newest = store.candle_newest(exchange=exchange_id, symbol=symbol, timeframe=timeframe)
                    if newest == (bars[-1].open_time, bars[-1].close):
                        # The same recording at the same shift is stored already (a 1h series
                        # moves once an hour): nothing to rewrite.
                        continue
                rows += store.candles_upsert(
                    exchange=exchange_id,
                    symbol=symbol,
                    timeframe=timeframe,
                    bars=bars,
                    feed_pass=feed_pass,
                    seen_at=seen_at,
                )
    perps = list(dict.fromkeys(p for w in wanted if (p := parse.pick_perp(markets, w.split("/")[0]))))
    if perps and exchange.has.get("fetchFundingRates"):
        answer: dict[str, Any] = exchange.fetch_funding_rates()  # all perpetuals, filtered here
        rates = [
            f
            for p in perps
            if p in answer and (f := parse.funding(answer[p], observed_at=seen_at)) is not None
        ]
        if feed_pass.replay:
            observed = [at for p in perps if p in answer and (at := parse.when(answer[p].get("timestamp")))]
            rates = replay_funding(rates, recorded=max(observed, default=recorded_now), feed_pass=feed_pass)
        rows += store.funding_upsert(exchange=exchange_id, rates=rates, feed_pass=feed_pass, seen_at=seen_at)
    return rows, ticks


def books_pass(
    exchange: Any, exchange_id: str, symbols: list[str], feed_pass: FeedPass, *, seen_at: datetime
) -> int:
    """The order books of the venue's spot markets, EXCHANGE_BOOK_DEPTH levels a side (one
    request per symbol: venues have no all-books endpoint)."""
    depth = int(settings.EXCHANGE_BOOK_DEPTH)
    if depth <= 0 or not exchange.has.get("fetchOrderBook"):
        return 0
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    books = []
    for symbol in symbols:
        try:
            book = parse.depth_book(
                exchange.fetch_order_book(symbol, limit=depth), symbol=symbol, depth=depth
            )
        except (ccxt.BaseError, FeedError) as exc:
            # One book the venue refused or garbled: the venue's tickers, candles and other
            # books still stand (an unreachable venue raises a network error, which fails it).
            reason = f"{exchange_id} {symbol} order book: {type(exc).__name__}: {exc}"
            logger.warning("exchanges: %s", reason)
            feed_pass.feed_failed(feed=f"{exchange_id} {symbol} order book", error=exc, detail=reason[:500])
            continue
        if book.at is not None and feed_pass.replay:
            # The recorded stamp lands on this pass (as the candles' and funding's do).
            book = replace(book, at=book.at + feed_pass.replay_shift(book.at, step=timedelta(seconds=1)))
        books.append(book)
    return store.books_upsert(
        exchange=exchange_id, books=books, depth=depth, feed_pass=feed_pass, seen_at=seen_at
    )


def run(feed_pass: FeedPass) -> int:
    seen_at = timezone.now()
    api_bases()  # a malformed EXCHANGE_API_BASES fails the pass before any request
    rows = 0
    errors: list[str] = []
    failures: list[Exception] = []
    venue_ticks: dict[str, dict[str, parse.Tick]] = {}
    venues = [str(v).strip() for v in settings.EXCHANGES if str(v).strip()]
    if feed_pass.replay:
        # Only the venues with recorded samples can be replayed; the others would only 404.
        recorded = [v for v in venues if (SAMPLES / f"exchange_{v}").is_dir()]
        if skipped := sorted(set(venues) - set(recorded)):
            logger.info("exchanges: no replay samples for %s, skipped", ", ".join(skipped))
        venues = recorded
    for exchange_id in venues:
        try:
            with transaction.atomic():  # a savepoint: a venue that fails leaves nothing behind
                written, ticks = venue_pass(exchange_id, feed_pass, seen_at=seen_at)
        except Exception as exc:  # noqa: BLE001 - any failure of one venue; recorded below
            reason = f"{exchange_id}: {type(exc).__name__}: {exc}"
            logger.warning("exchanges: %s failed: %s", exchange_id, exc)
            errors.append(reason)
            failures.append(exc)
            # Recorded with the pass: health shows the source degraded with this venue.
            feed_pass.feed_failed(feed=exchange_id, error=exc, detail=reason[:500])
            continue
        rows += written
        venue_ticks[exchange_id] = ticks
    if failures and not venue_ticks:
        if all(isinstance(e, UNREACHABLE) for e in failures):
            # No venue could be reached at all: raised as it is, so the runner knows the
            # network failed (auto mode then replays) rather than a venue's answer.
            raise failures[0]
        raise FeedError("; ".join(errors)[:1000])
    # The cross-venue spreads of this pass's book tops (they push pair_arb_alert).
    rows += store.spreads_record(replay=feed_pass.replay, seen_at=seen_at)
    for symbol, name, underlying in watchlist():
        quotes = [(v, ticks[symbol]) for v, ticks in venue_ticks.items() if symbol in ticks]
        quotes = [(v, t) for v, t in quotes if t.last is not None]
        if not quotes:
            continue
        # The deepest venue's price: the one a buyer would most likely get.
        venue, best = max(quotes, key=lambda q: q[1].volume_usd or 0)
        store.tokenized_upsert(
            symbol=symbol,
            name=name,
            underlying=underlying,
            venue=venue,
            tick=best,
            replay=feed_pass.replay,
            seen_at=seen_at,
        )
        rows += 1
    return rows


def exchanges_prune(*, before: datetime) -> int:
    """Retention (the feeds' pruning schedule calls it): deletes candles that opened and
    funding readings observed before `before`; returns the rows deleted."""
    return store.prune(before=before)


# The schedule's pruning (catalog/feeds/retention.py) keeps EXCHANGE_RETENTION_DAYS of both.
retention_register(model=Candle, time_field="open_time", days_setting="EXCHANGE_RETENTION_DAYS")
retention_register(model=FundingRate, time_field="observed_at", days_setting="EXCHANGE_RETENTION_DAYS")

SOURCE = feed_register(
    FeedSource(
        name=NAME,
        run=run,
        interval_seconds=60,
        description="ccxt public tickers, book tops and depth, 1m/1h candles and funding rates; "
        "cross-venue spreads; tokenized watchlist",
        # Its bases are per venue (EXCHANGE_API_BASES; replay keys exchange_<id>), not URL settings.
        url_settings=(),
    )
)
