"""The prediction-venue adapters (catalog/feeds/polymarket, catalog/feeds/kalshi): parsing of
the recorded samples, passes against a local server standing in for the venues, idempotent
re-runs with the price history, the caps on paging, the free catalogs they fill, and the
outside failures that must fail a pass and write nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import requests
from django.db import transaction
from django.utils import timezone

import catalog.feeds.kalshi as kalshi
import catalog.feeds.polymarket as polymarket
from catalog.feeds import prediction_store
from catalog.feeds.kalshi import parse as kparse
from catalog.feeds.polymarket import parse as pparse
from catalog.feeds.registry import FeedError, FeedPass, feed_get
from catalog.models import PredictionMarket, PredictionPrice
from tests.support.sample_server import Answer, SampleServer, sample_json

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def venues(settings):
    """The venues' base URLs pointed at a loopback server serving the samples (live mode)."""
    server = SampleServer()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.5
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 3.0
    settings.POLYMARKET_GAMMA_URL = f"{server.url}/polymarket_gamma_url"
    settings.POLYMARKET_CLOB_URL = f"{server.url}/polymarket_clob_url/"
    settings.KALSHI_API_URL = f"{server.url}/kalshi_api_url"
    yield server
    server.close()


def run_pass(module, *, replay: bool = False) -> int:
    """One pass as the runner makes it: inside one transaction."""
    with transaction.atomic():
        return module.run(FeedPass(source=module.SOURCE, replay=replay))


# --- parsing -------------------------------------------------------------------------------
def test_gamma_sample_parses_the_string_encoded_lists():
    markets = pparse.markets_page_parse(sample_json("polymarket_gamma_url", "markets"))
    assert len(markets) == 20
    by_slug = {m.row.url.rsplit("/", 1)[-1]: m for m in markets}
    fed = next(m for m in markets if m.row.question.startswith("Fed decreases"))
    assert fed.row.outcomes == ["Yes", "No"]
    assert fed.row.yes_price == D("0.655")
    assert fed.row.volume_usd == D("8423117.41") and fed.row.liquidity_usd == D("412093.77")
    assert fed.row.closes_at == datetime(2026, 12, 16, tzinfo=UTC)
    assert fed.row.category == "Economics"  # from its event: the market carries none
    assert fed.row.event_id == "fed-decision-in-december-2026"
    assert fed.row.url == "https://polymarket.com/event/fed-decision-in-december-2026"
    assert fed.row.status == "open" and fed.row.venue == "polymarket"
    raw = sample_json("polymarket_gamma_url", "markets")
    fed_raw = next(x for x in raw if x["id"] == fed.row.external_id)
    assert isinstance(fed_raw["outcomes"], str) and fed.yes_token == json.loads(fed_raw["clobTokenIds"])[0]
    # A two-team market: the yes price is the first outcome's.
    game = by_slug["nba-lal-bos-2026-12-25"]
    assert game.row.outcomes == ["Lakers", "Celtics"] and game.row.yes_price == D("0.415")
    # Missing (absent, "" or "[]") prices: left for the CLOB, with the yes token to ask about.
    unpriced = [m for m in markets if m.row.yes_price is None]
    assert len(unpriced) == 4 and all(m.yes_token for m in unpriced)
    eagles = next(m for m in unpriced if "Eagles" in m.row.question)
    assert eagles.last_trade == D("0.14")


def test_gamma_list_fields_and_garbage():
    assert pparse.json_list('["Yes", "No"]') == ["Yes", "No"]
    assert pparse.json_list(["Yes", "No"]) == ["Yes", "No"]
    assert (
        pparse.json_list("not json") == []
        and pparse.json_list('{"a": 1}') == []
        and pparse.json_list(None) == []
    )
    one = {"id": "1", "question": "Q?", "outcomes": '["Yes","No"]', "outcomePrices": '["1.7","x"]'}
    assert pparse.market_parse(one).row.yes_price is None  # not a probability
    assert pparse.market_parse({"id": "2"}) is None  # no question
    with pytest.raises(FeedError):
        pparse.markets_page_parse({"markets": []})
    assert pparse.midpoint_parse({"mid": "0.455"}) == D("0.455")
    assert pparse.midpoint_parse({"error": "No orderbook exists"}) is None


