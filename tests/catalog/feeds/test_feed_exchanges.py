"""The exchange feed (catalog/feeds/exchanges/): ccxt parses each venue's recorded answers
(served by a local stand-in of the replay server, or of the venue itself through
EXCHANGE_API_BASES), the rows and numbers stored, idempotent re-runs, and the failures that
must fail the pass with nothing written."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from django.db import transaction

import catalog.feeds.exchanges as exchanges_feed
from a2a_service.core.http import TargetRefused
from catalog.feeds.exchanges import exchanges_prune, parse
from catalog.feeds.exchanges.client import api_bases, folded_query, rebased, replay_url, sample_path
from catalog.feeds.registry import FeedError, FeedPass, feed_get
from catalog.models import Candle, ExchangeMarket, FundingRate, OrderBook, SpreadSnapshot, TokenizedAsset
from tests.support.replay_server import SAMPLES, sample_server

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # the samples' recorded "now"


def sample(venue: str, path: str):
    return json.loads((SAMPLES / f"exchange_{venue}" / f"{path}.json").read_text())


def run_pass(*, replay: bool, started_at: datetime = NOW) -> int:
    """One pass as the runner makes it: in a transaction of its own. It starts at the samples'
    recorded "now" unless told otherwise, so a replay writes the recorded times unshifted."""
    with transaction.atomic():
        return exchanges_feed.run(FeedPass(source="exchanges", replay=replay, started_at=started_at))


def counts() -> tuple[int, int, int, int]:
    return (
        ExchangeMarket.objects.count(),
        Candle.objects.count(),
        FundingRate.objects.count(),
        TokenizedAsset.objects.exclude(source="").count(),
    )


class Seen(list):
    """The request paths the server saw; `hook` may answer a request itself."""

    hook = None


@pytest.fixture
def replay(settings):
    """The replay server stand-in, the feed in replay mode against it."""
    seen = Seen()
    with sample_server(hook=lambda handler: bool(seen.hook and seen.hook(handler)), seen=seen) as (base, _):
        settings.FEEDS_REPLAY_URL = base
        settings.EXCHANGES = ["binance", "okx", "bybit"]
        yield seen


@pytest.fixture
def venue(settings):
    """A stand-in for binance itself (live mode, EXCHANGE_API_BASES): the request keeps the
    venue's path and query; the server finds the sample the way the replay URL folds them."""
    holder: dict = {}

    def hook(handler):
        return holder["hook"](handler) if holder.get("hook") else False

    def to_sample(path: str) -> str:
        return "/exchange_binance/" + sample_path("http://venue" + path)

    with sample_server(hook=hook, to_sample=to_sample) as (base, seen):
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        settings.EXCHANGES = ["binance"]
        settings.MARKET_SYMBOLS = ["BTC", "ETH", "SOL"]
        settings.EXCHANGE_API_BASES = f"binance={base}"
        holder["seen"] = seen
        holder["base"] = base
        yield holder


def test_the_source_is_registered():
    source = feed_get("exchanges")
    assert source is not None and source.run is exchanges_feed.run


