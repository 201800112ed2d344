"""The equities feed (catalog/feeds/equities/): Stooq's CSV quotes parsed from the recorded
sample (times in Stooq's zone, spot gold as XAUUSD), N/D rows skipped with a warning, the
watchlist's underlyings asked for and given their reference price, idempotent re-runs, the
failures that fail the pass and write nothing, and the replay's time shift."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.db import transaction

import catalog.feeds.equities as equities_feed
from catalog.feeds.equities.parse import quotes_parse, wanted, wanted_all
from catalog.feeds.registry import FeedError, FeedPass, feed_get
from catalog.feeds.replay import SAMPLES
from catalog.feeds.runner import feed_run
from catalog.models import EquityQuote, TokenizedAsset
from tests.support.feedserver import Answer, FeedServer, closed_port
from tests.support.sample_server import SampleServer

pytestmark = pytest.mark.django_db

WARSAW = ZoneInfo("Europe/Warsaw")
SAMPLE = (SAMPLES / "equity_quotes_url" / "quotes.csv").read_bytes()
DEFAULT = ["SPY", "QQQ", "AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOGL", "META", "COIN", "MSTR"]
HEADER = b"Symbol,Date,Time,Open,High,Low,Close,Volume,Name\r\n"


def parse(body: bytes, symbols=(*DEFAULT, "XAU")):
    return quotes_parse(body, asked=wanted_all(symbols), zone=WARSAW)


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    s = FeedServer()
    settings.EQUITY_QUOTES_URL = f"{s.url}/q/l/"
    yield s
    s.close()


@pytest.fixture
def gold(db):
    """The default watchlist's tokens as the exchanges feed writes them (underlying XAU)."""
    now = datetime.now(UTC)
    for symbol, price in (("PAXG", "2652.80"), ("XAUT", "2645.38")):
        TokenizedAsset.objects.create(
            symbol=symbol,
            name=symbol,
            venue="okx",
            underlying="XAU",
            last_price=Decimal(price),
            source="exchanges",
            updated_at=now,
        )
    TokenizedAsset.objects.create(
        symbol="NOREF", name="No reference", venue="okx", underlying="", source="exchanges"
    )


def test_symbols_as_stooq_names_them():
    assert wanted("aapl").venue_symbol == "aapl.us" and wanted("AAPL").currency == "USD"
    assert wanted("BRK.B").venue_symbol == "brk-b.us"
    assert (wanted("XAU").venue_symbol, wanted("XAU").symbol) == ("xauusd", "XAU")
    assert (wanted("SAP.DE").venue_symbol, wanted("SAP.DE").currency) == ("sap.de", "EUR")
    assert wanted("") is None and wanted("a b") is None and wanted("<script>") is None
    assert [w.symbol for w in wanted_all(["SPY", "spy", "AAPL"])] == ["SPY", "AAPL"]


def test_the_sample_parses_with_stooq_times_and_spot_gold():
    parsed = parse(SAMPLE)
    assert len(parsed.quotes) == 12 and parsed.warnings == []  # XAGUSD was not asked for
    quotes = {q.symbol: q for q in parsed.quotes}
    aapl = quotes["AAPL"]
    assert (aapl.venue_symbol, aapl.name, aapl.price, aapl.currency) == (
        "AAPL.US",
        "APPLE",
        Decimal("229.87"),
        "USD",
    )
    assert (aapl.open, aapl.high, aapl.low, aapl.volume) == (
        Decimal("228.10"),
        Decimal("230.42"),
        Decimal("227.51"),
        48213562,
    )
    # 22:00:09 in Warsaw (CET, UTC+1 in November): the US close, 16:00 New York.
    assert aapl.quoted_at == datetime(2026, 11, 20, 21, 0, 9, tzinfo=UTC)
    gold = quotes["XAU"]
    assert (gold.venue_symbol, gold.price, gold.volume) == ("XAUUSD", Decimal("2646.30"), None)


