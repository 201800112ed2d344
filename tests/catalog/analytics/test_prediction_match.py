"""Cross-venue prediction matching (catalog/analytics/prediction_match.py) and the products on it
(catalog/products/prediction_intel.py): one pair for the same event on two venues, none for
unrelated markets, a near miss flagged and not matched, staff review, the gap net of fees, the
prediction_alert pushed once when a divergence opens, the resolution calendar's order and the
top 3 ranking, each bought with credits; 503 uncharged without fresh data."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.prediction_match import (
    pair_score,
    prediction_match_review,
    prediction_matches_refresh,
    question_normalize,
)
from catalog.feeds.kalshi.parse import markets_page_parse as kalshi_parse
from catalog.feeds.polymarket.parse import markets_page_parse as gamma_parse
from catalog.feeds.prediction_store import markets_upsert
from catalog.feeds.registry import FeedPass
from catalog.models import PredictionMarket, PredictionMatch
from catalog.services import catalog_seed
from tests.support.marketdata import (
    FED_KALSHI,
    FED_POLYMARKET,
    prediction_market_write,
    prediction_shop_write,
)
from tests.support.receivers import subscribe
from tests.support.sample_server import sample_json
from tests.support.wallets import funded_buyer
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db

DIVERGENCE = "/api/a2a/x402/prediction/divergence-alerts"
TOP3 = "/api/a2a/x402/prediction/top3-daily"
CALENDAR = "/api/a2a/x402/prediction/resolution-calendar"


@pytest.fixture
def buyer(api):
    catalog_seed()
    return funded_buyer(api, 5_000_000)


def balance(account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


def kalshi_fee(p: float) -> float:
    return 0.07 * p * (1 - p)


# --- matching ------------------------------------------------------------------------------------
def test_the_same_event_on_two_venues_is_one_pair_with_both_prices_and_the_gap(api, buyer):
    key, account = buyer
    prediction_shop_write(kalshi_yes=0.55, polymarket_yes=0.62)
    pair = PredictionMatch.objects.get()  # the unrelated Chiefs / Taylor Swift markets: no pair
    assert (pair.market_a.venue, pair.market_b.venue) == ("kalshi", "polymarket")
    assert pair.market_a.question == FED_KALSHI and pair.market_b.question == FED_POLYMARKET
    assert pair.confidence >= 0.9 and pair.rules_mismatch == [] and pair.status == "auto"
    assert pair.close_gap_hours == pytest.approx(5.0)
    assert pair.divergent and pair.gap == pytest.approx(0.07)

    before = balance(account)
    resp = api.get(DIVERGENCE, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert before - balance(account) == 80_000  # 0.08 USDC
    body = resp.json()
    assert body["pairs_checked"] == 1 and body["count"] == 1
    row = body["divergences"][0]
    assert (row["a"]["yes_price"], row["b"]["yes_price"]) == (0.55, 0.62)
    assert row["gap"] == pytest.approx(0.07)
    # Buy yes on Kalshi at 0.55 (fee 0.07 x 0.55 x 0.45), no on Polymarket at 0.38 (no fee).
    assert row["fees"] == pytest.approx(kalshi_fee(0.55), abs=1e-6)
    assert row["net_gap"] == pytest.approx(0.07 - kalshi_fee(0.55), abs=1e-6)
    assert [(x["venue"], x["side"], x["price"]) for x in row["legs"]] == [
        ("kalshi", "yes", 0.55),
        ("polymarket", "no", 0.38),
    ]
    assert row["a"]["liquidity_usd"] == 188_000 and row["confidence"] == pytest.approx(
        pair.confidence, abs=1e-4
    )
    assert body["sources"] and body["method"] and body["as_of"] and body["stale"] is False


def test_a_gap_within_the_fees_is_no_divergence(api, buyer):
    key, _ = buyer
    # 0.015 apart: under Kalshi's fee at 0.64 (0.07 x 0.64 x 0.36 = 0.0161).
    prediction_shop_write(kalshi_yes=0.64, polymarket_yes=0.655)
    pair = PredictionMatch.objects.get()
    assert pair.gap == pytest.approx(0.015) and pair.net_gap == pytest.approx(
        0.015 - kalshi_fee(0.64), abs=1e-6
    )
    assert not pair.divergent
    body = api.get(DIVERGENCE, HTTP_X_API_KEY=key).json()
    assert body["pairs_checked"] == 1 and body["divergences"] == []


def test_unrelated_markets_are_not_matched():
    for venue, i, question in [
        ("kalshi", "K1", "Will the ECB cut rates at its December 2026 meeting?"),
        ("polymarket", "P1", FED_POLYMARKET),
        ("kalshi", "K2", "Will Gavin Newsom be the 2028 Democratic presidential nominee?"),
        (
            "polymarket",
            "P2",
            "Will Alexandria Ocasio-Cortez win the 2028 Democratic presidential nomination?",
        ),
        ("polymarket", "P3", "Lakers vs. Celtics"),
    ]:
        prediction_market_write(venue=venue, external_id=i, question=question, yes_price=0.3)
    assert prediction_matches_refresh() == 0
    assert not PredictionMatch.objects.exists()


def test_a_near_miss_on_the_threshold_is_flagged_and_not_a_match(api, buyer):
    """Decision: similar wording with another threshold or date is kept for staff, flagged, at
    half its similarity (under PREDICTION_MATCH_MIN_CONFIDENCE): never sold as a match."""
    key, _ = buyer
    prediction_market_write(
        venue="kalshi",
        external_id="KXETH-7000",
        question="Will Ethereum reach $7,000 in 2026?",
        yes_price=0.03,
    )
    prediction_market_write(
        venue="polymarket",
        external_id="610040",
        question="Will Ethereum reach $6,000 in 2026?",
        yes_price=0.20,
    )
    prediction_matches_refresh()
    pair = PredictionMatch.objects.get()
    assert pair.rules_mismatch == ["threshold: 7000 vs 6000"]
    assert pair.confidence == pytest.approx(pair.question_similarity * 0.5, abs=1e-3)
    assert pair.confidence < 0.6 and not pair.divergent  # 0.17 apart, still no divergence
    assert api.get(DIVERGENCE, HTTP_X_API_KEY=key).status_code == 503  # no match to sell


def test_dates_thresholds_and_sources_are_flagged():
    def flags(qa: str, qb: str, **b) -> list[str]:
        now = timezone.now()
        a = PredictionMarket(venue="kalshi", question=qa, closes_at=now)
        m = PredictionMarket(venue="polymarket", question=qb, closes_at=b.get("closes_at", now))
        m.resolution_source = b.get("source", "")
        a.resolution_source = "https://www.bls.gov/cpi" if "source" in b else ""
        idf = {}
        return pair_score(a, m, question_normalize(qa), question_normalize(qb), idf).mismatch

    assert flags("Will the ECB cut rates in December 2026?", "Will the ECB cut rates in January 2027?") == [
        "date: 2026 vs 2027"
    ]
    assert flags("Bitcoin above $100k on Dec 31, 2026?", "Bitcoin above $100,000 on December 30, 2026?") == [
        "date: december 31 2026 vs december 30 2026"
    ]
    # "500k" and "500,000" are one threshold; "by December 31, 2026" is no other date than "in 2026".
    assert (
        flags(
            "Tesla delivers more than 500k vehicles in Q4 2026?",
            "Tesla deliver above 500,000 vehicles Q4 2026?",
        )
        == []
    )
    assert (
        flags("Will Bitcoin reach $150,000 in 2026?", "Will Bitcoin reach $150,000 by December 31, 2026?")
        == []
    )
    assert flags("CPI above 3.0%?", "CPI above 3%?", source="https://fred.stlouisfed.org") == [
        "resolution source: https://www.bls.gov/cpi vs https://fred.stlouisfed.org"
    ]
    later = timezone.now() + timedelta(hours=100)
    assert flags("CPI above 3.0%?", "CPI above 3%?", closes_at=later) == ["close time: 100 h apart"]


def test_staff_reject_removes_a_pair_for_good_and_confirm_keeps_confidence_one(api, buyer, admin_client):
    key, _ = buyer
    prediction_shop_write()
    pair = PredictionMatch.objects.get()
    resp = admin_client.post(
        "/admin/catalog/predictionmatch/",
        {"action": "reject_pairs", "_selected_action": [pair.pk]},
    )
    assert resp.status_code == 302
    pair.refresh_from_db()
    assert pair.status == "rejected" and not pair.divergent
    prediction_matches_refresh()
    assert list(PredictionMatch.objects.values_list("status", flat=True)) == [
        "rejected"
    ]  # never re-suggested
    assert api.get(DIVERGENCE, HTTP_X_API_KEY=key).status_code == 503

    # A near miss staff confirm: confidence 1 from then on, through the next passes.
    prediction_market_write(
        venue="kalshi",
        external_id="KXETH-7000",
        question="Will Ethereum reach $7,000 in 2026?",
        yes_price=0.03,
    )
    prediction_market_write(
        venue="polymarket",
        external_id="610040",
        question="Will Ethereum reach $6,000 in 2026?",
        yes_price=0.20,
    )
    prediction_matches_refresh()
    near = PredictionMatch.objects.get(status="auto")
    assert near.confidence < 0.6
    prediction_match_review(match_id=near.pk, status="confirmed")
    prediction_matches_refresh()
    near.refresh_from_db()
    assert near.status == "confirmed" and near.confidence == 1.0 and near.divergent
    assert near.rules_mismatch == ["threshold: 7000 vs 6000"]  # still shown
    row = api.get(DIVERGENCE, HTTP_X_API_KEY=key).json()["divergences"][0]
    assert row["confirmed"] is True and row["confidence"] == 1.0 and row["rules_mismatch"]
    assert row["net_gap"] == pytest.approx(0.17 - kalshi_fee(0.03), abs=1e-6)


# --- the alert --------------------------------------------------------------------------------
def test_a_divergence_opening_pushes_one_prediction_alert(api, receiver, queued, settings):
    settings.PREDICTION_ALERT_MOVE = 0.5  # only the divergence alert here, not the price moves
    subscribe(api, receiver, events=("prediction_alert",))
    kalshi, poly, *_ = prediction_shop_write(kalshi_yes=0.55, polymarket_yes=0.56)

    def alerts() -> list[dict]:
        return [
            d.event.payload
            for d in WebhookDelivery.objects.filter(event__kind="prediction_alert").order_by("id")
        ]

    assert alerts() == []  # 0.01 apart: inside the fee
    poly.yes_price = Decimal("0.62")
    poly.save()
    prediction_matches_refresh()
    assert len(alerts()) == 1
    alert = alerts()[0]
    assert (
        alert["reason"] == "divergence"
        and alert["venue"] == "kalshi"
        and alert["other_venue"] == "polymarket"
    )
    assert (alert["yes_price"], alert["other_yes_price"]) == (0.55, 0.62)
    assert alert["gap"] == pytest.approx(0.07) and alert["net_gap"] == pytest.approx(0.07 - kalshi_fee(0.55))
    # It stays open, wider or not: no new alert.
    prediction_matches_refresh()
    poly.yes_price = Decimal("0.63")
    poly.save()
    prediction_matches_refresh()
    assert len(alerts()) == 1
    # It closes, then opens again: a second alert.
    poly.yes_price = Decimal("0.56")
    poly.save()
    prediction_matches_refresh()
    assert not PredictionMatch.objects.get().divergent
    poly.yes_price = Decimal("0.62")
    poly.save()
    prediction_matches_refresh()
    assert len(alerts()) == 2
    assert WebhookDelivery.objects.filter(event__kind="prediction_alert").count() == 2


# --- the calendar and the top 3 ---------------------------------------------------------------
def test_the_resolution_calendar_is_in_close_time_order(api, buyer):
    key, account = buyer
    for i, hours in enumerate([50, 10, 300, 30]):
        prediction_market_write(
            venue="kalshi" if i % 2 else "polymarket",
            external_id=f"M{hours}",
            question=f"Market closing in {hours} h?",
            yes_price=0.4,
            closes_in_hours=hours,
            resolution_source="https://www.bls.gov" if hours == 10 else "",
            rules="Resolves Yes if the BLS prints above 3.0%.",
        )
    prediction_market_write(
        venue="kalshi", external_id="CLOSED", question="Trading ended?", yes_price=0.9,
        closes_in_hours=20, status="closed",
    )  # fmt: skip
    before = balance(account)
    body = api.get(CALENDAR, {"days": 7}, HTTP_X_API_KEY=key).json()
    assert before - balance(account) == 50_000
    assert [m["market_id"] for m in body["markets"]] == ["M10", "CLOSED", "M30", "M50"]
    assert [m["status"] for m in body["markets"]] == ["open", "closed", "open", "open"]
    first = body["markets"][0]
    assert first["resolution_source"] == "https://www.bls.gov" and first["rules"].startswith("Resolves Yes")
    assert first["hours_to_close"] == pytest.approx(10, abs=0.01)
    assert body["days"] == 7 and body["count"] == 4
    one_day = api.get(CALENDAR, {"days": 1, "venue": "kalshi"}, HTTP_X_API_KEY=key).json()
    assert [m["market_id"] for m in one_day["markets"]] == ["M10", "CLOSED"]
    bad = api.get(CALENDAR, {"days": 0}, HTTP_X_API_KEY=key)
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "days"


def test_top3_ranks_by_liquidity_move_and_time_to_close(api, buyer):
    key, account = buyer
    spec = {  # id: (liquidity, history (hours ago, price), price now, closes in days)
        "A": (1_000_000, (), 0.5, 200),
        "B": (10_000, ((30, 0.30),), 0.50, 3),
        "C": (100_000, ((30, 0.45),), 0.50, 10),
        "D": (100, (), 0.5, 300),
    }
    for name, (liq, history, price, days) in spec.items():
        prediction_market_write(
            venue="polymarket", external_id=name, question=f"Market {name}?", yes_price=price,
            liquidity=liq, history=history, closes_in_hours=days * 24,
        )  # fmt: skip
    before = balance(account)
    body = api.get(TOP3, HTTP_X_API_KEY=key).json()
    assert before - balance(account) == 60_000
    assert body["candidates"] == 4
    assert [m["market_id"] for m in body["markets"]] == ["B", "C", "A"]
    top = body["markets"][0]
    assert top["move_24h"] == pytest.approx(0.20) and "moved +0.200 in 24 h" in top["why"]
    liq = math.log1p(10_000) / math.log1p(1_000_000)
    assert top["score"] == pytest.approx(0.4 * liq + 0.4 * 1.0 + 0.2 / (1 + 3 / 7), abs=1e-3)
    assert body["markets"][1]["components"]["move_24h"] == pytest.approx(0.25)
    assert body["markets"][2]["move_24h"] is None  # no reading a day old: no move on record


# --- nothing fresh ----------------------------------------------------------------------------
@pytest.mark.parametrize("path", [DIVERGENCE, TOP3, CALENDAR])
def test_no_fresh_markets_answer_503_uncharged(api, buyer, path):
    key, account = buyer
    before = balance(account)
    assert api.get(path, HTTP_X_API_KEY=key).status_code == 503  # nothing at all
    prediction_shop_write()
    PredictionMarket.objects.update(observed_at=timezone.now() - timedelta(hours=2))
    resp = api.get(path, HTTP_X_API_KEY=key)
    assert resp.status_code == 503, resp.content
    assert balance(account) == before


# --- the replay samples -------------------------------------------------------------------------
def test_the_replay_samples_show_a_match_a_divergence_and_a_flagged_near_miss():
    now = timezone.now()
    poly = [m.row for m in gamma_parse(sample_json("polymarket_gamma_url", "markets"))]
    kalshi = kalshi_parse(sample_json("kalshi_api_url", "markets")).rows
    poly_pass = FeedPass(source="polymarket", replay=True, started_at=now)
    markets_upsert(poly, venue="polymarket", source="polymarket", feed_pass=poly_pass)
    kalshi_pass = FeedPass(source="kalshi", replay=True, started_at=now)
    markets_upsert(kalshi, venue="kalshi", source="kalshi", feed_pass=kalshi_pass)
    prediction_matches_refresh(now=now)
    pairs = {
        m.market_a.external_id: m for m in PredictionMatch.objects.select_related("market_a", "market_b")
    }
    fed = pairs["KXFEDDECISION-26DEC-C25"]
    assert fed.market_b.external_id == "610001" and fed.confidence >= 0.9 and not fed.divergent
    dem = pairs["KXPRESPARTY-28-D"]  # Kalshi 0.53, Polymarket 0.585
    assert dem.market_b.external_id == "610248" and dem.divergent
    assert dem.net_gap == pytest.approx(0.055 - kalshi_fee(0.53), abs=1e-6)
    eth = pairs["KXETHMAXY-26DEC31-6999.99"]  # $7,000 on Kalshi, $6,000 on Polymarket
    assert eth.market_b.external_id == "610040" and eth.rules_mismatch == ["threshold: 7000 vs 6000"]
    assert eth.confidence < 0.6 and not eth.divergent
    newsom = pairs["KXPRESNOMD-28-GN"]
    assert newsom.market_b.external_id == "610053" and newsom.rules_mismatch == ["close time: 94 h apart"]
    assert "610118" not in {m.market_b.external_id for m in pairs.values()}  # "Lakers vs. Celtics": too terse