def test_replay_pass_parses_every_venue_through_ccxt(replay):
    rows = run_pass(replay=True)
    markets, candles, funding, tokenized = counts()
    # (Order books and the pass's cross-venue spreads: tests/catalog/feeds/test_feed_books.py.)
    assert (
        rows
        == markets
        + candles
        + funding
        + tokenized
        + OrderBook.objects.count()
        + SpreadSnapshot.objects.count()
    )
    assert {m.exchange for m in ExchangeMarket.objects.all()} == {"binance", "okx", "bybit"}
    assert not ExchangeMarket.objects.filter(replay=False).exists()
    assert not Candle.objects.exclude(source="exchanges").exists()
    # Every request went to the replay server under the venue's key.
    assert all(p.startswith(("/exchange_binance/", "/exchange_okx/", "/exchange_bybit/")) for p in replay)

    # binance BTC/USDT: the 24h ticker's numbers, the spread from its bid/ask.
    raw = next(t for t in sample("binance", "api/v3/ticker/24hr") if t["symbol"] == "BTCUSDT")
    m = ExchangeMarket.objects.get(exchange="binance", symbol="BTC/USDT")
    bid, ask = Decimal(raw["bidPrice"]), Decimal(raw["askPrice"])
    assert (m.base, m.quote, m.source, m.replay) == ("BTC", "USDT", "exchanges", True)
    assert m.last_price == Decimal(raw["lastPrice"])
    assert (m.bid, m.ask) == (bid, ask)
    assert m.bid_size == Decimal(raw["bidQty"]) and m.ask_size == Decimal(raw["askQty"])
    assert m.spread_bps == ((ask - bid) / ((ask + bid) / 2) * 10000).quantize(Decimal("0.001"))
    assert 0 < m.spread_bps < 2
    assert m.volume_24h_usd == Decimal(raw["quoteVolume"]).quantize(Decimal("0.01"))
    assert m.volume_24h_base == Decimal(raw["volume"])

    # okx: bidPx/askPx, volCcy24h is the quote volume of a spot pair.
    raw = next(
        t for t in sample("okx", "api/v5/market/tickers/instType=SPOT")["data"] if t["instId"] == "ETH-USDT"
    )
    m = ExchangeMarket.objects.get(exchange="okx", symbol="ETH/USDT")
    assert (m.bid, m.ask, m.last_price) == (
        Decimal(raw["bidPx"]),
        Decimal(raw["askPx"]),
        Decimal(raw["last"]),
    )
    assert m.volume_24h_usd == Decimal(raw["volCcy24h"]).quantize(Decimal("0.01"))

    # Candles: 300 of 1m and 300 of 1h per market, values as the venue sent them.
    assert Candle.objects.filter(exchange="binance", symbol="BTC/USDT", timeframe="1m").count() == 300
    assert Candle.objects.filter(exchange="okx", symbol="SOL/USDT", timeframe="1h").count() == 300
    kline = sample("binance", "api/v3/klines/interval=1m,symbol=BTCUSDT")[-1]
    c = Candle.objects.get(
        exchange="binance", symbol="BTC/USDT", timeframe="1m", open_time=NOW - timedelta(minutes=1)
    )
    assert [c.open, c.high, c.low, c.close, c.volume] == [Decimal(x) for x in kline[1:6]]
    assert c.open_time == datetime.fromtimestamp(kline[0] / 1000, tz=UTC)
    # okx answers newest first, with ms strings: the oldest 1h candle is the last row.
    oldest = sample("okx", "api/v5/market/candles/bar=1H,instId=ETH-USDT")["data"][-1]
    c = Candle.objects.filter(exchange="okx", symbol="ETH/USDT", timeframe="1h").order_by("open_time").first()
    assert c.open_time == NOW - timedelta(hours=300) and c.close == Decimal(oldest[4])
    latest = Candle.objects.filter(symbol="BTC/USDT", timeframe="1m").order_by("-open_time").first()
    assert latest.open_time == NOW - timedelta(minutes=1)

    # Funding: the current rate and the funding times of each venue's perpetual.
    f = FundingRate.objects.get(exchange="binance", symbol="BTC/USDT:USDT")
    assert f.rate == Decimal("0.0001") and f.funding_at == NOW + timedelta(hours=4)
    assert f.mark_price is not None and f.replay
    f = FundingRate.objects.get(exchange="okx", symbol="ETH/USDT:USDT")
    assert f.rate == Decimal("0.0000875")
    assert (f.funding_at, f.next_funding_at) == (NOW + timedelta(hours=4), NOW + timedelta(hours=12))
    f = FundingRate.objects.get(exchange="bybit", symbol="SOL/USDT:USDT")
    assert f.rate == Decimal("0.0001125") and f.next_funding_at == NOW + timedelta(hours=4)
    assert not FundingRate.objects.filter(symbol__startswith="PAXG").exists()

    # Tokenized gold, priced from the deepest venue's ticker.
    paxg = TokenizedAsset.objects.get(symbol="PAXG")
    deepest = ExchangeMarket.objects.filter(symbol="PAXG/USDT").order_by("-volume_24h_usd").first()
    assert (paxg.venue, paxg.last_price) == (deepest.exchange, deepest.last_price)
    assert (paxg.name, paxg.underlying, paxg.source, paxg.replay) == ("PAX Gold", "XAU", "exchanges", True)
    assert paxg.change_24h_pct is not None and abs(paxg.change_24h_pct) < 1
    xaut = TokenizedAsset.objects.get(symbol="XAUT")
    assert xaut.venue in ("okx", "bybit") and 2000 < xaut.last_price < 3000
    # Watchlist markets get candles too (tokenized signals and scalp read them).
    assert Candle.objects.filter(symbol="PAXG/USDT", timeframe="1h").exists()
    assert Candle.objects.filter(symbol="PAXG/USDT", timeframe="1m").exists()


