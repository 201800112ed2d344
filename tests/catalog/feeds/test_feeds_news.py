"""The news adapter (catalog/feeds/news/): RSS and Atom parsing on the recorded samples,
de-duplication, ticker and market-group tagging, idempotent re-runs that keep staff prices,
the failure cases of a feed from outside, and the catalogs and unlock that sell the items."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from catalog.feeds.news.parse import bounded, feeds_setting, market_group, parse_feed, tickers_in, title_hash
from catalog.feeds.registry import FeedError
from catalog.feeds.replay import SAMPLES
from catalog.feeds.runner import feed_run
from catalog.models import NewsItem
from tests.support.feedserver import Answer, FeedServer, closed_port

pytestmark = pytest.mark.django_db
COINDESK = (SAMPLES / "news_feeds" / "0.xml").read_bytes()
COINTELEGRAPH = (SAMPLES / "news_feeds" / "1.xml").read_bytes()
SEC = (SAMPLES / "news_feeds" / "3.xml").read_bytes()

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example Markets</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2026-11-23T10:00:00Z</updated>
  <entry>
    <title type="html">Apple &lt;b&gt;beats&lt;/b&gt; estimates (NASDAQ: AAPL)</title>
    <link href="https://example.com/apple-beats"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2026-11-23T09:30:00Z</updated>
    <summary type="html">&lt;p&gt;Apple Inc. reported revenue of $124.3 billion.&lt;/p&gt;</summary>
    <content type="html">&lt;p&gt;Apple Inc. reported revenue of $124.3 billion, up 6%.&lt;/p&gt;&lt;p&gt;Services grew 14%.&lt;/p&gt;</content>
  </entry>
</feed>"""


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    s = FeedServer()
    yield s
    s.close()


def _rss(body: bytes) -> Answer:
    return Answer(body=body, headers={"Content-Type": "application/rss+xml"})


def _feeds(settings, server, *entries: tuple[str, str, bytes | Answer]) -> None:
    """Serve each (category, path, body) and configure NEWS_FEEDS with them."""
    parts = []
    for category, path, body in entries:
        server.routes[path] = body if isinstance(body, Answer) else _rss(body)
        parts.append(f"{category}|{server.url}{path}|{path.strip('/').split('.')[0]}")
    settings.NEWS_FEEDS = ",".join(parts)


# --- parsing ---------------------------------------------------------------------------------------
def test_rss_sample_parses_with_ids_links_times_content_and_tickers():
    feed = parse_feed(COINDESK)
    assert feed.title.startswith("CoinDesk") and len(feed.entries) == 8
    first = feed.entries[0]
    assert first.external_id == "b1f0c6de-4e0d-4a63-9d3b-5f1b2c0e7a11"
    assert first.title == "Bitcoin Holds Above $91K as ETF Inflows Resume After Three-Day Lull"
    assert first.link.endswith("/bitcoin-holds-above-91k-as-etf-inflows-resume-after-three-day-lull")
    assert first.published_at == datetime(2026, 11, 23, 9, 15, tzinfo=UTC)
    assert "<p>" in first.content and "Farside Investors" in first.text and "<p>" not in first.text
    assert first.summary.startswith("U.S.-listed spot bitcoin ETFs drew $412 million")
    assert first.tickers == ["BTC", "ETH", "SOL"]


def test_sec_rss_times_in_other_zones_are_utc():
    entry = parse_feed(SEC).entries[0]
    assert entry.external_id == "2026-214" and entry.published_at == datetime(
        2026, 11, 20, 20, 12, tzinfo=UTC
    )


def test_atom_parses_html_titles_and_full_content():
    feed = parse_feed(ATOM)
    (entry,) = feed.entries
    assert feed.title == "Example Markets"
    assert entry.title == "Apple beats estimates (NASDAQ: AAPL)"
    assert entry.external_id == "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a"
    assert entry.link == "https://example.com/apple-beats"
    assert entry.text == "Apple Inc. reported revenue of $124.3 billion, up 6%. Services grew 14%."
    assert entry.tickers == ["AAPL"] and entry.published_at == datetime(2026, 11, 23, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Bitcoin and ether rally; SOL follows", ["BTC", "ETH", "SOL"]),
        ("Shares of Nvidia Corp. (NASDAQ: NVDA) and Walmart (NYSE: WMT)", ["NVDA", "WMT"]),
        ("$SPY and $QQQ rise; $5 billion is not a ticker", ["SPY", "QQQ"]),
        ("El sol brilla; the link is here", []),  # lower-case words are not tickers
        ("Tether mints USDT on Tron", ["USDT", "TRX"]),
    ],
)
def test_tickers_are_tagged(text, expected):
    assert sorted(tickers_in(text)) == sorted(expected)


