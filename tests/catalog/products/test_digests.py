"""The digests computed from the data (catalog/products/digests/), the grants feed
(catalog/feeds/grants/) and the teasers' excerpts (catalog/selectors/teasers.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.feeds.grants.parse import date_parse, deadline_in, grants_parse
from catalog.feeds.runner import feed_run
from catalog.models import EditorialPiece, GrantFeed, GrantProgram, Sku
from catalog.products.digests.grants import grants_payload
from catalog.products.digests.groups import market_groups_payload
from catalog.products.digests.regulatory import impact_of, regulatory_payload
from catalog.products.digests.weekly import weekly_payload
from catalog.services import catalog_seed
from tests.support import ROOT
from tests.support.feedserver import Answer, FeedServer
from tests.support.marketdata import digests_market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

SAMPLE = ROOT / "catalog/feeds/samples/grant_feeds/index.xml"


@pytest.fixture
def data():
    catalog_seed()
    digests_market_write()


@pytest.fixture
def buyer(api):
    catalog_seed()
    return funded_buyer(api, 5_000_000)


def balance(account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


# --- market groups ----------------------------------------------------------------------------
def test_market_groups_have_their_news_sentiment_and_movers(data):
    out = market_groups_payload(limit=5)
    groups = {g["group"]: g for g in out["groups"]}
    # The most covered first, then by name; the SEC rule of 30 h ago is outside the 24 h window.
    assert [g["group"] for g in out["groups"]] == ["crypto", "macro", "regulation"]
    crypto = groups["crypto"]
    assert crypto["items"] == 2 and crypto["sentiment"]["label"] == "positive"
    assert crypto["sentiment"]["positive"] == 2 and crypto["sentiment"]["score"] > 0.05
    assert [h["title"] for h in crypto["headlines"]][0].startswith("Solana rallies")  # newest first
    (sol,) = crypto["movers"]
    assert sol["asset"] == "SOL" and sol["symbol"] == "SOL/USDT"
    # 1% a bar for 24 bars: 1.01^24 - 1
    assert sol["change_24h_pct"] == pytest.approx((1.01**24 - 1) * 100, abs=1e-3)
    assert groups["regulation"]["movers"] == [] and groups["regulation"]["items"] == 1
    assert groups["regulation"]["sentiment"]["negative"] >= 1  # "charges ... fraud"
    assert out["replay"] is False and out["stale"] is False and out["method"]
    assert {s["name"] for s in out["sources"]} >= {"test-wire", "SEC", "exchanges"}


def test_market_groups_digest_bought_with_credits_and_503_uncharged_without_news(api, buyer):
    key, account = buyer
    before = balance(account)
    resp = api.get("/api/a2a/x402/intel/market-groups-digest", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and balance(account) == before
    digests_market_write()
    resp = api.get("/api/a2a/x402/intel/market-groups-digest", {"limit": 1}, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert all(len(g["headlines"]) == 1 for g in resp.json()["groups"])
    assert before - balance(account) == Sku.objects.get(sku="market_groups_digest").price_atomic
    assert (
        api.get("/api/a2a/x402/intel/market-groups-digest", {"limit": 0}, HTTP_X_API_KEY=key).status_code
        == 422
    )


# --- tech regulatory ----------------------------------------------------------------------------
def test_impact_weights_kinds_and_halves_every_48_hours():
    assert impact_of("SEC charges exchange operator with fraud", age=timedelta(0)) == (4.0, ["enforcement"])
    assert impact_of("SEC charges exchange operator with fraud", age=timedelta(hours=48)) == (
        2.0,
        ["enforcement"],
    )
    score, kinds = impact_of("Federal Reserve announces FOMC rate decision", age=timedelta(0))
    assert kinds == ["rate decision"] and score == 4.0
    assert impact_of("A quiet day", age=timedelta(0)) == (1.0, [])


def test_regulatory_digest_ranks_by_impact_and_appends_the_staff_note(data):
    out = regulatory_payload(limit=10)
    titles = [i["title"] for i in out["items"]]
    # Only the regulators' and central banks' items; the Solana news is not theirs.
    assert not any("Solana" in t for t in titles)
    assert titles[0] == "SEC charges exchange operator with fraud"  # 4 x 0.5^(2/48) = 3.88
    assert out["items"][0]["impact"] == pytest.approx(4 * 0.5 ** (2 / 48), abs=1e-3)
    assert titles[1] == "Federal Reserve announces FOMC rate decision"  # 4 x 0.5^(5/48) = 3.72
    rule = next(i for i in out["items"] if i["title"].startswith("SEC adopts"))
    assert rule["kinds"] == ["rule"] and rule["impact"] == pytest.approx(3 * 0.5 ** (30 / 48), abs=1e-3)
    assert [i["impact"] for i in out["items"]] == sorted((i["impact"] for i in out["items"]), reverse=True)
    assert out["staff_note"] is None
    EditorialPiece.objects.create(
        kind=EditorialPiece.Kind.REGULATORY,
        title="Our read",
        summary="s",
        body="b",
        published_at=timezone.now(),
    )
    assert regulatory_payload()["staff_note"]["title"] == "Our read"


# --- weekly ---------------------------------------------------------------------------------------
def test_weekly_digest_has_the_weeks_record_regimes_news_and_resolutions(data):
    out = weekly_payload(limit=5)
    desk = next(d for d in out["desks"] if d["desk"] == "trend-momentum-digest")
    assert (desk["trades"], desk["wins"], desk["losses"]) == (3, 2, 1)  # the -5 of 10 days ago is out
    assert desk["total_pnl_pct"] == 4.0 and desk["win_rate"] == pytest.approx(0.6667)
    assert desk["max_drawdown_pct"] == 1.0 and out["desks"][0]["desk"] == "all"
    assert [(c["previous"], c["regime"]) for c in out["regime_changes"]] == [
        ("range", "up_trend"),
        ("up_trend", "high_volatility"),
    ]
    assert out["regime_now"] == "high_volatility"
    magnitudes = [abs(n["compound"]) for n in out["biggest_news"]]
    assert magnitudes == sorted(magnitudes, reverse=True) and len(magnitudes) == 5
    assert [(r["question"], r["status"]) for r in out["resolutions"]] == [
        ("Digest market r-1?", "resolved"),
        ("Digest market c-1?", "closed"),
    ]
    assert out["resolutions"][0]["yes_price"] == 0.97 and out["staff_note"] is None


def test_weekly_digest_bought_and_503_uncharged_on_an_empty_week(api, buyer):
    key, account = buyer
    before = balance(account)
    assert api.get("/api/a2a/x402/research/weekly-digest", HTTP_X_API_KEY=key).status_code == 503
    assert balance(account) == before
    digests_market_write()
    resp = api.get("/api/a2a/x402/research/weekly-digest", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp.json()["regime_now"] == "high_volatility"
    assert before - balance(account) == Sku.objects.get(sku="research_weekly_digest").price_atomic


# --- grant scout ----------------------------------------------------------------------------------
def test_deadlines_are_read_from_the_text():
    end = datetime(2026, 12, 14, 23, 59, 59, tzinfo=UTC)
    assert deadline_in("Applications close December 14, 2026.") == end
    assert deadline_in("Deadline: 2026-12-14") == end
    assert deadline_in("Apply by 14 Dec 2026") == end
    assert deadline_in("Launched March 3, 2026; reviewed monthly") is None  # a date, not a deadline
    assert date_parse("Sept 1st, 2026") == datetime(2026, 9, 1, 23, 59, 59, tzinfo=UTC)


def test_the_recorded_sample_parses_with_deadlines():
    entries = {e.external_id: e for e in grants_parse(SAMPLE.read_bytes())}
    assert entries["agent-infrastructure-round-4"].deadline == datetime(2026, 12, 14, 23, 59, 59, tzinfo=UTC)
    assert entries["public-goods-da-research"].deadline == datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
    assert entries["payments-builders-cohort-2"].deadline == datetime(2027, 1, 21, 23, 59, 59, tzinfo=UTC)
    assert entries["wallet-security-round"].deadline == datetime(2026, 11, 6, 23, 59, 59, tzinfo=UTC)
    assert entries["oracle-ecosystem-fund"].deadline is None


def test_a_grants_pass_writes_programs_and_one_failing_feed_is_a_warning(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    server = FeedServer()
    try:
        server.routes["/grants.xml"] = Answer(
            body=SAMPLE.read_bytes(), headers={"Content-Type": "application/rss+xml"}
        )
        GrantFeed.objects.create(name="Good", url=f"{server.url}/grants.xml")
        GrantFeed.objects.create(name="Broken", url=f"{server.url}/missing.xml")
        GrantFeed.objects.create(name="Off", url=f"{server.url}/off.xml", enabled=False)
        state = feed_run(name="grants", mode="live")
    finally:
        server.close()
    assert state.outcome == "ok" and state.rows_written == 5 and "Broken" in state.last_note
    assert GrantProgram.objects.filter(source="Good", replay=False).count() == 5
    assert "/off.xml" not in server.hits


def test_a_replayed_pass_moves_deadlines_with_the_announcements(settings):
    from catalog.feeds.replay import replay_start

    replay = replay_start(port=0)
    try:
        settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{replay.server_address[1]}"
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        GrantFeed.objects.create(name="Sample", url="https://sample-grants.invalid/feed.xml")
        state = feed_run(name="grants", mode="replay")
    finally:
        replay.shutdown()
        replay.server_close()
    assert state.outcome == "ok", state.last_error
    newest = GrantProgram.objects.get(external_id="agent-infrastructure-round-4")
    assert newest.replay and abs((newest.published_at - timezone.now()).total_seconds()) < 120
    # The recorded 28 days (less 9 h) between announcement and deadline are kept.
    assert newest.deadline - newest.published_at == timedelta(days=28, hours=14, minutes=59, seconds=59)
    out = grants_payload()
    assert "Wallet security bounty round closed" not in [p["title"] for p in out["programs"]]
    assert out["replay"] is True and out["count"] == 4


def test_grant_scout_lists_open_programs_soonest_first(data):
    out = grants_payload()
    assert [p["title"] for p in out["programs"]] == [
        "Data availability research",
        "Agent tooling grants",
        "Rolling oracle fund",
    ]
    assert out["with_deadline"] == 2 and out["programs"][0]["days_left"] == pytest.approx(3, abs=0.01)
    assert out["programs"][2]["deadline"] is None and out["stale"] is False


def test_grant_scout_bought_and_503_uncharged_without_programs(api, buyer):
    key, account = buyer
    before = balance(account)
    assert api.get("/api/a2a/x402/intel/grant-scout-desk", HTTP_X_API_KEY=key).status_code == 503
    assert balance(account) == before
    digests_market_write()
    resp = api.get("/api/a2a/x402/intel/grant-scout-desk", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp.json()["count"] == 3
    assert before - balance(account) == Sku.objects.get(sku="grant_scout_desk").price_atomic


# --- teasers ----------------------------------------------------------------------------------------
def test_a_teaser_shows_an_excerpt_of_the_current_content(api, data):
    body = api.get("/api/a2a/teaser/grant-scout").json()
    assert body["available"] is True
    assert [p["title"] for p in body["excerpt"]["programs"]] == [
        p["title"] for p in grants_payload()["programs"]
    ][:3]
    assert "sources" not in body["excerpt"]
    groups = api.get("/api/a2a/teaser/market-groups-digest").json()["excerpt"]["groups"]
    assert len(groups) <= 3 and groups[0]["group"] == "crypto"
    assert groups[0]["movers"][0]["change_24h_pct"] == pytest.approx((1.01**24 - 1) * 100, abs=1e-3)
    # Long text is cut: the excerpt never carries a full text.
    assert all(len(h["title"]) <= 160 for g in groups for h in g["headlines"])


def test_a_teaser_says_when_the_product_has_nothing_fresh(api):
    catalog_seed()
    body = api.get("/api/a2a/teaser/grant-scout").json()
    assert body["available"] is False and body["excerpt"] is None
    assert "grant" in body["unavailable_reason"]
    # Same at the readiness alias.
    assert api.get("/api/a2a/partner/grants-readiness").json()["excerpt"] is None


def test_every_interface_teaser_answers_with_a_dict_or_no_excerpt(api, data):
    from catalog.seed.content import interface_teaser_names

    for name in interface_teaser_names():
        resp = api.get(f"/api/a2a/teaser/{name}")
        assert resp.status_code == 200, name
        body = resp.json()
        assert body["excerpt"] is None or isinstance(body["excerpt"], dict), name
        assert body["available"] or body["excerpt"] is None, name