def test_a_rerun_updates_in_place(replay, settings):
    settings.MARKET_SYMBOLS = ["BTC", "ETH"]
    first = run_pass(replay=True)
    before = counts()
    ExchangeMarket.objects.filter(exchange="okx", symbol="BTC/USDT").update(last_price=1, spread_bps=99)
    Candle.objects.filter(exchange="bybit").update(close=1)
    FundingRate.objects.update(rate=0)
    TokenizedAsset.objects.filter(symbol="PAXG").update(last_price=1, name="PAX Gold (staff)")
    # The same recording at the same shift: series whose newest bar is stored as recorded are
    # not rewritten; bybit's (tampered) are.
    untouched = Candle.objects.exclude(exchange="bybit").count()
    assert run_pass(replay=True) == first - untouched
    assert counts() == before
    m = ExchangeMarket.objects.get(exchange="okx", symbol="BTC/USDT")
    assert m.last_price > 90000 and m.spread_bps < 2
    assert not Candle.objects.filter(close=1).exists()
    assert not FundingRate.objects.filter(rate=0).exists()
    paxg = TokenizedAsset.objects.get(symbol="PAXG")
    assert paxg.last_price > 2000 and paxg.name == "PAX Gold (staff)"  # staff's edit kept


def test_replay_skips_venues_without_samples(replay, settings):
    settings.EXCHANGES = ["kraken", "binance"]
    settings.MARKET_SYMBOLS = ["BTC"]
    assert run_pass(replay=True) > 0
    assert set(ExchangeMarket.objects.values_list("exchange", flat=True)) == {"binance"}
    assert not any("kraken" in p for p in replay)


def test_exchange_api_bases_stand_in_for_the_venue(venue):
    rows = run_pass(replay=False)
    assert rows > 0
    # The venue's own paths and queries, on the stand-in's host.
    assert "/api/v3/exchangeInfo" in venue["seen"] and "/fapi/v1/premiumIndex" in venue["seen"]
    assert "/api/v3/klines?interval=1h&limit=300&symbol=ETHUSDT" in venue["seen"]
    assert set(ExchangeMarket.objects.values_list("symbol", flat=True)) == {
        "BTC/USDT",
        "ETH/USDT",
        "SOL/USDT",
        "PAXG/USDT",
    }
    assert not ExchangeMarket.objects.filter(replay=True).exists()
    assert Candle.objects.filter(symbol="SOL/USDT", timeframe="1h").count() == 300
    assert FundingRate.objects.filter(symbol="BTC/USDT:USDT", rate=Decimal("0.0001")).exists()


