"""A row a source sends twice, or a symbol configured twice, is one row and a recorded oddity,
never a failed pass (catalog/feeds/unique.py). PostgreSQL refuses an INSERT ... ON CONFLICT DO
UPDATE whose rows repeat a key, which failed every binance and okx pass in production as soon
as PAXG/USDT was both in MARKET_SYMBOLS and on the tokenized watchlist; SQLite hid it. CI runs
these with DATABASE_URL on PostgreSQL (.ci/run); they run on SQLite too.

The answers here are generated (candles with a repeated bar, a pools list, markets, blocks,
events with a repeated key), not the recorded samples only."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

import catalog.feeds.defillama as defillama
import catalog.feeds.exchanges as exchanges_feed
from catalog.feeds.calendar.parse import CalendarFeed, Occurrence, ParsedCalendar
from catalog.feeds.calendar.store import events_sync
from catalog.feeds.chain import fee_blocks_upsert
from catalog.feeds.chain.parse import FeeBlock
from catalog.feeds.exchanges import parse, store
from catalog.feeds.prediction_store import MarketRow, markets_upsert
from catalog.feeds.registry import FeedPass
from catalog.feeds.runner import feed_run
from catalog.feeds.unique import bulk_upsert, unique_on
from catalog.models import (
    CalendarEvent,
    Candle,
    ExchangeMarket,
    FeedState,
    FundingRate,
    GasFeeBlock,
    NewsItem,
    OrderBook,
    PredictionMarket,
    TokenizedAsset,
    YieldPool,
)
from tests.support.feedserver import Answer, FeedServer
from tests.support.replay_server import sample_server

pytestmark = pytest.mark.django_db

BARS = 120  # generated bars per repeated series (under the 300 a pass asks for)
REPEATED = 70  # the index of the bar each venue sends twice


def test_these_tests_run_on_the_database_ci_names():
    """CI sets DATABASE_URL to PostgreSQL: the feed tests must run there, not on SQLite."""
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        assert connection.vendor == "postgresql"


# --- the helper ---------------------------------------------------------------------------------
def test_unique_on_keeps_one_row_per_key_and_records_the_repeats():
    feed_pass = FeedPass(source="t")
    rows = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6)]
    assert unique_on(rows, key=lambda r: r[0], what="t rows", feed_pass=feed_pass) == [
        ("a", 5),
        ("b", 6),
        ("c", 4),
    ]
    assert feed_pass.oddities == 3
    assert feed_pass.warnings == ["t rows: 3 repeated row(s) dropped (a x3, b x2); the last of each kept"]
    assert feed_pass.failed_feeds == []
    first = unique_on(rows, key=lambda r: r[0], what="t rows", feed_pass=feed_pass, keep="first")
    assert first == [("a", 1), ("b", 2), ("c", 4)] and feed_pass.oddities == 6
    clean = FeedPass(source="t")
    assert unique_on(rows[:2], key=lambda r: r[0], what="t", feed_pass=clean) == rows[:2]
    assert clean.oddities == 0 and clean.warnings == []


def test_bulk_upsert_of_a_repeated_conflict_key_writes_one_row():
    """The statement PostgreSQL refused ("cannot affect row a second time")."""
    at = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

    def candle(close: str) -> Candle:
        return Candle(
            exchange="binance",
            symbol="PAXG/USDT",
            timeframe="1m",
            open_time=at,
            open=Decimal(2600),
            high=Decimal(2610),
            low=Decimal(2590),
            close=Decimal(close),
            volume=Decimal(1),
            source="exchanges",
            observed_at=at,
        )

    feed_pass = FeedPass(source="exchanges")
    written = bulk_upsert(
        Candle,
        [candle("2601"), candle("2602")],
        unique_fields=["exchange", "symbol", "timeframe", "open_time"],
        update_fields=["close"],
        what="binance PAXG/USDT 1m candles",
        feed_pass=feed_pass,
    )
    assert written == 1 and feed_pass.oddities == 1
    assert list(Candle.objects.values_list("close", flat=True)) == [Decimal("2602")]


# --- the exchange feed: one symbol in two lists, a venue repeating a bar ------------------------
def _walk(n: int, *, start: float, seed: int) -> list[tuple[float, float, float, float, float]]:
    """n generated bars (open, high, low, close, volume): a deterministic zigzag."""
    out, price = [], start
    for i in range(n):
        step = ((i * 7 + seed) % 11 - 5) * start / 10_000
        close = round(price + step, 2)
        out.append((price, max(price, close) + 1, min(price, close) - 1, close, 10 + i % 5))
        price = close
    return out


def _series(end: datetime, *, seed: int) -> list[tuple[int, tuple]]:
    """BARS one-minute bars ending at `end`, then bar REPEATED again with another close (the
    venue's later, corrected reading: the one to keep)."""
    first = end - timedelta(minutes=BARS)
    bars = [
        (int((first + timedelta(minutes=i)).timestamp() * 1000), v)
        for i, v in enumerate(_walk(BARS, start=97_000.0, seed=seed))
    ]
    t, (o, h, low, c, v) = bars[REPEATED]
    return [*bars, (t, (o, h + 5, low, round(c + 3.5, 2), v))]


def _binance_klines(end: datetime) -> bytes:
    rows = [
        [t, f"{o}", f"{h}", f"{low}", f"{c}", f"{v}", t + 59_999, f"{c * v:.2f}", 100, "0", "0", "0"]
        for t, (o, h, low, c, v) in _series(end, seed=3)
    ]
    return json.dumps(rows).encode()


def _okx_candles(end: datetime) -> bytes:
    rows = [
        [str(t), f"{o}", f"{h}", f"{low}", f"{c}", f"{v}", f"{c * v:.2f}", f"{c * v:.2f}", "1"]
        for t, (o, h, low, c, v) in _series(end, seed=5)
    ]
    return json.dumps({"code": "0", "msg": "", "data": rows[::-1]}).encode()  # okx: newest first


@pytest.fixture
def venues(settings):
    """The replay stand-in (the venues' recorded formats) with BTC's 1m candles generated: each
    venue sends one bar twice. PAXG/USDT is in MARKET_SYMBOLS and (as PAXG) on the default
    tokenized watchlist; ETH is in MARKET_SYMBOLS twice."""
    end = timezone.now().replace(second=0, microsecond=0)
    generated = {
        "/exchange_binance/api/v3/klines/interval=1m,symbol=BTCUSDT": _binance_klines(end),
        "/exchange_okx/api/v5/market/candles/bar=1m,instId=BTC-USDT": _okx_candles(end),
    }

    def hook(handler):
        body = generated.get(handler.path.split("?", 1)[0])
        if body is None:
            return False
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True

    with sample_server(hook=hook) as (base, seen):
        settings.FEEDS_REPLAY_URL = base
        settings.EXCHANGES = ["binance", "okx"]
        settings.MARKET_SYMBOLS = ["BTC", "ETH", "ETH/USDT", "PAXG/USDT"]
        settings.TOKENIZED_WATCHLIST = ["PAXG|PAX Gold|XAU", "XAUT|Tether Gold|XAU"]
        yield seen


def test_a_symbol_in_two_lists_and_a_repeated_bar_are_one_row_each_and_no_venue_fails(venues, api):
    state = feed_run(name="exchanges", mode="replay")
    # Before: every venue failed on PostgreSQL ("ON CONFLICT DO UPDATE command cannot affect row
    # a second time": PAXG/USDT's book twice, ETH's funding twice) and the pass with them.
    assert state.outcome == "ok", state.last_error
    assert state.last_error == "" and state.last_failed_feeds == []
    assert set(ExchangeMarket.objects.values_list("exchange", flat=True)) == {"binance", "okx"}
    for venue in ("binance", "okx"):
        assert ExchangeMarket.objects.filter(exchange=venue, symbol="PAXG/USDT").count() == 1
        assert OrderBook.objects.filter(exchange=venue, symbol="PAXG/USDT").count() == 1
        assert FundingRate.objects.filter(exchange=venue, symbol="ETH/USDT:USDT").count() == 1
        # One row per bar: BARS generated, one of them sent twice.
        btc = Candle.objects.filter(exchange=venue, symbol="BTC/USDT", timeframe="1m").order_by("open_time")
        assert btc.count() == BARS
        assert len({c.open_time for c in btc}) == BARS
    # The symbol asked for twice was asked for once: one book request per venue.
    assert sum("depth" in p and "PAXGUSDT" in p for p in venues) == 1
    assert sum("/books" in p and "PAXG-USDT" in p for p in venues) == 1
    # binance's repeated bar: the later reading (the last row sent, close + 3.5) is the one stored.
    sent = _series(timezone.now(), seed=3)
    first_close, later_close = sent[REPEATED][1][3], sent[-1][1][3]
    assert later_close != first_close
    stored = Candle.objects.filter(exchange="binance", symbol="BTC/USDT", timeframe="1m")
    assert stored.order_by("open_time")[REPEATED].close == Decimal(f"{later_close}")
    assert TokenizedAsset.objects.get(symbol="PAXG").last_price > 0

    # The repeats are recorded oddities of the pass (not failures), in the record and health.
    assert state.last_oddities == 2
    assert "binance BTC/USDT 1m candles: 1 repeated row(s) dropped" in state.last_note
    assert "okx BTC/USDT 1m candles: 1 repeated row(s) dropped" in state.last_note
    adapter = next(
        a for a in api.get("/api/a2a/program/health").json()["venue_adapters"] if a["name"] == "exchanges"
    )
    assert (adapter["status"], adapter["oddities"], adapter["failed_feeds"]) == ("ok", 2, [])


def test_a_configured_repeat_alone_is_no_oddity(venues, settings):
    """A symbol named in two lists is configuration, not the source's oddity: counted nowhere."""
    settings.MARKET_SYMBOLS = ["ETH", "ETH/USDT", "PAXG/USDT", "PAXG"]
    feed_pass = FeedPass(source="exchanges", replay=True)
    with transaction.atomic():
        exchanges_feed.run(feed_pass)
    assert feed_pass.oddities == 0 and feed_pass.failed_feeds == []
    assert OrderBook.objects.filter(symbol="PAXG/USDT").count() == 2  # binance and okx


def test_the_exchange_writes_each_take_a_repeated_row_once():
    seen = timezone.now()
    feed_pass = FeedPass(source="exchanges")
    at = seen.replace(second=0, microsecond=0)
    rate = parse.Funding(
        symbol="PAXG/USDT:USDT", rate=Decimal("0.0001"), funding_at=at, next_funding_at=None, mark_price=None
    )
    rates = [rate, replace(rate, rate=Decimal("0.0002"))]
    assert store.funding_upsert(exchange="okx", rates=rates, feed_pass=feed_pass, seen_at=seen) == 1
    book = parse.DepthBook(symbol="PAXG/USDT", bids=[(Decimal(1), Decimal(1))], asks=[], at=at)
    books = [book, book]
    assert store.books_upsert(exchange="okx", books=books, depth=5, feed_pass=feed_pass, seen_at=seen) == 1
    assert FundingRate.objects.get().rate == Decimal("0.0002")
    assert OrderBook.objects.count() == 1 and feed_pass.oddities == 2


# --- every other feed's upsert ------------------------------------------------------------------
def _pool(pool_id: str, tvl: int, apy: float) -> dict:
    return {"pool": pool_id, "chain": "Ethereum", "project": "p", "symbol": "USDC", "tvlUsd": tvl, "apy": apy}


def test_a_pool_listed_twice_is_one_row_with_its_largest_listing(settings):
    """Before: the parser dropped the smaller listing silently; now it is a recorded oddity."""
    server = FeedServer()
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        settings.DEFILLAMA_YIELDS_URL = f"{server.url}/pools"
        settings.DEFILLAMA_MIN_TVL_USD = 1_000_000
        payload = {
            "status": "success",
            "data": [
                _pool("p-1", 5_000_000, 4.0),
                _pool("p-2", 9_000_000, 3.0),
                _pool("p-1", 7_000_000, 6.0),
            ],
        }
        server.routes["/pools"] = Answer(body=json.dumps(payload).encode())
        state = feed_run(name=defillama.SOURCE, mode="live")
    finally:
        server.close()
    assert state.outcome == "ok", state.last_error
    assert sorted(YieldPool.objects.values_list("pool_id", "tvl_usd")) == [
        ("p-1", Decimal(7_000_000)),
        ("p-2", Decimal(9_000_000)),
    ]
    assert state.rows_written == 2 and state.last_oddities == 1 and "p-1 x2" in state.last_note


def test_a_block_a_market_and_an_event_sent_twice_are_written_once():
    feed_pass = FeedPass(source="t", replay=True)
    blocks = [
        FeeBlock(
            block_number=n, base_fee_wei=fee, next_base_fee_wei=fee + 1, gas_used_ratio=0.5, rewards_wei=None
        )
        for n, fee in ((100, 10), (101, 12), (100, 20))
    ]
    # Before: the repeated new block was inserted twice (IntegrityError on chain id + number).
    assert fee_blocks_upsert(blocks, chain_id=8453, feed_pass=feed_pass) == 2
    assert GasFeeBlock.objects.get(block_number=100).base_fee_wei == 20

    market = MarketRow(venue="kalshi", external_id="KX-1", question="Will it?", yes_price=Decimal("0.40"))
    later = MarketRow(venue="kalshi", external_id="KX-1", question="Will it?", yes_price=Decimal("0.45"))
    assert markets_upsert([market, later], venue="kalshi", source="kalshi", feed_pass=feed_pass) == 2
    assert PredictionMarket.objects.get().yes_price == Decimal("0.45")  # one market, one price row

    now = timezone.now()
    occ = Occurrence(uid="cpi-1", title="CPI", starts_at=now + timedelta(days=2), ends_at=None, all_day=False)
    parsed = ParsedCalendar(occurrences=[occ, replace(occ, title="CPI (m/m)")])
    written = events_sync(
        feed=CalendarFeed(name="bls", url="https://example.com/bls.ics"),
        parsed=parsed,
        feed_pass=feed_pass,
        seen_at=now,
        start=now - timedelta(days=1),
        end=now + timedelta(days=30),
    )
    assert written == 1 and CalendarEvent.objects.get().title == "CPI (m/m)"
    assert feed_pass.oddities == 3 and feed_pass.failed_feeds == []


def test_a_feed_repeating_an_item_is_one_news_row_and_an_oddity(settings):
    item = (
        "<item><title>{t}</title><link>https://example.com/{i}</link><guid>{i}</guid>"
        "<pubDate>Mon, 23 Nov 2026 09:00:00 GMT</pubDate><description>{t}</description></item>"
    )
    items = [("n-1", "Bitcoin rises"), ("n-2", "Ether falls"), ("n-1", "Bitcoin rises further")]
    rss = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        + "".join(item.format(i=i, t=t) for i, t in items)
        + "</channel></rss>"
    ).encode()
    server = FeedServer()
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        server.routes["/feed.xml"] = Answer(body=rss, headers={"Content-Type": "application/rss+xml"})
        settings.NEWS_FEEDS = f"crypto|{server.url}/feed.xml|gen"
        state = feed_run(name="news", mode="live")
    finally:
        server.close()
    assert state.outcome == "ok" and state.last_oddities == 1
    assert sorted(NewsItem.objects.values_list("external_id", "title")) == [
        ("n-1", "Bitcoin rises further"),
        ("n-2", "Ether falls"),
    ]
    assert FeedState.objects.get(name="news").last_failed_feeds == []