def test_kalshi_sample_prefers_dollars_and_falls_back_to_cents():
    page = kparse.markets_page_parse(sample_json("kalshi_api_url", "markets"))
    assert len(page.rows) == 20 and page.cursor == ""
    rows = {r.external_id: r for r in page.rows}
    fed = rows["KXFEDDECISION-26DEC-C25"]
    assert fed.yes_price == D("0.64")  # midpoint of the 0.63 / 0.65 quote
    assert fed.volume_usd == D("2841220.00")  # contracts x $1 notional
    assert fed.liquidity_usd == D("188123.00")
    assert fed.closes_at == datetime(2026, 12, 16, 18, 55, tzinfo=UTC)
    assert fed.category == "" and fed.event_id == "KXFEDDECISION-26DEC"  # its event has it (below)
    assert fed.url == "https://kalshi.com/markets/kxfeddecision" and fed.outcomes == ["Yes", "No"]
    # An answer without the dollar fields: the cent fields.
    cpi = rows["KXCPIYOY-26NOV-T3.0"]
    assert (
        cpi.yes_price == D("0.36") and cpi.liquidity_usd == D("12305.54") and cpi.volume_usd == D("211450.00")
    )
    # A wide quote: the last trade. An empty book that never traded: no price.
    assert rows["KXAIMODEL-27JUL-GPT6"].yes_price == D("0.37")
    assert rows["KXOSCARPIC-27-BRU"].yes_price is None
    # Dollars win over cents when both are there.
    both = {
        "ticker": "T",
        "title": "Q?",
        "yes_bid_dollars": "0.4200",
        "yes_ask_dollars": "0.4400",
        "yes_bid": 1,
        "yes_ask": 99,
    }
    assert kparse.market_parse(both).yes_price == D("0.43")
    settled = {"ticker": "S", "title": "Q?", "status": "settled", "liquidity": 250}
    assert kparse.market_parse(settled).status == "resolved" and kparse.market_parse(
        settled
    ).liquidity_usd == D("2.50")
    with pytest.raises(FeedError):
        kparse.markets_page_parse([])


def test_the_same_events_are_on_both_venues():
    """The samples share real-world events across venues (the next issue matches them)."""
    gamma = sample_json("polymarket_gamma_url", "markets")
    kal = sample_json("kalshi_api_url", "markets")["markets"]
    for words in (
        ("Fed", "December 2026"),
        ("Bitcoin", "150,000"),
        ("Newsom",),
        ("Chiefs", "Super Bowl LXI"),
    ):
        assert any(all(w in m["question"] for w in words) for m in gamma), words
        assert any(all(w in m["title"] for w in words) for m in kal), words


# --- passes ----------------------------------------------------------------------------------
def test_sources_are_registered():
    assert feed_get("polymarket").run is polymarket.run and feed_get("kalshi").run is kalshi.run
    assert feed_get("polymarket").url_settings == ("POLYMARKET_GAMMA_URL", "POLYMARKET_CLOB_URL")
    assert feed_get("kalshi").url_settings == ("KALSHI_API_URL",)


def test_polymarket_pass_asks_the_clob_for_missing_prices(venues):
    written = run_pass(polymarket)
    assert PredictionMarket.objects.filter(venue="polymarket").count() == 20
    assert written == 20 + 20  # 20 markets, each with its first price row
    midpoints = [q for p, q in venues.requests if p.endswith("/midpoint")]
    assert len(midpoints) == 4 and all(q["token_id"] for q in midpoints)
    eagles = PredictionMarket.objects.get(venue="polymarket", question__contains="Eagles")
    assert eagles.yes_price == D("0.145")  # the CLOB midpoint sample
    m = PredictionMarket.objects.get(venue="polymarket", question__startswith="Fed decreases")
    assert (m.source, m.replay, m.status, m.yes_price) == ("polymarket", False, "open", D("0.655"))
    assert m.outcomes == ["Yes", "No"] and m.liquidity_usd == D("412093.77")
    gamma_query = next(q for p, q in venues.requests if p.endswith("/markets"))
    assert (
        gamma_query["active"] == "true" and gamma_query["closed"] == "false" and gamma_query["offset"] == "0"
    )


def test_a_token_without_a_book_keeps_the_last_trade(venues):
    venues.routes["/polymarket_clob_url/midpoint"] = Answer(status=404, body={"error": "No orderbook exists"})
    run_pass(polymarket)
    eagles = PredictionMarket.objects.get(venue="polymarket", question__contains="Eagles")
    assert eagles.yes_price == D("0.14")  # Gamma's lastTradePrice
    solana = PredictionMarket.objects.get(venue="polymarket", question__startswith="Solana ETF")
    assert solana.yes_price is None  # no trade either


