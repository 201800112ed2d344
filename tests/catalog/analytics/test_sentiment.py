"""Sentiment from the news (catalog/analytics/sentiment.py, the `sentiment` product) and the
equity products (catalog/products/equity.py): the lexicon moves scores the expected way,
recency weighting, momentum, counts and drivers on constructed histories, catalysts, scalp
setups from a known quote, the news feed scoring and replay-shifting what it ingests, and the
products bought with credits (and refused, uncharged, without recent news)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from billing.models import Account
from catalog.analytics.catalysts import catalysts_of
from catalog.analytics.sentiment import (
    ScoredNews,
    asset_sentiment,
    news_score,
    news_sentiment_backfill,
    text_prepared,
    text_score,
)
from catalog.feeds.news.parse import parse_feed
from catalog.feeds.replay import SAMPLES, replay_start
from catalog.feeds.runner import feed_run
from catalog.models import NewsItem, Sku, TokenizedAsset
from tests.support.feedserver import Answer, FeedServer
from tests.support.marketdata import equity_quote_write, news_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
HALF_LIFE = timedelta(hours=12)


def _scored(compound: float, hours_ago: float, n: int = 0, label: str | None = None) -> ScoredNews:
    at = NOW - timedelta(hours=hours_ago)
    return ScoredNews(
        id=n,
        title=f"item {n}",
        teaser="",
        source="test",
        url="",
        category="crypto",
        at=at,
        published_at=at,
        compound=compound,
        label=label or ("positive" if compound >= 0.05 else "negative" if compound <= -0.05 else "neutral"),
        tickers=("SOL",),
        replay=False,
    )


def _balance(account: Account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


# --- one headline: the lexicon -----------------------------------------------------------------------
def test_a_neutral_headline_is_neutral_and_exploit_makes_it_negative():
    assert text_score("Lending protocol on Solana ships update").label == "neutral"
    hit = text_score("Lending protocol on Solana hit by exploit")
    assert hit.label == "negative" and hit.compound < -0.3


@pytest.mark.parametrize(
    "term",
    [
        "surge",
        "rally",
        "all-time high",
        "all time high",
        "ETF approval",
        "upgrade",
        "beat estimates",
        "partnership",
        "listing",
        "record high",
        "net inflows",
        "raises guidance",
    ],
)
def test_bullish_terms_make_a_neutral_headline_positive(term):
    assert text_score("Acme token update").compound == 0
    score = text_score(f"Acme token {term}")
    assert score.label == "positive" and score.compound >= 0.2, (term, score)


@pytest.mark.parametrize(
    "term",
    [
        "hack",
        "exploit",
        "lawsuit",
        "SEC charges",
        "delisting",
        "liquidation",
        "downgrade",
        "miss estimates",
        "bankruptcy",
        "outflows",
        "cuts guidance",
        "rug pull",
    ],
)
def test_bearish_terms_make_a_neutral_headline_negative(term):
    score = text_score(f"Acme token {term}")
    assert score.label == "negative" and score.compound <= -0.2, (term, score)


def test_phrases_become_one_token_and_keep_vaders_rules():
    assert text_prepared("Bitcoin hits All-Time High; SEC charges exchange") == (
        "Bitcoin hits all_time_high; sec_charges exchange"
    )
    # A phrase is one lexicon entry, stronger than its words (VADER knows none of them).
    assert text_score("ETF approval").compound > text_score("ETF approved").compound > 0
    # Negation still applies to a joined phrase.
    assert text_score("No ETF approval this year").label == "negative"


def test_market_vocabulary_is_neutral():
    # VADER alone reads "interest", "shares", "credit" and "trust" as positive.
    for text in ("Open interest in futures", "Shares of the trust", "Private credit fund"):
        assert text_score(text).label == "neutral", text


def test_an_item_is_scored_on_title_and_teaser():
    # The teaser carries the judgement here; a teaser repeating the title is read once.
    assert news_score(title="Acme token update", teaser="The protocol was drained in an exploit.").label == (
        "negative"
    )
    once = news_score(title="Acme token rallies", teaser="Acme token rallies")
    assert once == text_score("Acme token rallies")


# --- per asset: recency, counts, momentum, drivers ---------------------------------------------------
def test_a_newer_item_weighs_more():
    new_good = [_scored(0.8, 0, 1), _scored(-0.4, 12, 2)]  # weights 1 and 0.5
    a = asset_sentiment("SOL", new_good, now=NOW, half_life=HALF_LIFE, drivers=5)
    assert a.score == pytest.approx((0.8 * 1 - 0.4 * 0.5) / 1.5)  # 0.4
    assert a.label == "positive"
    # The same two items, the bad one newer: the equal-magnitude mean now cancels out.
    new_bad = [_scored(0.8, 12, 1), _scored(-0.4, 0, 2)]
    b = asset_sentiment("SOL", new_bad, now=NOW, half_life=HALF_LIFE, drivers=5)
    assert b.score == pytest.approx((0.8 * 0.5 - 0.4 * 1) / 1.5) == pytest.approx(0.0)
    assert b.label == "neutral" and b.score < a.score


def test_counts_and_drivers_sum_to_the_score():
    items = [_scored(0.9, 1, 1), _scored(-0.6, 2, 2), _scored(0.0, 3, 3), _scored(0.3, 30, 4)]
    a = asset_sentiment("SOL", items, now=NOW, half_life=HALF_LIFE, drivers=3)
    assert (a.items, a.positive, a.negative, a.neutral) == (4, 2, 1, 1)
    assert [d.item.id for d in a.drivers] == [1, 2, 4]  # by |contribution|; the neutral one adds nothing
    full = asset_sentiment("SOL", items, now=NOW, half_life=HALF_LIFE, drivers=10)
    assert sum(d.contribution for d in full.drivers) == pytest.approx(a.score)
    assert full.drivers[0].weight == pytest.approx(0.5 ** (1 / 12))


def test_momentum_is_the_last_day_against_the_week_before():
    improving = [
        _scored(0.6, 2, 1),
        _scored(0.2, 10, 2),  # last 24 h: mean 0.4
        _scored(-0.5, 48, 3),
        _scored(-0.3, 100, 4),  # prior 7 days: mean -0.4
    ]
    a = asset_sentiment("SOL", improving, now=NOW, half_life=HALF_LIFE, drivers=5)
    assert a.mean_24h == pytest.approx(0.4) and a.mean_prior_7d == pytest.approx(-0.4)
    assert a.momentum == pytest.approx(0.8)
    worsening = [_scored(-c.compound, (NOW - c.at).total_seconds() / 3600, c.id) for c in improving]
    assert asset_sentiment("SOL", worsening, now=NOW, half_life=HALF_LIFE, drivers=5).momentum == (
        pytest.approx(-0.8)
    )
    only_today = asset_sentiment("SOL", improving[:2], now=NOW, half_life=HALF_LIFE, drivers=5)
    assert only_today.momentum is None and only_today.mean_prior_7d is None


# --- the sentiment product ---------------------------------------------------------------------------
def test_bullish_headlines_give_sol_positive_and_bearish_give_xrp_negative_sentiment(api):
    news_write(
        title="Solana rallies to an all-time high as ETF approval draws record inflows", tickers=["SOL"]
    )
    news_write(
        title="Solana surges after major exchange listing and partnership", tickers=["SOL"], hours_ago=5
    )
    news_write(title="Solana DeFi volumes hit record high", tickers=["SOL"], hours_ago=40)
    news_write(title="XRP tumbles after exchange announces delisting", tickers=["XRP"], hours_ago=2)
    news_write(title="Ripple hit by lawsuit as XRP liquidations mount", tickers=["XRP"], hours_ago=6)
    news_write(title="XRP slides on record outflows", tickers=["XRP"], hours_ago=300)  # outside the window
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    resp = api.get("/api/a2a/sentiment", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assets = {a["asset"]: a for a in body["assets"]}
    sol, xrp = assets["SOL"], assets["XRP"]
    assert sol["label"] == "positive" and sol["score"] > 0.5
    assert (sol["items"], sol["positive"], sol["negative"], sol["neutral"]) == (3, 3, 0, 0)
    assert xrp["label"] == "negative" and xrp["score"] < -0.5
    assert (xrp["items"], xrp["negative"]) == (2, 2)
    # The drivers are the asset's headlines, the largest |contribution| first, summing to the score.
    assert sol["drivers"][0]["title"].startswith("Solana rallies to an all-time high")
    assert sum(d["contribution"] for d in sol["drivers"]) == pytest.approx(sol["score"], abs=1e-3)
    assert sol["momentum"] is not None and sol["mean_prior_7d"] is not None
    assert body["window_hours"] == 192 and body["half_life_hours"] == 12.0
    assert body["stale"] is False and body["replay"] is False and body["as_of"].endswith("Z")
    assert body["sources"] == [
        {"name": "test-wire", "venue": None, "replay": False, "items": 5, "as_of": body["as_of"]}
    ]
    assert before - _balance(account) == 50_000  # 0.05 USDC

    only = api.get("/api/a2a/x402/sentiment", {"asset": "sol"}, HTTP_X_API_KEY=key).json()
    assert [a["asset"] for a in only["assets"]] == ["SOL"] and only["sources"][0]["items"] == 3


def test_unscored_items_are_scored_by_the_backfill_when_the_product_reads(api):
    item = news_write(title="Ether rallies as ETF inflows surge", tickers=["ETH"], scored=False)
    assert item.sentiment_compound is None
    key, _ = funded_buyer(api, 1_000_000)
    body = api.get("/api/a2a/sentiment", {"asset": "ETH"}, HTTP_X_API_KEY=key).json()
    item.refresh_from_db()
    assert item.sentiment_label == "positive" and item.sentiment_scored_at is not None
    assert body["assets"][0]["score"] == pytest.approx(item.sentiment_compound, abs=1e-4)


def test_the_score_news_command_scores_and_rescores():
    a = news_write(title="Bitcoin miner files for bankruptcy", tickers=["BTC"], scored=False)
    news_write(title="Bitcoin rallies", tickers=["BTC"])
    out = io.StringIO()
    call_command("score_news", stdout=out)
    assert out.getvalue().strip() == "scored 1 news item(s)"
    a.refresh_from_db()
    assert a.sentiment_label == "negative" and a.sentiment_compound < -0.5
    call_command("score_news", "--rescore", stdout=out)
    assert out.getvalue().strip().endswith("scored 2 news item(s)")
    assert news_sentiment_backfill() == 0


def test_no_recent_news_is_503_and_uncharged(api):
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    resp = api.get("/api/a2a/sentiment", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and _balance(account) == before
    # News about SOL that is older than the freshness limit (24 h): nothing fresh to sell.
    news_write(title="Solana rallies", tickers=["SOL"], hours_ago=30)
    resp = api.get("/api/a2a/sentiment", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and "nothing was charged" in resp.content.decode()
    assert _balance(account) == before
    # Fresh news about another asset does not make SOL's answer fresh.
    news_write(title="Bitcoin rallies", tickers=["BTC"], hours_ago=1)
    assert api.get("/api/a2a/sentiment", {"asset": "SOL"}, HTTP_X_API_KEY=key).status_code == 503
    assert _balance(account) == before
    body = api.get("/api/a2a/sentiment", HTTP_X_API_KEY=key).json()
    stale_sol = next(a for a in body["assets"] if a["asset"] == "SOL")
    assert stale_sol["stale"] is True and body["stale"] is False


def test_bad_parameters_are_422(api):
    key, account = funded_buyer(api, 1_000_000)
    resp = api.get("/api/a2a/sentiment", {"asset": "SO L!"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["query", "asset"]
    assert api.get("/api/a2a/sentiment", {"limit": 0}, HTTP_X_API_KEY=key).status_code == 422
    assert api.get("/api/a2a/equity/scalp", {"ticker": "x" * 30}, HTTP_X_API_KEY=key).status_code == 422


# --- equity: catalysts, intel, scalp -----------------------------------------------------------------
@pytest.mark.parametrize(
    "headline,kinds",
    [
        ("Intel stock tumbles after chip maker misses estimates and cuts guidance", ["earnings", "guidance"]),
        ("Microsoft agrees to acquire cloud security firm for $12 billion", ["mna"]),
        ("Tesla downgraded to neutral as analysts cut price targets", ["analyst_rating"]),
        ("FTC sues Amazon in antitrust lawsuit", ["regulation_legal"]),
        ("Apple unveils new chip for its laptops", ["product"]),
        ("Stocks rise as Fed signals rate cuts and inflation cools", ["macro"]),
        ("Walmart to report earnings: what Wall Street expects", ["earnings"]),
        ("Shares of three retailers traded higher on Monday", []),
    ],
)
def test_catalysts_are_classified_by_rules(headline, kinds):
    assert catalysts_of(headline) == kinds


def _equity_market():
    news_write(
        title="Nvidia beats estimates and raises guidance",
        tickers=["NVDA"],
        category="equity",
        hours_ago=2,
    )
    news_write(
        title="Tesla stock slides as analysts downgrade shares",
        tickers=["TSLA"],
        category="equity",
        hours_ago=3,
    )
    # Bullish news, but the stock is down on the day: no setup.
    news_write(
        title="Intel surges after it unveils new chip", tickers=["INTC"], category="equity", hours_ago=1
    )
    # A catalyst and no quote: no setup either (and null price context).
    news_write(
        title="Apple rallies to all-time high after results beat estimates",
        tickers=["AAPL"],
        category="equity",
    )
    # A quote, and only an old catalyst (30 h > 24 h).
    news_write(
        title="Microsoft to acquire game studio", tickers=["MSFT", "BTC"], category="equity", hours_ago=30
    )
    equity_quote_write(symbol="NVDA", price=100.0, low=96.0, high=104.0, change_pct=2.5, prev_close=97.56)
    equity_quote_write(symbol="TSLA", price=200.0, low=190.0, high=210.0, change_pct=None, prev_close=206.0)
    equity_quote_write(symbol="INTC", price=30.0, low=29.0, high=31.0, change_pct=-1.2, prev_close=30.36)
    equity_quote_write(symbol="MSFT", price=400.0, low=395.0, high=405.0, change_pct=0.5)


def test_equity_scalp_setups_from_a_known_quote(api, settings):
    _equity_market()
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    resp = api.get("/api/a2a/equity/scalp", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    setups = {s["ticker"]: s for s in body["setups"]}
    assert set(setups) == {"NVDA", "TSLA"} and body["count"] == 2
    nvda = setups["NVDA"]
    # Long: positive news and an up day; stop 0.5 x range (8) below 100, target 1 x range above.
    assert (nvda["direction"], nvda["entry"], nvda["stop"], nvda["target"]) == ("long", 100.0, 96.0, 108.0)
    assert nvda["risk_reward"] == 2.0 and nvda["day_range"] == 8.0 and nvda["horizon_minutes"] == 240
    assert nvda["catalyst"]["kinds"] == ["earnings", "guidance"] and "agrees" in nvda["why"]
    tsla = setups["TSLA"]
    # Short: negative news and a down day (change from the previous close: 200/206 - 1 = -2.91 %).
    assert (tsla["direction"], tsla["entry"], tsla["stop"], tsla["target"]) == ("short", 200.0, 210.0, 180.0)
    assert tsla["day_change_pct"] == pytest.approx(-2.9126, abs=1e-4)
    assert (
        body["passed"]
        == [
            {"ticker": "INTC", "reason": body["passed"][0]["reason"]},
        ]
        and "disagrees" in body["passed"][0]["reason"]
    )
    assert {s["name"] for s in body["sources"]} == {"test-wire", "equities"}
    assert before - _balance(account) == 120_000

    settings.EQUITY_SCALP_STOP_RANGE = 0.25
    settings.EQUITY_SCALP_TARGET_RANGE = 0.75
    nvda = api.get("/api/a2a/equity/scalp", {"ticker": "nvda"}, HTTP_X_API_KEY=key).json()["setups"][0]
    assert (nvda["stop"], nvda["target"], nvda["risk_reward"]) == (98.0, 106.0, 3.0)


def test_equity_scalp_without_a_fresh_catalyst_and_quote_is_503_uncharged(api):
    news_write(title="Apple rallies after results beat estimates", tickers=["AAPL"], category="equity")
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    assert api.get("/api/a2a/equity/scalp", HTTP_X_API_KEY=key).status_code == 503  # no quote
    equity_quote_write(
        symbol="AAPL", price=200.0, low=195.0, high=202.0, change_pct=1.0, minutes_ago=60 * 24 * 5
    )
    resp = api.get("/api/a2a/equity/scalp", HTTP_X_API_KEY=key)  # a quote, too old to trade on
    assert resp.status_code == 200 and resp.json()["setups"] == []
    assert "older than 96 h" in resp.json()["passed"][0]["reason"]
    assert before - _balance(account) == 120_000


def test_equity_intel_per_ticker(api):
    _equity_market()
    TokenizedAsset.objects.create(
        symbol="NVDAX",
        name="Nvidia xStock",
        venue="kraken",
        underlying="NVDA",
        last_price=Decimal("101"),
        source="exchanges",
        updated_at=timezone.now(),
    )
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    resp = api.get("/api/a2a/equity/intel", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    tickers = {t["ticker"]: t for t in body["tickers"]}
    # Crypto assets named in equity news are not equity tickers.
    assert set(tickers) == {"NVDA", "TSLA", "INTC", "AAPL", "MSFT"}
    nvda = tickers["NVDA"]
    assert nvda["sentiment"]["label"] == "positive" and nvda["fresh_catalyst"] is True
    assert nvda["price"]["price"] == 100.0 and nvda["price"]["day_change_pct"] == 2.5
    assert (nvda["price"]["day_low"], nvda["price"]["day_high"]) == (96.0, 104.0)
    assert nvda["tokenized"][0]["symbol"] == "NVDAX" and nvda["tokenized"][0]["premium_pct"] == 1.0
    assert nvda["headlines"][0]["catalysts"] == ["earnings", "guidance"]
    assert tickers["TSLA"]["sentiment"]["label"] == "negative"
    assert tickers["TSLA"]["catalysts"][0]["kinds"] == ["analyst_rating"]
    assert tickers["AAPL"]["price"] is None and tickers["AAPL"]["tokenized"] == []
    assert tickers["MSFT"]["fresh_catalyst"] is False and tickers["MSFT"]["catalysts"][0]["age_hours"] == 30.0
    assert before - _balance(account) == 100_000

    one = api.get("/api/a2a/x402/equity/intel", {"ticker": "tsla"}, HTTP_X_API_KEY=key).json()
    assert [t["ticker"] for t in one["tickers"]] == ["TSLA"]


def test_equity_intel_without_recent_equity_news_is_503_uncharged(api):
    news_write(title="Solana rallies", tickers=["SOL"])  # crypto news only
    news_write(title="Nvidia rallies", tickers=["NVDA"], category="equity", hours_ago=100)  # too old (72 h)
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    for path in ("/api/a2a/equity/intel", "/api/a2a/equity/scalp"):
        resp = api.get(path, HTTP_X_API_KEY=key)
        assert resp.status_code == 503, path
    assert _balance(account) == before


# --- the news feed: scores at ingestion, replay keeps the samples fresh -------------------------------
RSS = """<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>{title}</title><link>https://example.com/a</link><guid>a-1</guid>
<pubDate>Mon, 23 Nov 2026 09:00:00 GMT</pubDate></item></channel></rss>"""


def test_the_feed_scores_what_it_ingests_and_rescores_a_changed_item(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    server = FeedServer()
    try:
        server.routes["/f.xml"] = Answer(body=RSS.format(title="Solana rallies on ETF approval").encode())
        settings.NEWS_FEEDS = f"crypto|{server.url}/f.xml|wire"
        feed_run(name="news", mode="live")
        item = NewsItem.objects.get(external_id="a-1")
        assert item.sentiment_label == "positive" and item.sentiment_scored_at is not None
        first = item.sentiment_scored_at
        assert feed_run(name="news", mode="live").rows_written == 0  # unchanged: not rescored
        server.routes["/f.xml"] = Answer(body=RSS.format(title="Solana protocol hit by exploit").encode())
        feed_run(name="news", mode="live")
        item.refresh_from_db()
        assert item.sentiment_label == "negative" and item.sentiment_scored_at > first
        # A live pass keeps the feed's own publication time.
        assert item.published_at == datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    finally:
        server.close()


EQUITY_RSS = """<?xml version="1.0"?><rss version="2.0"><channel><title>wire</title>
<item><title>NVDA jumps as data-center sales beat estimates and guidance is raised</title>
<link>https://example.com/n1</link><guid>n-1</guid><pubDate>{at}</pubDate></item>
<item><title>AAPL falls as iPhone sales slump and analysts cut targets</title>
<link>https://example.com/n2</link><guid>n-2</guid><pubDate>{at}</pubDate></item>
<item><title>US stocks: IT budgets lift ALL boats, A CEO says</title>
<link>https://example.com/n3</link><guid>n-3</guid><pubDate>{at}</pubDate></item>
</channel></rss>"""


def test_equity_headlines_naming_a_bare_ticker_are_attributed_to_it(api, settings):
    """"NVDA jumps ..." and "AAPL falls as ..." (no $ and no exchange prefix) are about NVDA and
    AAPL: the equity sentiment of those tickers answers with them, while the capitalised
    words of the third headline are no tickers (even listed as symbols by the operator)."""
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.EQUITY_SYMBOLS = [*settings.EQUITY_SYMBOLS, "ALL", "IT", "A"]
    at = (timezone.now() - timedelta(hours=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    server = FeedServer()
    try:
        server.routes["/eq.xml"] = Answer(body=EQUITY_RSS.format(at=at).encode())
        settings.NEWS_FEEDS = f"equity|{server.url}/eq.xml|wire"
        assert feed_run(name="news", mode="live").outcome == "ok"
    finally:
        server.close()
    tagged = dict(NewsItem.objects.values_list("external_id", "tickers"))
    assert tagged == {"n-1": ["NVDA"], "n-2": ["AAPL"], "n-3": []}
    key, account = funded_buyer(api, 1_000_000)
    before = _balance(account)
    nvda = api.get("/api/a2a/equity/intel", {"ticker": "NVDA"}, HTTP_X_API_KEY=key)
    assert nvda.status_code == 200, nvda.content
    (row,) = nvda.json()["tickers"]
    assert row["ticker"] == "NVDA" and row["sentiment"]["label"] == "positive" and row["sentiment"]["items"] == 1
    aapl = api.get("/api/a2a/sentiment", {"asset": "AAPL"}, HTTP_X_API_KEY=key)
    assert aapl.status_code == 200, aapl.content
    (asset,) = aapl.json()["assets"]
    assert asset["asset"] == "AAPL" and asset["label"] == "negative"
    everything = api.get("/api/a2a/equity/intel", HTTP_X_API_KEY=key).json()
    assert {t["ticker"] for t in everything["tickers"]} == {"NVDA", "AAPL"}
    assert before - _balance(account) == 2 * 100_000 + Sku.objects.get(sku="sentiment").price_atomic


@pytest.fixture
def replay(settings):
    server = replay_start(port=0)
    settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def test_replayed_samples_are_published_up_to_the_pass_start_and_carry_sentiment(api, replay):
    start = timezone.now().replace(second=0, microsecond=0)
    state = feed_run(name="news", mode="replay")
    assert state.outcome == "ok" and state.last_replay is True
    newest = NewsItem.objects.order_by("-published_at").first()
    assert newest is not None and newest.published_at is not None
    assert start <= newest.published_at <= timezone.now()
    # The spacing of the recording is kept: two CoinDesk items 1 h 25 min apart stay so.
    recorded = {
        e.external_id: e.published_at
        for e in parse_feed((SAMPLES / "news_feeds" / "0.xml").read_bytes()).entries
    }
    a = NewsItem.objects.get(external_id="5d8a2c61-9e3f-4b7d-a1c4-0f6e2b9d3a58")
    b = NewsItem.objects.get(external_id="b1f0c6de-4e0d-4a63-9d3b-5f1b2c0e7a11")
    assert (
        a.published_at - b.published_at
        == recorded[a.external_id] - recorded[b.external_id]
        == timedelta(hours=1, minutes=25)
    )
    assert not NewsItem.objects.filter(sentiment_scored_at__isnull=True).exists()

    # The local stack's sentiment has content: bullish and bearish assets, crypto and equity.
    key, _ = funded_buyer(api, 1_000_000)
    body = api.get("/api/a2a/sentiment", {"limit": 50}, HTTP_X_API_KEY=key).json()
    assets = {a["asset"]: a for a in body["assets"]}
    assert body["replay"] is True and body["stale"] is False
    for bullish in ("SOL", "AVAX", "AAPL", "NVDA"):
        assert assets[bullish]["label"] == "positive", bullish
    for bearish in ("ADA", "INTC", "TSLA"):
        assert assets[bearish]["label"] == "negative", bearish
    # DOGE: a liquidation cascade three days ago, whales buying yesterday: improving.
    assert assets["DOGE"]["momentum"] > 0 and assets["DOGE"]["mean_prior_7d"] < 0
    intel = api.get("/api/a2a/equity/intel", HTTP_X_API_KEY=key).json()
    assert {"NVDA", "INTC", "TSLA", "AAPL", "MSFT", "WMT"} <= {t["ticker"] for t in intel["tickers"]}


def test_a_session_covers_the_sentiment_and_equity_products(api):
    from tests.support.payments import new_session

    _equity_market()
    news_write(title="Solana rallies on ETF approval", tickers=["SOL"])
    token = {"HTTP_X_SESSION_TOKEN": new_session(calls=3).token}
    for sku in ("sentiment", "equity_intel", "equity_scalp"):
        resp = api.get(f"/api/a2a/session/call/{sku}", **token)
        assert resp.status_code == 200, (sku, resp.content)
    sol = api.get("/api/a2a/sentiment", {"asset": "SOL"})  # no key: the paid route asks for one
    assert sol.status_code == 401


def test_availability_checks_are_cheap_and_honest():
    from catalog.products.registry import product_has_content

    assert product_has_content("sentiment")[0] is False
    news_write(title="Rates hold", tickers=[])  # names no asset
    assert product_has_content("sentiment")[0] is False
    news_write(title="Solana rallies", tickers=["SOL"])
    assert product_has_content("sentiment") == (True, "")
    assert product_has_content("equity_intel")[0] is False
    news_write(title="Nvidia beats estimates", tickers=["NVDA"], category="equity")
    assert product_has_content("equity_intel") == (True, "")
    assert product_has_content("equity_scalp") == (False, "no equity quote has been ingested yet")
    equity_quote_write(symbol="NVDA", price=100.0, low=96.0, high=104.0, change_pct=2.5)
    assert product_has_content("equity_scalp") == (True, "")