# Equity headlines name a stock by its bare ticker ("NVDA jumps", "AAPL falls as ..."): the
# tickers the service knows (its equity symbols, the tokenized watchlist's underlyings, the
# maintained list, a few unambiguous company names) are read in words of their own, while the
# capitalised words of ordinary prose are not tickers even when an operator lists them.
@pytest.mark.parametrize(
    "text,expected",
    [
        ("NVDA jumps 6% as data-center revenue beats estimates", ["NVDA"]),
        ("AAPL falls as iPhone sales slump in China", ["AAPL"]),
        ("Why TSLA and PLTR led the Nasdaq higher on Friday", ["TSLA", "PLTR"]),
        ("Exxon (XOM.N) and Nvidia (NVDA.O) gain", ["XOM", "NVDA"]),
        ("Nvidia and Microsoft extend gains; Alphabet slips", ["NVDA", "MSFT", "GOOGL"]),
        # Word boundaries: a ticker inside a longer word, a URL slug or a cashtag of its own is
        # not a bare ticker twice, and lower case is prose.
        ("NVDAX token premium widens; see example.com/aapl-news", []),
        ("nvda and aapl in lower case are not tickers", []),
        # Ordinary capitalised words and abbreviations are never bare tickers.
        ("US stocks: IT spending lifts ALL boats, A CEO says; ON balance NOW is the time", []),
        ("AI, EV and ETF flows: what the SEC and the Fed said", []),
        # In a shouted all-caps headline every word is in capitals: "COIN" and "SPY" are words
        # there, not Coinbase and the S&P 500 ETF.
        ("CRYPTO COIN PRICES SLIDE AS SPY AGENCY WARNS", []),
        # A cashtag or an exchange prefix still names any ticker, ordinary word or not.
        ("$ALL and (NYSE: IT) report earnings", ["ALL", "IT"]),
    ],
)
def test_bare_equity_tickers_are_tagged_and_ordinary_words_are_not(settings, text, expected):
    # An operator who lists Allstate (ALL), Gartner (IT) and Agilent (A) still gets no ticker
    # from the words "ALL", "IT" and "A" of a headline.
    settings.EQUITY_SYMBOLS = [*settings.EQUITY_SYMBOLS, "ALL", "IT", "A", "ON", "NOW"]
    assert sorted(tickers_in(text)) == sorted(expected)


def test_the_configured_and_tokenized_underlyings_are_known_tickers(settings):
    text = "RKLB soars after launch contract; SBET slides; ZZZQ is nobody's ticker"
    assert tickers_in(text) == []
    settings.EQUITY_SYMBOLS = [*settings.EQUITY_SYMBOLS, "RKLB"]
    settings.TOKENIZED_WATCHLIST = [*settings.TOKENIZED_WATCHLIST, "SBETX|SharpLink xStock|SBET"]
    assert sorted(tickers_in(text)) == ["RKLB", "SBET"]
    # And those the stored rows price (a token whose underlying staff set in the admin).
    assert tickers_in("ZZZQ rallies", known=frozenset({"ZZZQ"})) == ["ZZZQ"]


def test_market_groups():
    assert market_group("crypto", "Bitcoin rallies", ["BTC"]) == "crypto"
    assert market_group("crypto", "SEC charges a DeFi lender", []) == "regulation"
    assert market_group("equity", "Nvidia rises", ["NVDA"]) == "equities"
    assert market_group("general", "Minutes of the Federal Open Market Committee", []) == "macro"
    assert market_group("general", "SEC adopts amendments", []) == "regulation"


def test_helpers():
    assert title_hash("Bitcoin Holds Above $91K!") == title_hash("bitcoin holds  above 91k")
    assert len(bounded("word " * 200, 50)) <= 50 and bounded("short", 50) == "short"
    with pytest.raises(FeedError):
        feeds_setting("stocks|https://example.com/rss")
    assert feeds_setting("crypto|https://www.coindesk.com/rss")[0].name == "coindesk.com"