def test_midpoint_lookups_are_capped(venues, settings):
    settings.POLYMARKET_MAX_MIDPOINTS = 1
    run_pass(polymarket)
    assert len([p for p in venues.paths() if p.endswith("/midpoint")]) == 1


def test_rerun_updates_in_place_and_records_a_price_only_when_it_moved(venues):
    run_pass(polymarket)
    run_pass(kalshi)
    markets, prices = PredictionMarket.objects.count(), PredictionPrice.objects.count()
    assert markets == 40 and prices == 20 + 19  # one Kalshi market has no price
    first_seen = PredictionMarket.objects.get(venue="kalshi", external_id="KXSB-27-KC").observed_at

    assert run_pass(kalshi) == 20  # the same answer: the markets again, no price row
    assert (PredictionMarket.objects.count(), PredictionPrice.objects.count()) == (markets, prices)

    page = sample_json("kalshi_api_url", "markets")
    chiefs = next(m for m in page["markets"] if m["ticker"] == "KXSB-27-KC")
    chiefs.update(yes_bid_dollars="0.1800", yes_ask_dollars="0.2000", volume_fp="3400000.00")
    venues.routes["/kalshi_api_url/markets"] = Answer(body=page)
    assert run_pass(kalshi) == 21
    assert PredictionMarket.objects.count() == markets and PredictionPrice.objects.count() == prices + 1
    row = PredictionMarket.objects.get(venue="kalshi", external_id="KXSB-27-KC")
    assert row.yes_price == D("0.19") and row.volume_usd == D("3400000.00") and row.observed_at > first_seen
    history = list(row.prices.values_list("yes_price", flat=True))
    assert history == [D("0.19"), D("0.125")]  # newest first


def test_a_moved_price_raises_the_prediction_alert(venues, settings):
    from webhooks.models import WebhookEvent

    run_pass(kalshi)
    page = sample_json("kalshi_api_url", "markets")
    fed = next(m for m in page["markets"] if m["ticker"] == "KXFEDDECISION-26DEC-C25")
    fed.update(yes_bid_dollars="0.8000", yes_ask_dollars="0.8200")
    venues.routes["/kalshi_api_url/markets"] = Answer(body=page)
    run_pass(kalshi)
    alert = WebhookEvent.objects.get(kind="prediction_alert")
    assert alert.payload["market_id"] == "KXFEDDECISION-26DEC-C25" and alert.payload["venue"] == "kalshi"


def test_kalshi_markets_without_a_category_take_their_events(venues):
    run_pass(kalshi)
    assert not PredictionMarket.objects.filter(venue="kalshi", category="").exists()
    fed = PredictionMarket.objects.get(external_id="KXFEDDECISION-26DEC-C25")
    assert fed.category == "Economics" and fed.event_id == "KXFEDDECISION-26DEC"
    events = [q for p, q in venues.requests if p.endswith("/events")]
    assert events == [{"status": "open", "limit": "200"}]  # one page had them all


def test_kalshi_events_refused_leave_the_categories_empty(venues):
    venues.routes["/kalshi_api_url/events"] = Answer(status=503, body=b"busy")
    assert run_pass(kalshi) == 20 + 19
    assert PredictionMarket.objects.filter(venue="kalshi", category="").count() == 10
    assert PredictionMarket.objects.get(external_id="KXFEDDECISION-26DEC-H0").category == "Economics"


def test_kalshi_events_follow_the_cursor_until_every_event_is_found(venues):
    events = sample_json("kalshi_api_url", "events")["events"]

    def pages(query: dict[str, str]) -> Answer:
        start = int(query.get("cursor") or 0)
        return Answer(body={"events": events[start : start + 6], "cursor": str(start + 6)})

    venues.routes["/kalshi_api_url/events"] = pages
    run_pass(kalshi)
    assert [q.get("cursor") for p, q in venues.requests if p.endswith("/events")] == [None, "6", "12"]
    assert not PredictionMarket.objects.filter(venue="kalshi", category="").exists()