def test_nd_rows_are_skipped_with_a_warning_and_missing_rows_noted():
    body = HEADER + (
        b"AAPL.US,2026-11-20,22:00:09,228.1,230.42,227.51,229.87,48213562,APPLE\r\n"
        b"ZZZZ.US,N/D,N/D,N/D,N/D,N/D,N/D,N/D,ZZZZ.US\r\n"
        b"MSFT.US,2026-11-20,22:00:11,1,2,1,not-a-price,1,MICROSOFT\r\n"
        b"NOTASKED.US,2026-11-20,22:00:11,1,2,1,3,1,X\r\n"
        b"\r\n"
    )
    parsed = parse(body, symbols=["AAPL", "ZZZZ", "MSFT", "NVDA"])
    assert [q.symbol for q in parsed.quotes] == ["AAPL"]
    assert parsed.warnings == [
        "no row for NVDA",
        "no data (N/D) for ZZZZ",
        "unreadable row(s) skipped: MSFT",
    ]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\r\n",
        b"Exceeded the daily hits limit",
        b"<html><body>captcha</body></html>",
        b"Date,Open,High,Low,Close,Volume\r\n2026-11-20,1,2,1,2,3\r\n",
    ],
    ids=["empty", "blank", "hits-limit", "html", "other-csv"],
)
def test_an_answer_that_is_not_the_quote_csv_is_refused(body):
    with pytest.raises(FeedError):
        parse(body)


def test_registered():
    source = feed_get("equities")
    assert source is not None and source.run is equities_feed.equities_run
    assert source.url_settings == ("EQUITY_QUOTES_URL",)


def test_a_pass_asks_for_the_symbols_and_the_watchlist_underlyings(settings, server, gold):
    server.routes["/q/l/"] = Answer(body=SAMPLE, headers={"Content-Type": "text/csv"})
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "ok" and state.last_error == "" and state.last_note == ""
    assert state.rows_written == 12 + 2  # the quotes, and the two gold tokens' reference price
    assert server.hits == ["/q/l/"]
    assert EquityQuote.objects.count() == 12
    aapl = EquityQuote.objects.get(symbol="AAPL")
    assert (aapl.source, aapl.replay, aapl.price, aapl.venue_symbol) == (
        "equities",
        False,
        Decimal("229.87"),
        "AAPL.US",
    )
    paxg = TokenizedAsset.objects.get(symbol="PAXG")
    assert paxg.underlying_price == Decimal("2646.30") and paxg.underlying_source == "equities"
    assert paxg.underlying_as_of == datetime(2026, 11, 20, 21, 59, tzinfo=UTC) and not paxg.underlying_replay
    assert paxg.last_price == Decimal("2652.80")  # the exchanges feed's column is left alone
    assert TokenizedAsset.objects.get(symbol="NOREF").underlying_price is None


def test_the_request_is_stooqs_own(settings, gold):
    seen = {}
    settings.EQUITY_SYMBOLS = ["AAPL", "BRK.B"]

    class Recorder:
        content = SAMPLE

    def fetch(url, **kwargs):
        seen["url"] = url
        return Recorder()

    feed_pass = FeedPass(source="equities")
    feed_pass.fetch = fetch  # type: ignore[method-assign]
    settings.EQUITY_QUOTES_URL = "https://stooq.com/q/l/"
    with transaction.atomic():
        equities_feed.equities_run(feed_pass)
    assert seen["url"] == "https://stooq.com/q/l/?s=aapl.us,brk-b.us,xauusd&f=sd2t2ohlcvn&h&e=csv"
    assert any("no row for BRK.B" in w for w in feed_pass.warnings)


def test_a_rerun_updates_in_place(settings, server, gold):
    server.routes["/q/l/"] = Answer(body=SAMPLE)
    feed_run(name="equities", mode="live")
    ids = set(EquityQuote.objects.values_list("id", flat=True))
    server.routes["/q/l/"] = Answer(body=SAMPLE.replace(b"229.87", b"231.05").replace(b"2646.30", b"2660.00"))
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "ok" and set(EquityQuote.objects.values_list("id", flat=True)) == ids
    assert EquityQuote.objects.get(symbol="AAPL").price == Decimal("231.05")
    assert TokenizedAsset.objects.get(symbol="XAUT").underlying_price == Decimal("2660.00")