# --- one pass --------------------------------------------------------------------------------------
def test_a_pass_writes_items_priced_by_category_with_provenance(settings, server):
    _feeds(settings, server, ("crypto", "/cd.xml", COINDESK), ("general", "/sec.xml", SEC))
    state = feed_run(name="news", mode="live")
    assert state.outcome == "ok" and state.rows_written == 11 and state.last_replay is False
    btc = NewsItem.objects.get(external_id="b1f0c6de-4e0d-4a63-9d3b-5f1b2c0e7a11")
    assert btc.source == "cd" and btc.category == "crypto" and btc.price_atomic == 100_000
    assert btc.tickers == ["BTC", "ETH", "SOL"] and btc.market_group == "crypto" and btc.replay is False
    assert (
        btc.teaser.startswith("U.S.-listed spot bitcoin ETFs")
        and len(btc.teaser) <= settings.NEWS_TEASER_CHARS
    )
    assert "Farside Investors" in btc.body and "<p>" in btc.content
    sec = NewsItem.objects.get(external_id="2026-214")
    assert sec.price_atomic == 180_000 and sec.market_group == "regulation" and sec.category == "general"


def test_prices_come_from_the_settings(settings, server):
    settings.NEWS_PRICE_CRYPTO_USDC = "0.25"
    _feeds(settings, server, ("crypto", "/cd.xml", COINDESK))
    feed_run(name="news", mode="live")
    assert set(NewsItem.objects.values_list("price_atomic", flat=True)) == {250_000}


def test_a_rerun_is_idempotent_updates_values_and_keeps_a_staff_price(settings, server):
    _feeds(settings, server, ("crypto", "/cd.xml", COINDESK))
    feed_run(name="news", mode="live")
    count = NewsItem.objects.count()
    item = NewsItem.objects.get(external_id="3c9e4f7a-1b2d-4c8e-a0f1-9e8d7c6b5a42")
    item.price_atomic = 55_000  # staff override in the admin
    item.save()
    ingested = item.ingested_at
    server.routes["/cd.xml"] = _rss(
        COINDESK.replace(b"More than two-thirds of staked SOL voted", b"Most SOL voted")
    )
    state = feed_run(name="news", mode="live")
    assert NewsItem.objects.count() == count and state.rows_written == 1  # one item changed
    item.refresh_from_db()
    assert "Most SOL voted" in item.body and item.price_atomic == 55_000 and item.ingested_at == ingested
    assert feed_run(name="news", mode="live").rows_written == 0


def test_the_same_story_in_two_feeds_is_one_item(settings, server):
    _feeds(settings, server, ("crypto", "/cd.xml", COINDESK), ("crypto", "/ct.xml", COINTELEGRAPH))
    feed_run(name="news", mode="live")
    same = NewsItem.objects.filter(
        title_hash=title_hash("Bitcoin holds above $91K as ETF inflows resume after three-day lull")
    )
    assert same.count() == 1 and same.get().source == "cd"
    assert NewsItem.objects.filter(source="ct").count() == 5
    # An entry met again by its link (no id) is the same row too.
    no_ids = COINTELEGRAPH.replace(b"<guid", b"<!--guid").replace(b"</guid>", b"</guid-->")
    server.routes["/ct.xml"] = _rss(no_ids)
    before = NewsItem.objects.count()
    feed_run(name="news", mode="live")
    assert NewsItem.objects.count() == before


def test_one_failing_feed_is_reported_while_the_others_are_written(settings, server):
    _feeds(settings, server, ("crypto", "/cd.xml", COINDESK), ("general", "/down.xml", Answer(status=500)))
    state = feed_run(name="news", mode="live")
    assert state.outcome == "ok" and state.rows_written == 8
    assert "down.xml answered 500" in state.last_note