def test_markets_gone_from_the_listing_after_their_close_are_closed(venues):
    past = timezone.now() - timedelta(days=1)
    PredictionMarket.objects.create(venue="kalshi", external_id="KXOLD-1", question="Old?", closes_at=past)
    PredictionMarket.objects.create(
        venue="polymarket", external_id="9", question="Other venue?", closes_at=past
    )
    run_pass(kalshi)
    assert PredictionMarket.objects.get(external_id="KXOLD-1").status == "closed"
    assert PredictionMarket.objects.get(external_id="9").status == "open"  # not Kalshi's to close


def test_replay_pass_marks_its_rows(venues, settings):
    settings.FEEDS_REPLAY_URL = venues.url
    settings.POLYMARKET_GAMMA_URL = settings.KALSHI_API_URL = "https://unreachable.invalid"
    run_pass(polymarket, replay=True)
    run_pass(kalshi, replay=True)
    assert PredictionMarket.objects.filter(replay=True).count() == 40
    assert set(PredictionPrice.objects.values_list("replay", flat=True)) == {True}


# --- paging and caps -------------------------------------------------------------------------
def gamma_pages(query: dict[str, str]) -> Answer:
    markets = sample_json("polymarket_gamma_url", "markets")
    offset, limit = int(query["offset"]), int(query["limit"])
    return Answer(body=markets[offset : offset + limit])


def test_gamma_paging_follows_offsets_to_the_end(venues, settings):
    settings.PREDICTION_PAGE_SIZE = 6
    venues.routes["/polymarket_gamma_url/markets"] = gamma_pages
    run_pass(polymarket)
    offsets = [q["offset"] for p, q in venues.requests if p.endswith("/markets")]
    assert offsets == ["0", "6", "12", "18"]  # the last page is short
    assert PredictionMarket.objects.filter(venue="polymarket").count() == 20


def test_gamma_paging_stops_at_the_cap(venues, settings):
    settings.PREDICTION_PAGE_SIZE = 5
    settings.POLYMARKET_MAX_MARKETS = 7
    venues.routes["/polymarket_gamma_url/markets"] = gamma_pages
    run_pass(polymarket)
    assert [q["offset"] for p, q in venues.requests if p.endswith("/markets")] == ["0", "5"]
    assert PredictionMarket.objects.filter(venue="polymarket").count() == 7


def test_gamma_paging_stops_when_a_page_brings_nothing_new(venues, settings):
    """The replay server answers every offset with the same page."""
    settings.PREDICTION_PAGE_SIZE = 10
    run_pass(polymarket)
    assert len([p for p in venues.paths() if p.endswith("/markets")]) == 2
    assert PredictionMarket.objects.filter(venue="polymarket").count() == 20


def kalshi_pages(query: dict[str, str]) -> Answer:
    markets = sample_json("kalshi_api_url", "markets")["markets"]
    start = int(query.get("cursor") or 0)
    end = start + int(query["limit"])
    return Answer(body={"markets": markets[start:end], "cursor": str(end) if end < len(markets) else ""})


def test_kalshi_paging_follows_the_cursor(venues, settings):
    settings.PREDICTION_PAGE_SIZE = 8
    venues.routes["/kalshi_api_url/markets"] = kalshi_pages
    run_pass(kalshi)
    queries = [q for p, q in venues.requests if p.endswith("/markets")]
    assert [q.get("cursor") for q in queries] == [None, "8", "16"]
    assert all(q["status"] == "open" and q["limit"] == "8" for q in queries)
    assert PredictionMarket.objects.filter(venue="kalshi").count() == 20


def test_kalshi_paging_stops_at_the_cap_and_on_a_repeated_cursor(venues, settings):
    settings.PREDICTION_PAGE_SIZE = 8
    settings.KALSHI_MAX_MARKETS = 12
    venues.routes["/kalshi_api_url/markets"] = kalshi_pages
    run_pass(kalshi)
    assert len([p for p in venues.paths() if p.endswith("/markets")]) == 2
    assert PredictionMarket.objects.filter(venue="kalshi").count() == 12

    venues.requests.clear()
    settings.KALSHI_MAX_MARKETS = 500
    venues.routes["/kalshi_api_url/markets"] = Answer(
        body={**sample_json("kalshi_api_url", "markets"), "cursor": "same"}
    )
    run_pass(kalshi)
    assert len([p for p in venues.paths() if p.endswith("/markets")]) == 2  # the second brought nothing new