def test_nd_symbols_are_a_warning_and_all_nd_fails(settings, server, gold):
    settings.EQUITY_SYMBOLS = ["AAPL", "ZZZZ"]
    server.routes["/q/l/"] = Answer(
        body=HEADER
        + b"AAPL.US,2026-11-20,22:00:09,228.1,230.42,227.51,229.87,48213562,APPLE\r\n"
        + b"ZZZZ.US,N/D,N/D,N/D,N/D,N/D,N/D,N/D,ZZZZ.US\r\n"
        + b"XAUUSD,N/D,N/D,N/D,N/D,N/D,N/D,N/D,XAUUSD\r\n"
    )
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "ok" and "no data (N/D) for ZZZZ, XAU" in state.last_note
    assert list(EquityQuote.objects.values_list("symbol", flat=True)) == ["AAPL"]
    assert TokenizedAsset.objects.get(symbol="PAXG").underlying_price is None

    EquityQuote.objects.all().delete()
    server.routes["/q/l/"] = Answer(body=HEADER + b"AAPL.US,N/D,N/D,N/D,N/D,N/D,N/D,N/D,AAPL.US\r\n")
    settings.EQUITY_SYMBOLS = ["AAPL"]
    TokenizedAsset.objects.all().delete()
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "failed" and "no quote could be read" in state.last_error
    assert not EquityQuote.objects.exists()


@pytest.mark.parametrize(
    "answer,reason",
    [
        (Answer(status=500, body=b"Internal Server Error"), "answered 500"),
        (Answer(body=b"Symbol,Date,Time\r\nAAPL.US,2026-11"), "not a Stooq quote CSV"),
        (Answer(body=b"Exceeded the daily hits limit"), "not a Stooq quote CSV"),
        (Answer(body=b""), "empty body"),
        (
            Answer(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
            "answered 302",
        ),
        (Answer(status=301, headers={"Location": "http://10.0.0.1/q/l/"}), "answered 301"),
    ],
    ids=["500", "garbage", "hits-limit", "empty", "redirect-metadata", "redirect-private"],
)
def test_a_bad_answer_fails_the_pass_and_writes_nothing(settings, server, gold, answer, reason):
    server.routes["/q/l/"] = answer
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "failed" and reason in state.last_error and state.consecutive_failures == 1
    assert not EquityQuote.objects.exists()
    assert not TokenizedAsset.objects.filter(underlying_price__isnull=False).exists()


def test_a_timeout_or_a_huge_answer_fails_the_pass(settings, server, gold):
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.2
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 1.0
    server.routes["/q/l/"] = Answer(body=SAMPLE, delay=1.5)
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "failed" and ("Timeout" in state.last_error or "Deadline" in state.last_error)
    settings.FEEDS_MAX_BODY_BYTES = 256
    server.routes["/q/l/"] = Answer(body=SAMPLE)
    state = feed_run(name="equities", mode="live", force=True)
    assert state.outcome == "failed" and "more than 256 bytes" in state.last_error
    assert not EquityQuote.objects.exists()


def test_a_private_address_is_refused(settings, gold):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    settings.EQUITY_QUOTES_URL = f"http://127.0.0.1:{closed_port()}/q/l/"
    state = feed_run(name="equities", mode="live")
    assert state.outcome == "failed" and state.last_error.startswith("TargetRefused")


def test_replay_moves_the_quotes_to_the_pass(settings, gold):
    s = SampleServer()
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        settings.FEEDS_REPLAY_URL = s.url
        settings.EQUITY_QUOTES_URL = "https://unreachable.invalid/q/l/"
        started = datetime(2026, 12, 1, 15, 30, 40, tzinfo=UTC)
        with transaction.atomic():
            rows = equities_feed.equities_run(FeedPass(source="equities", replay=True, started_at=started))
        assert rows == 14 and s.paths() == ["/equity_quotes_url/quotes.csv"]
    finally:
        s.close()
    gold_quote = EquityQuote.objects.get(symbol="XAU")
    # The newest quote (gold, 21:59 UTC on the 20th) lands on the pass's start (to the minute);
    # the others keep their distance to it.
    assert gold_quote.quoted_at == datetime(2026, 12, 1, 15, 30, tzinfo=UTC) and gold_quote.replay
    aapl = EquityQuote.objects.get(symbol="AAPL")
    assert gold_quote.quoted_at - aapl.quoted_at == timedelta(minutes=58, seconds=51)
    paxg = TokenizedAsset.objects.get(symbol="PAXG")
    assert paxg.underlying_replay and paxg.underlying_as_of == gold_quote.quoted_at