def test_a_loopback_stand_in_is_refused_unless_allowed(venue, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    with pytest.raises(TargetRefused, match="non-public"):
        run_pass(replay=False)
    assert counts() == (0, 0, 0, 0)
    assert venue["seen"] == []


def _answer(status: int, body: bytes, headers: dict | None = None):
    def hook(handler):
        if "/klines" not in handler.path:
            return False
        handler.send_response(status)
        for k, v in (headers or {"Content-Type": "application/json"}).items():
            handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True

    return hook


@pytest.mark.parametrize(
    "hook,reason",
    [
        (_answer(500, b'{"code":-1000,"msg":"internal"}'), "500"),
        (_answer(200, b'[[1795435140000,"97000.1","97010.0"'), "malformed JSON"),
        (_answer(200, b""), "malformed JSON"),
        (_answer(200, b'{"unexpected":"shape"}'), "binance"),
        (_answer(302, b"", {"Location": "http://10.0.0.1/latest/meta-data/"}), "302"),
    ],
    ids=["500", "malformed-json", "empty-body", "wrong-shape", "redirect-to-private"],
)
def test_a_bad_answer_fails_the_pass_and_writes_nothing(venue, hook, reason):
    venue["hook"] = hook
    with pytest.raises(FeedError, match=reason):
        run_pass(replay=False)
    assert counts() == (0, 0, 0, 0)
    # The redirect was not followed.
    assert not any("meta-data" in p for p in venue["seen"])


def test_a_huge_body_fails_the_pass(venue, settings):
    settings.FEEDS_MAX_BODY_BYTES = 2000  # the exchangeInfo sample is larger
    with pytest.raises(FeedError, match="more than 2000 bytes"):
        run_pass(replay=False)
    assert counts() == (0, 0, 0, 0)


def test_a_timeout_fails_the_pass(venue, settings):
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.2

    def slow(handler):
        if "premiumIndex" in handler.path:
            time.sleep(1.0)
        return False

    venue["hook"] = slow
    started = time.monotonic()
    # Raised as the network error it is (the runner's auto mode replays those).
    with pytest.raises(requests.exceptions.Timeout):
        run_pass(replay=False)
    assert time.monotonic() - started < 5
    assert counts() == (0, 0, 0, 0)


def test_one_failing_venue_does_not_stop_the_others(replay, settings, caplog):
    settings.MARKET_SYMBOLS = ["BTC"]
    settings.EXCHANGE_API_BASES = ""

    # okx's funding answer is garbage (after its tickers and candles): okx fails and leaves
    # nothing behind, binance and bybit go on.
    def garbage(handler):
        if "/exchange_okx/api/v5/public/funding-rate" not in handler.path:
            return False
        handler.send_response(200)
        handler.send_header("Content-Length", "9")
        handler.end_headers()
        handler.wfile.write(b"{not json")
        return True

    replay.hook = garbage
    assert run_pass(replay=True) > 0
    assert set(ExchangeMarket.objects.values_list("exchange", flat=True)) == {"binance", "bybit"}
    assert not Candle.objects.filter(exchange="okx").exists()
    assert "okx failed" in caplog.text


def test_malformed_api_bases_fail_the_pass(settings):
    settings.EXCHANGE_API_BASES = "binance"
    with pytest.raises(FeedError, match="not id=url"):
        run_pass(replay=False)


def test_prune_deletes_old_candles_and_funding_only():
    old, new = NOW - timedelta(days=30), NOW
    for t in (old, new):
        Candle.objects.create(
            exchange="binance",
            symbol="BTC/USDT",
            timeframe="1m",
            open_time=t,
            open=1,
            high=1,
            low=1,
            close=1,
            volume=1,
        )
        FundingRate.objects.create(
            exchange="binance", symbol="BTC/USDT:USDT", rate=Decimal("0.0001"), funding_at=t, observed_at=t
        )
    assert exchanges_prune(before=NOW - timedelta(days=14)) == 2
    assert list(Candle.objects.values_list("open_time", flat=True)) == [new]
    assert list(FundingRate.objects.values_list("funding_at", flat=True)) == [new]


def test_the_free_catalogs_show_the_ingested_rows(replay, settings, api):
    settings.MARKET_SYMBOLS = ["BTC", "ETH"]
    run_pass(replay=True)
    body = api.get("/api/a2a/exchange/markets").json()
    assert body["count"] == ExchangeMarket.objects.count() > 0
    assert set(body["exchanges"]) == {"binance", "okx", "bybit"}
    btc = next(m for m in body["markets"] if m["exchange"] == "binance" and m["symbol"] == "BTC/USDT")
    assert btc["spread_bps"] == float(
        ExchangeMarket.objects.get(exchange="binance", symbol="BTC/USDT").spread_bps
    )
    assert body["as_of"].endswith("Z")
    sources = {(s["name"], s["venue"]): s for s in body["sources"]}
    assert set(sources) == {("exchanges", "binance"), ("exchanges", "okx"), ("exchanges", "bybit")}
    assert all(s["replay"] and s["items"] > 0 for s in sources.values())

    body = api.get("/api/a2a/tokenized/watchlist").json()
    assets = {a["symbol"]: a for a in body["watchlist"]}
    assert {"PAXG", "XAUT"} <= set(assets) and assets["PAXG"]["last_price"] > 2000
    assert body["as_of"] and any(s["name"] == "exchanges" and s["replay"] for s in body["sources"])


def test_parsing_helpers():
    assert parse.spread_bps(Decimal("99.99"), Decimal("100.01")) == Decimal("2.000")
    assert parse.spread_bps(Decimal("100.01"), Decimal("99.99")) is None  # crossed
    assert parse.spread_bps(None, Decimal(1)) is None
    t = parse.tick(
        {"last": 50, "bid": 49.9, "ask": 50.1, "baseVolume": 10, "quoteVolume": None, "open": 40},
        {"symbol": "X/USD", "base": "X", "quote": "USD"},
    )
    assert (t.volume_usd, t.change_24h_pct) == (Decimal("500.00"), Decimal("25.0000"))
    t = parse.tick({"last": 2, "quoteVolume": 5}, {"symbol": "X/BTC", "base": "X", "quote": "BTC"})
    assert t.volume_usd is None  # not a dollar quote
    with pytest.raises(FeedError):
        parse.bars([[1, "a", None, 1, 1, 1]])
    f = parse.funding({"symbol": "X/USDT:USDT", "fundingRate": "-0.0002"}, observed_at=NOW.replace(second=7))
    assert (
        f is not None and f.rate == Decimal("-0.0002") and f.funding_at == NOW and f.next_funding_at is None
    )
    assert parse.funding({"symbol": "X/USDT:USDT", "fundingRate": None}, observed_at=NOW) is None


def test_url_rewriting(settings):
    url = "https://api.binance.com/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=120"
    assert rebased(url, "http://127.0.0.1:9000/prefix") == (
        "http://127.0.0.1:9000/prefix/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=120"
    )
    assert (
        replay_url(url, "http://r/exchange_binance")
        == "http://r/exchange_binance/api/v3/klines/interval=1m,symbol=BTCUSDT"
    )
    assert (
        replay_url("https://api.binance.com/api/v3/exchangeInfo", "http://r/x")
        == "http://r/x/api/v3/exchangeInfo"
    )
    assert folded_query("symbols=%5B%22A%22%5D&since=1&category=spot") == "category=spot"
    settings.EXCHANGE_API_BASES = " binance=http://a:1/ , okx=https://b "
    assert api_bases() == {"binance": "http://a:1", "okx": "https://b"}


def test_every_replayed_request_has_a_sample():
    """The samples a replay needs exist (what sample_path names for each recorded URL)."""
    for venue in ("binance", "okx", "bybit"):
        assert (SAMPLES / f"exchange_{venue}").is_dir()
    assert Path(SAMPLES / "exchange_binance" / "api/v3/exchangeInfo.json").is_file()


def test_a_single_symbol_replays_on_every_venue(replay, settings):
    """One symbol alone: venues that would ask for it alone are asked for all their tickers."""
    settings.MARKET_SYMBOLS = ["ETH"]
    settings.TOKENIZED_WATCHLIST = []
    run_pass(replay=True)
    assert sorted(ExchangeMarket.objects.values_list("exchange", "symbol")) == [
        ("binance", "ETH/USDT"),
        ("bybit", "ETH/USDT"),
        ("okx", "ETH/USDT"),
    ]
    assert FundingRate.objects.filter(symbol="ETH/USDT:USDT").count() == 3
    assert not TokenizedAsset.objects.exclude(source="").exists()


def test_a_failed_venue_is_warned_of_on_the_pass(replay, settings):
    """The runner's FeedPass keeps warnings (`warn`); a venue that failed is one."""
    settings.EXCHANGES = ["binance", "nosuchvenue"]
    settings.MARKET_SYMBOLS = ["BTC"]
    settings.TOKENIZED_WATCHLIST = []

    class WarnedPass(FeedPass):
        def __init__(self) -> None:
            super().__init__(source="exchanges", replay=False)
            self.notes: list[str] = []

        def warn(self, text: str) -> None:
            self.notes.append(text)

    feed_pass = WarnedPass()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    # binance live is not reachable from a test: point it at the stand-in's binance samples.
    settings.EXCHANGE_API_BASES = f"binance={settings.FEEDS_REPLAY_URL}/exchange_binance"
    with transaction.atomic():
        with pytest.raises(FeedError, match="nosuchvenue is not a ccxt exchange id"):
            # binance's live URLs keep their query: the plain replay stand-in 404s on klines,
            # so both venues fail and the pass fails with both reasons.
            exchanges_feed.run(feed_pass)
    assert any("nosuchvenue" in n for n in feed_pass.notes) and any("binance" in n for n in feed_pass.notes)


def test_a_replay_moves_candles_and_funding_to_the_pass_start(replay, settings):
    """Recorded samples would age: a replay pass moves each series by whole bars so its
    newest bar ends at the pass's start, and the funding times by whole hours with the
    recording's "now"; the values (the shape) are the recorded ones."""
    settings.MARKET_SYMBOLS = ["BTC"]
    settings.TOKENIZED_WATCHLIST = []
    start = NOW + timedelta(days=3, hours=5, minutes=17, seconds=42)
    run_pass(replay=True, started_at=start)
    minute_shift = timedelta(days=3, hours=5, minutes=17)
    hour_shift = timedelta(days=3, hours=5)
    m1 = Candle.objects.filter(exchange="binance", symbol="BTC/USDT", timeframe="1m").order_by("open_time")
    assert m1.count() == 300
    assert m1.last().open_time + timedelta(minutes=1) == start.replace(second=0)
    kline = sample("binance", "api/v3/klines/interval=1m,symbol=BTCUSDT")
    assert [c.close for c in m1] == [Decimal(k[4]) for k in kline]
    assert m1.first().open_time == datetime.fromtimestamp(kline[0][0] / 1000, tz=UTC) + minute_shift
    h1 = Candle.objects.filter(exchange="okx", symbol="BTC/USDT", timeframe="1h").order_by("open_time")
    assert h1.last().open_time + timedelta(hours=1) == start.replace(minute=0, second=0)
    assert h1.last().open_time == NOW - timedelta(hours=1) + hour_shift
    assert all(c.replay for c in h1)
    # Funding: binance's reading is stamped with the recorded now; okx's is not (its newest
    # candle's end stands in for it): both move by whole hours.
    f = FundingRate.objects.get(exchange="binance", symbol="BTC/USDT:USDT")
    assert f.funding_at == NOW + timedelta(hours=4) + hour_shift
    f = FundingRate.objects.get(exchange="okx", symbol="BTC/USDT:USDT")
    assert (f.funding_at, f.next_funding_at) == (
        NOW + timedelta(hours=4) + hour_shift,
        NOW + timedelta(hours=12) + hour_shift,
    )
    # A minute later the 1m series moves by a bar; the 1h one (same hour) is not rewritten.
    h1_rows = {c.pk: c.observed_at for c in h1}
    run_pass(replay=True, started_at=start + timedelta(minutes=1))
    assert m1.last().open_time + timedelta(minutes=1) == start.replace(second=0) + timedelta(minutes=1)
    assert m1.last().close == Decimal(kline[-1][4])
    assert {c.pk: c.observed_at for c in h1} == h1_rows


def test_a_live_pass_fetches_only_the_bars_it_lacks(venue, monkeypatch):
    """The first live pass fetches the whole history (EXCHANGE_CANDLE_LIMITS); the next only
    the bars since the newest stored one, that one included (it was still forming)."""
    run_pass(replay=False)
    assert "/api/v3/klines?interval=1m&limit=300&symbol=BTCUSDT" in venue["seen"]
    venue["seen"].clear()
    # Three minutes after the newest stored 1m bar opened (NOW - 1 min).
    monkeypatch.setattr(exchanges_feed.timezone, "now", lambda: NOW + timedelta(minutes=2, seconds=5))
    run_pass(replay=False)
    assert "/api/v3/klines?interval=1m&limit=4&symbol=BTCUSDT" in venue["seen"]
    assert "/api/v3/klines?interval=1h&limit=2&symbol=BTCUSDT" in venue["seen"]
    # The stand-in answers every bar; only the newest `limit` are written again.
    assert Candle.objects.filter(exchange="binance", symbol="BTC/USDT", timeframe="1m").count() == 300