# --- free catalogs ----------------------------------------------------------------------------
def test_catalogs_answer_with_both_venues(venues, api):
    run_pass(polymarket)
    run_pass(kalshi)
    body = api.get("/api/a2a/prediction/catalog?limit=100").json()
    assert body["venues"] == {"polymarket": 20, "kalshi": 20} and body["count"] == 40
    volumes = [m["volume_usd"] for m in body["markets"]]
    assert volumes == sorted(volumes, reverse=True)
    assert {(s["name"], s["replay"]) for s in body["sources"]} == {("kalshi", False), ("polymarket", False)}
    assert body["as_of"] and all(s["as_of"] for s in body["sources"])
    fed = next(m for m in body["markets"] if m["id"] == "KXFEDDECISION-26DEC-C25")
    assert fed["yes_price"] == 0.64 and fed["no_price"] == 0.36 and fed["venue"] == "kalshi"

    only = api.get("/api/a2a/prediction/catalog?venue=kalshi&limit=100").json()
    assert {m["venue"] for m in only["markets"]} == {"kalshi"} and only["count"] == 20
    assert [s["name"] for s in only["sources"]] == ["kalshi"]

    short = api.get("/api/a2a/predictionvenue/catalog?limit=5").json()
    closes = [m["closes_at"] for m in short["markets"]]
    now = timezone.now()
    expected = list(
        PredictionMarket.objects.filter(closes_at__gte=now)
        .order_by("closes_at", "id")
        .values_list("external_id", flat=True)[:5]
    )
    assert [m["id"] for m in short["markets"]] == expected and closes == sorted(closes)
    assert short["count"] == len(expected) and short["sources"]


def test_catalogs_without_ingested_rows_say_so(api):
    body = api.get("/api/a2a/prediction/catalog").json()
    assert body["as_of"] is None and body["sources"] == []


# --- retention ------------------------------------------------------------------------------
def test_prediction_prune_drops_old_price_rows_only(venues):
    run_pass(kalshi)
    market = PredictionMarket.objects.get(external_id="KXSB-27-KC")
    PredictionPrice.objects.create(
        market=market, yes_price=D("0.1"), observed_at=timezone.now() - timedelta(days=40)
    )
    total = PredictionPrice.objects.count()
    assert prediction_store.prediction_prune(before=timezone.now() - timedelta(days=30)) == 1
    assert (
        PredictionPrice.objects.count() == total - 1
        and PredictionMarket.objects.filter(pk=market.pk).exists()
    )


# --- outside failures: the pass fails, nothing is written --------------------------------------
FAILURES = {
    "500": (Answer(status=500, body=b"internal error"), FeedError),
    "malformed": (Answer(body=b'[{"id": "1", "question": '), FeedError),
    "empty": (Answer(body=b""), FeedError),
    "not a list": (Answer(body={"error": "rate limited"}), FeedError),
    "timeout": (Answer(body=b"[]", delay=1.5), requests.exceptions.RequestException),
    "private redirect": (
        Answer(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data"}),
        FeedError,
    ),
}


@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize(
    "where", ["gamma first page", "gamma second page", "kalshi", "kalshi events", "clob"]
)
def test_a_failing_venue_fails_the_pass_and_writes_nothing(venues, settings, failure, where):
    answer, error = FAILURES[failure]
    if where in ("clob", "kalshi events") and failure != "timeout":
        pytest.skip("an unusable CLOB or events answer only loses a price or a category (tested above)")
    module = kalshi if where.startswith("kalshi") else polymarket
    if where == "gamma second page":
        settings.PREDICTION_PAGE_SIZE = 10

        def route(query: dict[str, str]) -> Answer:
            return gamma_pages(query) if query["offset"] == "0" else answer

        venues.routes["/polymarket_gamma_url/markets"] = route
    else:
        path = {
            "gamma first page": "/polymarket_gamma_url/markets",
            "kalshi": "/kalshi_api_url/markets",
            "kalshi events": "/kalshi_api_url/events",
        }
        venues.routes[path.get(where, "/polymarket_clob_url/midpoint")] = answer
    with pytest.raises(error):
        run_pass(module)
    assert PredictionMarket.objects.count() == 0 and PredictionPrice.objects.count() == 0


def test_a_huge_body_fails_the_pass(venues, settings):
    settings.FEEDS_MAX_BODY_BYTES = 10_000  # the Kalshi sample is larger
    with pytest.raises(FeedError, match="more than"):
        run_pass(kalshi)
    assert PredictionMarket.objects.count() == 0
