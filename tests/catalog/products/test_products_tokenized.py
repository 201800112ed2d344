"""The tokenized desks (catalog/products/tokenized.py): the US session and the spot metals
session at fixed instants, the premium figures (a token 2 % above its underlying is +200 bps),
stale and skipped inputs, the session desk's plan lines, both products bought with credits,
503 uncharged without fresh data, the free watchlist's reference prices, and the whole chain
from the replayed exchange and equity samples."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.market_hours import (
    metals_next_open,
    metals_open,
    quote_stale,
    reference_state,
    us_last_close,
    us_next_close,
    us_next_open,
    us_session_state,
)
from catalog.analytics.premium import premium
from catalog.feeds.runner import feed_run
from catalog.models import Sku, TokenizedAsset
from catalog.products.registry import ProductFailed, product_get, product_has_content
from catalog.products.tokenized import (
    TokenizedPremiumOut,
    TokenizedSessionDeskOut,
    premium_payload,
    session_desk_payload,
)
from tests.support.marketdata import market_write, tokenized_market_write, tokenized_write
from tests.support.replay_server import sample_server
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

# Monday 23 November 2026, 07:00 in New York (EST): pre-market.
MON_PRE = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
MON_SESSION = datetime(2026, 11, 23, 15, 0, tzinfo=UTC)  # 10:00 New York
FRI_CLOSE = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)  # 16:00 New York


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# --- the sessions, at fixed instants ----------------------------------------------------------------
@pytest.mark.parametrize(
    "now,state",
    [
        (utc(2026, 11, 23, 8, 59), "closed"),  # 03:59
        (utc(2026, 11, 23, 9, 0), "pre_market"),  # 04:00
        (utc(2026, 11, 23, 14, 29), "pre_market"),  # 09:29
        (utc(2026, 11, 23, 14, 30), "regular"),  # 09:30
        (utc(2026, 11, 23, 20, 59), "regular"),  # 15:59
        (utc(2026, 11, 23, 21, 0), "after_hours"),  # 16:00
        (utc(2026, 11, 24, 1, 0), "closed"),  # 20:00
        (utc(2026, 11, 28, 15, 0), "closed"),  # Saturday
        (utc(2026, 11, 29, 15, 0), "closed"),  # Sunday
        (utc(2026, 7, 15, 13, 29), "pre_market"),  # summer (EDT): 09:29
        (utc(2026, 7, 15, 13, 30), "regular"),  # 09:30 EDT is 13:30 UTC
        (utc(2026, 7, 15, 20, 0), "after_hours"),  # 16:00 EDT
    ],
)
def test_us_session_state(now, state):
    assert us_session_state(now) == state


def test_us_session_opens_and_closes():
    assert us_next_open(MON_PRE) == utc(2026, 11, 23, 14, 30)
    assert us_next_close(MON_PRE) == utc(2026, 11, 23, 21, 0)
    assert us_last_close(MON_PRE) == FRI_CLOSE
    # In session: the close is today's, the next open tomorrow's.
    assert us_next_close(MON_SESSION) == utc(2026, 11, 23, 21, 0)
    assert us_next_open(MON_SESSION) == utc(2026, 11, 24, 14, 30)
    # Friday evening: the next session is Monday's.
    friday_evening = utc(2026, 11, 27, 23, 0)
    assert us_next_open(friday_evening) == utc(2026, 11, 30, 14, 30)
    assert us_next_close(friday_evening) == utc(2026, 11, 30, 21, 0)
    assert us_last_close(friday_evening) == utc(2026, 11, 27, 21, 0)
    # Across the change to daylight saving (8 March 2026): Friday 21:00 UTC, Monday 13:30 UTC.
    assert us_next_open(utc(2026, 3, 7, 12, 0)) == utc(2026, 3, 9, 13, 30)


@pytest.mark.parametrize(
    "now,is_open",
    [
        (utc(2026, 11, 27, 21, 59), True),  # Friday 16:59
        (utc(2026, 11, 27, 22, 0), False),  # Friday 17:00: weekend
        (utc(2026, 11, 28, 12, 0), False),  # Saturday
        (utc(2026, 11, 29, 22, 59), False),  # Sunday 17:59
        (utc(2026, 11, 29, 23, 0), True),  # Sunday 18:00
        (utc(2026, 11, 30, 22, 15), False),  # Monday 17:15: the daily break
        (utc(2026, 11, 30, 23, 5), True),  # Monday 18:05
    ],
)
def test_spot_metals_session(now, is_open):
    assert metals_open(now) is is_open


def test_reference_state_and_quote_staleness():
    assert metals_next_open(utc(2026, 11, 27, 22, 30)) == utc(2026, 11, 29, 23, 0)
    gold = reference_state("XAU", MON_PRE)
    assert (gold.market, gold.open) == ("spot_metals", True)
    aapl = reference_state("AAPL", MON_PRE)
    assert (aapl.market, aapl.open, aapl.last_close, aapl.next_open) == (
        "us_equities",
        False,
        FRI_CLOSE,
        utc(2026, 11, 23, 14, 30),
    )
    limit = timedelta(minutes=30)
    friday_close_quote = FRI_CLOSE + timedelta(seconds=9)
    # Closed: Friday's close is the reference, however old; a Thursday quote is stale.
    assert not quote_stale(quoted_at=friday_close_quote, state=aapl, now=MON_PRE, max_age=limit)
    assert quote_stale(quoted_at=FRI_CLOSE - timedelta(days=1), state=aapl, now=MON_PRE, max_age=limit)
    # Open: the same Friday quote is stale; one from 20 minutes ago is not.
    in_session = reference_state("AAPL", MON_SESSION)
    assert quote_stale(quoted_at=friday_close_quote, state=in_session, now=MON_SESSION, max_age=limit)
    assert not quote_stale(
        quoted_at=MON_SESSION - timedelta(minutes=20), state=in_session, now=MON_SESSION, max_age=limit
    )


# --- premium figures -------------------------------------------------------------------------------
def test_premium_arithmetic():
    up = premium(Decimal("102"), Decimal("100"))
    assert (up.pct, up.bps, up.direction) == (2.0, 200.0, "premium")
    down = premium(Decimal("99.5"), Decimal("100"))
    assert (down.pct, down.bps, down.direction) == (-0.5, -50.0, "discount")
    assert premium(Decimal("100"), Decimal("100")).direction == "par"
    assert premium(None, Decimal("1")) is None and premium(Decimal("1"), None) is None
    assert premium(Decimal("1"), Decimal("0")) is None


def test_premium_product_figures_ranked_by_absolute_premium():
    tokenized_market_write(now=MON_PRE)
    out = premium_payload(MON_PRE)
    TokenizedPremiumOut.model_validate(out)
    assert [a["symbol"] for a in out["assets"]] == ["AAPLX", "TSLAX", "PAXG"]
    aapl, tsla, paxg = out["assets"]
    assert (aapl["premium_bps"], aapl["premium_pct"], aapl["direction"]) == (200.0, 2.0, "premium")
    assert (aapl["last_price"], aapl["underlying_price"]) == (204.0, 200.0)
    assert (
        aapl["price_as_of"] == "2026-11-23T11:59:00Z" and aapl["underlying_as_of"] == "2026-11-23T12:00:00Z"
    )
    assert (aapl["reference_market"], aapl["reference_open"], aapl["underlying_stale"]) == (
        "us_equities",
        False,
        False,
    )
    assert (tsla["premium_bps"], tsla["direction"]) == (-100.0, "discount")
    assert (
        paxg["premium_bps"] == 10.0 and paxg["reference_market"] == "spot_metals" and paxg["reference_open"]
    )
    assert out["us_session"] == "pre_market" and out["us_cash_market_open"] is False
    assert out["count"] == 3 and out["skipped"] == [] and out["underlying_max_age_minutes"] == 30
    assert out["as_of"] == "2026-11-23T12:00:00Z" and out["replay"] is False and out["stale"] is False
    names = {(s["name"], s["venue"]) for s in out["sources"]}
    assert {("exchanges", "bybit"), ("equities", None)} <= names
    assert "NYSE regular hours" in out["method"] and "holidays not modelled" in out["method"]


def test_premium_flags_an_old_underlying_and_skips_what_it_cannot_price():
    # In session, AAPL's reference is Friday's close: stale. TSLA's is 10 minutes old.
    tokenized_write(
        symbol="AAPLX",
        underlying="AAPL",
        last_price=204,
        underlying_price=200,
        underlying_as_of=FRI_CLOSE,
        now=MON_SESSION,
    )
    tokenized_write(
        symbol="TSLAX",
        underlying="TSLA",
        last_price=303,
        underlying_price=300,
        underlying_as_of=MON_SESSION - timedelta(minutes=10),
        now=MON_SESSION,
    )
    tokenized_write(symbol="NVDAX", underlying="NVDA", last_price=150, underlying_price=None, now=MON_SESSION)
    tokenized_write(symbol="LONE", underlying="", last_price=1, underlying_price=None, now=MON_SESSION)
    tokenized_write(
        symbol="OLDX",
        underlying="MSFT",
        last_price=420,
        underlying_price=400,
        price_age_minutes=20,
        now=MON_SESSION,
    )
    TokenizedAsset.objects.create(symbol="NEWX", name="new", venue="", underlying="META")
    out = premium_payload(MON_SESSION)
    assets = {a["symbol"]: a for a in out["assets"]}
    assert set(assets) == {"AAPLX", "TSLAX"} and out["us_cash_market_open"] is True
    assert assets["AAPLX"]["underlying_stale"] is True and assets["AAPLX"]["reference_open"] is True
    assert assets["AAPLX"]["underlying_age_minutes"] == 3 * 24 * 60 - 6 * 60
    assert assets["TSLAX"]["underlying_stale"] is False and assets["TSLAX"]["premium_bps"] == 100.0
    assert {s["symbol"]: s["reason"] for s in out["skipped"]} == {
        "NEWX": "no price from any exchange yet",
        "OLDX": "price older than 15 min",
        "NVDAX": "no reference price for the underlying yet",
        "LONE": "no underlying set",
    }


def test_premium_without_fresh_data_fails():
    with pytest.raises(ProductFailed):
        premium_payload(MON_PRE)
    tokenized_write(
        symbol="AAPLX", underlying="AAPL", last_price=204, underlying_price=200, price_age_minutes=30
    )
    tokenized_write(symbol="NVDAX", underlying="NVDA", last_price=150, underlying_price=None)
    with pytest.raises(ProductFailed, match="nothing was charged"):
        premium_payload(timezone.now())
    assert product_has_content("tokenized_premium")[0] is False
    assert product_has_content("tokenized_session_desk")[0] is True  # NVDAX has a fresh price


# --- the session desk ------------------------------------------------------------------------------
def test_session_desk_before_the_open():
    tokenized_market_write(now=MON_PRE)
    out = session_desk_payload(MON_PRE)
    TokenizedSessionDeskOut.model_validate(out)
    session = out["session"]
    assert session == {
        "state": "pre_market",
        "cash_market_open": False,
        "now_new_york": "2026-11-23T07:00:00-05:00",
        "next_open": "2026-11-23T14:30:00Z",
        "next_close": "2026-11-23T21:00:00Z",
        "last_close": "2026-11-20T21:00:00Z",
        "minutes_to_open": 150,
        "minutes_to_close": None,
    }
    assets = {a["symbol"]: a for a in out["assets"]}
    assert [a["symbol"] for a in out["assets"]] == ["AAPLX", "TSLAX", "PAXG"]
    aapl = assets["AAPLX"]
    assert (aapl["premium_bps"], aapl["change_24h_pct"], aapl["listed"]) == (200.0, 0.5, True)
    assert aapl["spread_bps"] == pytest.approx(49.02, abs=0.01) and aapl["volume_24h_usd"] == 120_000.0
    assert aapl["plan"][0].startswith(
        "premium of 200 bps while the US cash market is closed: expect convergence"
    )
    assert (
        "(2026-11-23T14:30:00Z)" in aapl["plan"][0] and "holders may sell into the premium" in aapl["plan"][0]
    )
    assert aapl["plan"][1].startswith("wide spread (49.0 bps on bybit): use limit orders")
    assert aapl["plan"][2] == "thin 24h volume ($120,000): keep orders small and split them"
    tsla = assets["TSLAX"]
    assert tsla["plan"][0].startswith("discount of 100 bps while the US cash market is closed")
    assert "buyers get it below the underlying" in tsla["plan"][0]
    assert tsla["plan"][1].startswith("tight spread (2.0 bps on bybit): a market order costs about 1.0 bps")
    assert len(tsla["plan"]) == 2
    paxg = assets["PAXG"]
    assert paxg["reference_market"] == "spot_metals" and paxg["reference_open"]
    assert paxg["plan"][0] == "+10 bps from the underlying: the token tracks its reference"
    assert out["thresholds"]["premium_bps"] == 50.0 and out["count"] == 3 and out["stale"] is False


def test_session_desk_in_session_and_with_missing_inputs():
    tokenized_write(
        symbol="AAPLX",
        underlying="AAPL",
        last_price=204,
        underlying_price=200,
        underlying_as_of=MON_SESSION - timedelta(minutes=5),
        now=MON_SESSION,
    )
    market_write(exchange="bybit", symbol="AAPLX/USDT", bid=203.9, ask=204.1)
    tokenized_write(symbol="NVDAX", underlying="NVDA", last_price=150, underlying_price=None, now=MON_SESSION)
    tokenized_write(
        symbol="TSLAX",
        underlying="TSLA",
        last_price=303,
        underlying_price=300,
        underlying_as_of=FRI_CLOSE,
        now=MON_SESSION,
    )
    out = session_desk_payload(MON_SESSION)
    assert out["session"]["state"] == "regular" and out["session"]["minutes_to_close"] == 360
    assert out["session"]["minutes_to_open"] is None
    assets = {a["symbol"]: a for a in out["assets"]}
    assert [a["symbol"] for a in out["assets"]] == ["AAPLX", "TSLAX", "NVDAX"]  # no premium: last
    assert assets["AAPLX"]["plan"][0].startswith("premium of 200 bps with the US cash market open")
    assert assets["TSLAX"]["underlying_stale"] is True
    assert assets["TSLAX"]["plan"][0].startswith("the underlying quote is older than 30 min")
    nvda = assets["NVDAX"]
    assert (nvda["premium_bps"], nvda["underlying_price"], nvda["listed"], nvda["spread_bps"]) == (
        None,
        None,
        False,
        None,
    )
    assert nvda["plan"] == [
        "no reference price for the underlying: the token's own book is the only price",
        "no book top ingested for the token: check the venue's book before trading",
    ]


def test_session_desk_without_fresh_prices_fails():
    with pytest.raises(ProductFailed):
        session_desk_payload(MON_PRE)
    tokenized_write(
        symbol="AAPLX", underlying="AAPL", last_price=204, underlying_price=200, price_age_minutes=16
    )
    with pytest.raises(ProductFailed):
        session_desk_payload(timezone.now())


# --- sold with credits; 503 uncharged --------------------------------------------------------------
@pytest.fixture
def buyer(api):
    return funded_buyer(api, 5_000_000)


def balance(account: Account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


def test_both_products_are_bought_with_credits(api, buyer):
    key, account = buyer
    tokenized_market_write()
    assert product_get("tokenized_premium") is not None and product_get("tokenized_session_desk") is not None
    assert Sku.objects.get(sku="tokenized_premium").price_atomic == 80_000

    before = balance(account)
    resp = api.get("/api/a2a/tokenized/premium", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["assets"][0]["symbol"] == "AAPLX" and body["assets"][0]["premium_bps"] == 200.0
    assert before - balance(account) == 80_000

    before = balance(account)
    resp = api.get("/api/a2a/x402/tokenized/session-desk", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert resp.json()["assets"][0]["plan"] and resp.json()["session"]["state"] in (
        "pre_market",
        "regular",
        "after_hours",
        "closed",
    )
    assert before - balance(account) == Sku.objects.get(sku="tokenized_session_desk").price_atomic == 200_000


def test_without_fresh_data_both_answer_503_uncharged(api, buyer):
    key, account = buyer
    before = balance(account)
    for path in (
        "/api/a2a/tokenized/premium",
        "/api/a2a/x402/tokenized/premium",
        "/api/a2a/x402/tokenized/session-desk",
    ):
        resp = api.get(path, HTTP_X_API_KEY=key)
        assert resp.status_code == 503, (path, resp.content)
    # Prices exist but are stale (the exchanges feed stopped): still nothing to sell.
    tokenized_write(
        symbol="AAPLX", underlying="AAPL", last_price=204, underlying_price=200, price_age_minutes=45
    )
    for path in ("/api/a2a/tokenized/premium", "/api/a2a/x402/tokenized/session-desk"):
        assert api.get(path, HTTP_X_API_KEY=key).status_code == 503
    assert balance(account) == before


# --- the free watchlist ----------------------------------------------------------------------------
def test_the_watchlist_shows_each_assets_underlying_and_premium(api):
    tokenized_market_write()
    tokenized_write(symbol="NVDAX", underlying="NVDA", last_price=150, underlying_price=None)
    body = api.get("/api/a2a/tokenized/watchlist").json()
    assets = {a["symbol"]: a for a in body["watchlist"]}
    assert (
        assets["AAPLX"]["underlying_price"],
        assets["AAPLX"]["premium_bps"],
        assets["AAPLX"]["premium_pct"],
    ) == (
        200.0,
        200.0,
        2.0,
    )
    assert assets["AAPLX"]["underlying_as_of"].endswith("Z")
    assert assets["TSLAX"]["premium_bps"] == -100.0
    assert (assets["NVDAX"]["underlying_price"], assets["NVDAX"]["premium_bps"]) == (None, None)
    sources = {(s["name"], s["venue"]): s for s in body["sources"]}
    assert sources[("equities", None)]["items"] == 3 and sources[("exchanges", "bybit")]["items"] == 4
    assert "tokenized_premium" in {p["sku"] for p in body["paid"]}


# --- end to end on the replayed samples -----------------------------------------------------------
def test_replayed_exchanges_and_equities_price_the_gold_tokens(settings, api):
    with sample_server() as (base, seen):
        settings.FEEDS_REPLAY_URL = base
        settings.EXCHANGES = ["binance", "okx", "bybit"]
        settings.MARKET_SYMBOLS = ["BTC"]
        assert feed_run(name="exchanges", mode="replay").outcome == "ok"
        state = feed_run(name="equities", mode="replay")
        assert state.outcome == "ok", state.last_error
    assert "/equity_quotes_url/quotes.csv" in seen
    paxg = TokenizedAsset.objects.get(symbol="PAXG")
    assert paxg.underlying_price == Decimal("2646.30") and paxg.underlying_replay and paxg.replay
    out = premium_payload(timezone.now())
    assets = {a["symbol"]: a for a in out["assets"]}
    expected = round(float((paxg.last_price / Decimal("2646.30") - 1) * 10_000), 2)
    assert assets["PAXG"]["premium_bps"] == expected and 0 < expected < 50
    assert assets["XAUT"]["underlying_price"] == 2646.30 and assets["XAUT"]["replay"]
    assert out["replay"] is True and all(s["replay"] for s in out["sources"])
    desk = session_desk_payload(timezone.now())
    assert {a["symbol"] for a in desk["assets"]} == {"PAXG", "XAUT"}
    assert all(a["listed"] and a["spread_bps"] is not None for a in desk["assets"])