# --- bad input from outside: the pass fails with the reason and writes nothing ---------------------
@pytest.mark.parametrize(
    "answer,reason",
    [
        (Answer(status=500, body=b"Internal Server Error"), "answered 500"),
        (
            _rss(b'<?xml version="1.0"?><rss version="2.0"><channel><item><title>a</title></item><item><ti'),
            "malformed feed",
        ),
        (_rss(b""), "empty body"),
        (Answer(body=b'{"not": "a feed"}', headers={"Content-Type": "application/json"}), "FeedError"),
        (
            Answer(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
            "answered 302",
        ),
        (Answer(status=301, headers={"Location": "http://10.0.0.1/feed.xml"}), "answered 301"),
    ],
    ids=["500", "malformed-xml", "empty", "not-a-feed", "redirect-metadata", "redirect-private"],
)
def test_a_bad_feed_fails_the_pass_with_its_reason_and_writes_nothing(settings, server, answer, reason):
    _feeds(settings, server, ("crypto", "/bad.xml", answer))
    before = NewsItem.objects.count()
    state = feed_run(name="news", mode="live")
    assert state.outcome == "failed" and reason in state.last_error
    assert NewsItem.objects.count() == before and state.consecutive_failures == 1


def test_a_huge_body_fails_the_pass(settings, server):
    settings.FEEDS_MAX_BODY_BYTES = 4096
    _feeds(settings, server, ("crypto", "/huge.xml", COINDESK + b" " * 10_000))
    state = feed_run(name="news", mode="live")
    assert state.outcome == "failed" and "more than 4096 bytes" in state.last_error
    assert not NewsItem.objects.filter(source="huge").exists()


def test_a_feed_that_times_out_fails_the_pass(settings, server):
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.2
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 1.0
    _feeds(settings, server, ("crypto", "/slow.xml", Answer(body=COINDESK, delay=1.5)))
    state = feed_run(name="news", mode="live")
    assert state.outcome == "failed" and ("Timeout" in state.last_error or "Deadline" in state.last_error)
    assert not NewsItem.objects.filter(source="slow").exists()


def test_a_public_feed_url_that_resolves_to_a_private_address_is_refused(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    # (not port 9: the test settings' FACILITATOR_URL origin, which is operator configuration)
    settings.NEWS_FEEDS = f"crypto|http://127.0.0.1:{closed_port()}/rss"
    state = feed_run(name="news", mode="live")
    assert state.outcome == "failed" and state.last_error.startswith("TargetRefused")


# --- the catalogs and the unlock sell ingested items ------------------------------------------------
def test_catalogs_show_ingested_items_with_as_of_and_sources(api, settings, server):
    _feeds(
        settings,
        server,
        ("crypto", "/cd.xml", COINDESK),
        ("equity", "/mw.xml", (SAMPLES / "news_feeds" / "2.xml").read_bytes()),
    )
    feed_run(name="news", mode="live")
    body = api.get("/api/a2a/news/catalog").json()
    titles = {i["title"] for i in body["items"]}
    assert "Bitcoin Holds Above $91K as ETF Inflows Resume After Three-Day Lull" in titles
    assert body["as_of"].endswith("Z")
    assert {(s["name"], s["items"], s["replay"]) for s in body["sources"]} >= {
        ("cd", 8, False),
        ("mw", 8, False),
    }
    equity = api.get("/api/a2a/equity/catalog").json()
    assert equity["count"] == 8 and {i["source"] for i in equity["items"]} == {"mw"}
    assert [s["name"] for s in equity["sources"]] == ["mw"] and equity["unlock_price_usdc"] == 0.18
    groups = api.get("/api/a2a/market-agents/news").json()
    assert groups["groups"].get("crypto", 0) >= 3 and groups["groups"].get("equities") == 8
    assert groups["as_of"] and groups["sources"]


def test_the_x402_unlock_sells_an_ingested_item_paid_from_credits(api, settings, server):
    from billing.credits import ledger_audit
    from billing.models import LedgerEntry
    from tests.support.wallets import funded_buyer

    _feeds(settings, server, ("equity", "/mw.xml", (SAMPLES / "news_feeds" / "2.xml").read_bytes()))
    feed_run(name="news", mode="live")
    item = NewsItem.objects.get(external_id="MW-4B7C1E2A-0B3D-4F5E-8A9C-1D2E3F4A5B6C")
    key, account = funded_buyer(api, 1_000_000)
    resp = api.get("/api/a2a/x402/news/unlock", {"news_id": item.id}, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["title"].startswith("Nvidia stock rises") and "(NASDAQ: NVDA)" in body["body"]
    assert body["source"] == "mw" and body["url"].startswith("https://www.marketwatch.com/")
    assert LedgerEntry.objects.get(kind=LedgerEntry.Kind.SKU_CALL).amount_atomic == -180_000
    assert ledger_audit() == []
