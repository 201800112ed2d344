"""Order-book depth and cross-venue spreads of the exchange feed (catalog/feeds/exchanges/):
each venue's recorded book (its own format, parsed by ccxt) stored as EXCHANGE_BOOK_DEPTH
levels a side, the pass's best cross-venue pair per symbol written as a SpreadSnapshot net of
the venues' taker fees, and the designed SOL gap of the samples pushing one pair_arb_alert."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import transaction

import catalog.feeds.exchanges as exchanges_feed
from catalog.analytics.execution.fees import fees_for
from catalog.feeds.exchanges.client import sample_path
from catalog.feeds.registry import FeedPass
from catalog.models import ExchangeMarket, OrderBook, SpreadSnapshot
from tests.support.receivers import subscribe
from tests.support.replay_server import SAMPLES, sample_server
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # the samples' recorded "now"


def sample(venue: str, path: str):
    return json.loads((SAMPLES / f"exchange_{venue}" / f"{path}.json").read_text())


def run_pass(*, replay: bool = True) -> FeedPass:
    feed_pass = FeedPass(source="exchanges", replay=replay)
    with transaction.atomic():
        exchanges_feed.run(feed_pass)
    return feed_pass


@pytest.fixture
def replay(settings):
    seen: list[str] = []
    hooks: dict = {}

    def hook(handler):
        return bool(hooks.get("hook") and hooks["hook"](handler))

    with sample_server(hook=hook, seen=seen) as (base, _):
        settings.FEEDS_REPLAY_URL = base
        settings.EXCHANGES = ["binance", "okx", "bybit"]
        settings.EXCHANGE_TAKER_FEES = {}
        yield {"seen": seen, "hooks": hooks}


def levels(raw, n):
    """The first n recorded levels as numbers (ccxt parses the venue's strings to floats)."""
    return [[Decimal(p), Decimal(s)] for p, s, *_ in raw[:n]]


def stored(side):
    return [[Decimal(p), Decimal(s)] for p, s in side]


def test_each_venue_book_is_stored_as_its_best_levels(replay, settings):
    settings.MARKET_SYMBOLS = ["BTC", "ETH", "SOL"]  # the books checked below
    feed_pass = run_pass()
    spots = ExchangeMarket.objects.count()
    assert OrderBook.objects.count() == spots  # one book per venue market, tokenized ones too
    assert set(OrderBook.objects.values_list("depth", flat=True)) == {20}
    assert not OrderBook.objects.filter(replay=False).exists()

    # binance: /api/v3/depth (no stamp: the pass's time), the first 20 of 50 recorded levels.
    raw = sample("binance", "api/v3/depth/symbol=BTCUSDT")
    book = OrderBook.objects.get(exchange="binance", symbol="BTC/USDT")
    assert stored(book.bids) == levels(raw["bids"], 20) and stored(book.asks) == levels(raw["asks"], 20)
    # The book's top is the ticker's bid/ask.
    top = ExchangeMarket.objects.get(exchange="binance", symbol="BTC/USDT")
    assert (Decimal(book.bids[0][0]), Decimal(book.asks[0][0])) == (top.bid, top.ask)
    assert book.book_at == book.observed_at

    # okx: [price, size, "0", orders] levels; its stamp moved from the recording onto the pass.
    raw = sample("okx", "api/v5/market/books/instId=ETH-USDT")["data"][0]
    book = OrderBook.objects.get(exchange="okx", symbol="ETH/USDT")
    assert stored(book.bids) == levels(raw["bids"], 20) and stored(book.asks) == levels(raw["asks"], 20)
    start = datetime.fromtimestamp(int(feed_pass.started_at.timestamp()), tz=UTC)
    assert book.book_at == max(start, NOW)

    # bybit: result.b / result.a.
    raw = sample("bybit", "v5/market/orderbook/category=spot,symbol=SOLUSDT")["result"]
    book = OrderBook.objects.get(exchange="bybit", symbol="SOL/USDT")
    assert stored(book.bids) == levels(raw["b"], 20) and stored(book.asks) == levels(raw["a"], 20)
    bids = [Decimal(p) for p, _ in book.bids]
    asks = [Decimal(p) for p, _ in book.asks]
    assert bids == sorted(bids, reverse=True) and asks == sorted(asks) and bids[0] < asks[0]


def test_a_rerun_rewrites_each_book_in_place(replay, settings):
    settings.MARKET_SYMBOLS = ["BTC"]
    run_pass()
    first = OrderBook.objects.count()
    OrderBook.objects.update(bids=[], asks=[])
    settings.EXCHANGE_BOOK_DEPTH = 5
    run_pass()
    assert OrderBook.objects.count() == first
    assert all(len(b.bids) == len(b.asks) == 5 and b.depth == 5 for b in OrderBook.objects.all())


def test_no_depth_asked_no_book_fetched(replay, settings):
    settings.EXCHANGE_BOOK_DEPTH = 0
    settings.MARKET_SYMBOLS = ["BTC"]
    run_pass()
    assert not OrderBook.objects.exists()
    assert not any("depth" in p or "books" in p or "orderbook" in p for p in replay["seen"])
    assert ExchangeMarket.objects.filter(symbol="BTC/USDT").count() == 3  # the tickers still are


def test_a_garbled_book_is_skipped_and_the_venue_stands(replay, settings):
    settings.MARKET_SYMBOLS = ["BTC", "ETH"]

    def garbled(handler):
        if "depth/symbol=ETHUSDT" not in handler.path:
            return False
        body = b'{"lastUpdateId":1,"bids":[["abc","1"]],"asks":[]}'
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True

    replay["hooks"]["hook"] = garbled
    feed_pass = run_pass()
    assert not OrderBook.objects.filter(exchange="binance", symbol="ETH/USDT").exists()
    assert OrderBook.objects.filter(exchange="binance", symbol="BTC/USDT").exists()
    assert ExchangeMarket.objects.filter(exchange="binance", symbol="ETH/USDT").exists()
    assert any("binance ETH/USDT order book" in w for w in feed_pass.warnings)


def test_the_live_venue_is_asked_for_its_depth_through_api_bases(settings):
    def to_sample(path: str) -> str:
        return "/exchange_binance/" + sample_path("http://venue" + path)

    with sample_server(to_sample=to_sample) as (base, seen):
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        settings.EXCHANGES = ["binance"]
        settings.MARKET_SYMBOLS = ["BTC"]
        settings.EXCHANGE_API_BASES = f"binance={base}"
        run_pass(replay=False)
    assert "/api/v3/depth?symbol=BTCUSDT&limit=20" in seen
    assert OrderBook.objects.get(exchange="binance", symbol="BTC/USDT").replay is False


def test_each_pass_records_the_best_pair_per_symbol_net_of_fees(replay):
    run_pass()
    # Every symbol quoted on two venues or more: one reading, its best pair.
    assert SpreadSnapshot.objects.count() == ExchangeMarket.objects.values("symbol").distinct().count()
    sol = SpreadSnapshot.objects.get(symbol="SOL/USDT")
    # The samples' designed gap: bybit's SOL 60 bps above the others.
    assert (sol.venue_a, sol.venue_b) == ("binance", "bybit")
    ask = ExchangeMarket.objects.get(exchange="binance", symbol="SOL/USDT").ask
    bid = ExchangeMarket.objects.get(exchange="bybit", symbol="SOL/USDT").bid
    gross = (bid - ask) / ask * 10_000
    assert sol.spread_bps == gross.quantize(Decimal("0.001")) and 55 < gross < 65
    fees = fees_for("binance").taker_bps + fees_for("bybit").taker_bps  # ccxt: 10 + 7.5 bps
    assert fees == pytest.approx(17.5)
    assert float(sol.net_bps) == pytest.approx(float(gross) - fees, abs=0.002)
    assert (sol.source, sol.replay) == ("exchanges", True)
    # No other symbol's gap survives the fees.
    assert not SpreadSnapshot.objects.exclude(symbol="SOL/USDT").filter(net_bps__gt=0).exists()


def test_the_designed_gap_pushes_one_alert_while_it_stays_open(replay, api, receiver, queued, settings):
    # Four passes: over SOL (the gap) and BTC (none) only. That no other symbol's gap survives
    # the fees is the test above, on a pass over them all.
    settings.MARKET_SYMBOLS = ["BTC", "SOL"]
    subscribe(api, receiver, events=("pair_arb_alert",))
    run_pass()
    run_pass()
    alerts = WebhookDelivery.objects.filter(event__kind="pair_arb_alert")
    assert alerts.count() == 1
    payload = alerts.get().event.payload
    assert (payload["symbol"], payload["venue_a"], payload["venue_b"]) == ("SOL/USDT", "binance", "bybit")
    assert payload["net_bps"] > settings.PAIR_ARB_ALERT_BPS
    # Taker fees set above the gap: the pair falls under the threshold, then reopens.
    settings.EXCHANGE_TAKER_FEES = {"binance": 0.003, "bybit": 0.003}
    run_pass()
    assert alerts.count() == 1
    settings.EXCHANGE_TAKER_FEES = {}
    run_pass()
    assert alerts.count() == 2


def test_a_failed_venue_does_not_pair_with_its_older_top(replay, settings):
    settings.MARKET_SYMBOLS = ["SOL"]
    run_pass()
    ExchangeMarket.objects.update(updated_at=datetime.now(UTC) - timedelta(seconds=30))
    settings.EXCHANGES = ["binance", "okx"]  # bybit not asked this pass
    before = SpreadSnapshot.objects.count()
    run_pass()
    latest = SpreadSnapshot.objects.filter(symbol="SOL/USDT").order_by("-captured_at", "-pk").first()
    assert SpreadSnapshot.objects.count() > before
    assert "bybit" not in (latest.venue_a, latest.venue_b)
