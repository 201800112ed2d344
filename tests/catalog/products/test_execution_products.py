"""The execution products on generated markets with known numbers: the spread radar and the
pair-arb desk (a 60 bps gap with 10 bps taker fees is 40 bps net, and pushes one alert), the
funding desk's ranking, TWAP slices that add up exactly, book walking, best execution split
across venues, DCA routing, tokenized routing, the yield scout's filters and ranking, the
market-making hint; bought with credits, and 503 uncharged without fresh books."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.analytics.execution.books import book_walk, cost_bps
from catalog.analytics.execution.funding import funding_annualized_pct
from catalog.analytics.execution.gaps import arb_size
from catalog.analytics.execution.slicing import slices_atomic
from catalog.analytics.indicators import snapshot
from catalog.analytics.series import ohlcv
from catalog.feeds.exchanges import store
from catalog.models import ExchangeMarket, OrderBook, SpreadSnapshot, TokenizedAsset
from tests.support.marketdata import (
    band,
    book_write,
    candles_write,
    funding_reading_write,
    ladder,
    rising,
    yield_pool_write,
)
from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import register_wallet
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


@pytest.fixture
def key():
    """A credit account with 20 USDC (the registration: api_key, account)."""
    reg = register_wallet()
    credit_add(
        account_id=reg.account.id, amount_atomic=20_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    return reg


def buy(api, reg, path: str, **params):
    """A paid call with credits; returns the answer and what it cost (atomic USDC)."""
    before = Account.objects.get(pk=reg.account.pk).credit_balance_atomic
    resp = api.get(path, params, HTTP_X_API_KEY=reg.api_key)
    return resp, before - Account.objects.get(pk=reg.account.pk).credit_balance_atomic


@pytest.fixture
def fees_10bps(settings):
    settings.EXCHANGE_TAKER_FEES = {"binance": 0.001, "okx": 0.001, "bybit": 0.001}
    settings.EXCHANGE_MAKER_FEES = {"binance": 0.0002, "okx": 0.0002, "bybit": 0.0002}


def gap_market():
    """ETH/USDT 60 bps dearer on okx than on binance (buy binance's ask 100.00, sell okx's bid
    100.60), five levels of 10 ETH a side, 1 bps apart."""
    book_write(
        exchange="binance",
        symbol="ETH/USDT",
        bids=ladder(99.99, side="bid", levels=5, size=10),
        asks=ladder(100.00, side="ask", levels=5, size=10),
    )
    book_write(
        exchange="okx",
        symbol="ETH/USDT",
        bids=ladder(100.60, side="bid", levels=5, size=10),
        asks=ladder(100.61, side="ask", levels=5, size=10),
    )


# --- the maths on known books -----------------------------------------------------------------


def test_walking_a_known_book():
    asks = [(100.0, 1.0), (101.0, 2.0), (102.0, 5.0)]
    fill = book_walk(asks, side="buy", notional=302.0)
    # 100 from the first level (1 unit), 202 from the second (2 units): 3 units for 302.
    assert fill.filled_base == pytest.approx(3.0) and fill.avg_price == pytest.approx(302 / 3)
    assert fill.slippage_bps == pytest.approx((302 / 3 - 100) / 100 * 10_000)
    assert (fill.levels_used, fill.unfilled_quote, fill.complete, fill.worst_price) == (2, 0.0, True, 101.0)
    # More than the book holds: every level, and the remainder reported.
    fill = book_walk(asks, side="buy", notional=1000.0)
    assert fill.filled_quote == pytest.approx(100 + 202 + 510) and fill.unfilled_quote == pytest.approx(188)
    assert fill.levels_used == 3 and not fill.complete
    # A sell walks the bids down; its slippage is counted as a cost too.
    bids = [(99.0, 1.0), (98.0, 10.0)]
    fill = book_walk(bids, side="sell", notional=197.0)
    assert fill.filled_base == pytest.approx(2.0) and fill.slippage_bps == pytest.approx(
        (99 - 98.5) / 99 * 10_000
    )
    assert cost_bps(fill, reference=100.0, fee=0.001) == pytest.approx((100 - 98.5 * 0.999) / 100 * 10_000)


def test_an_arbitrage_is_sized_while_the_next_unit_earns_after_fees():
    asks = [(100.0, 1.0), (100.2, 1.0)]
    bids = [(100.6, 1.5), (100.1, 5.0)]
    size = arb_size(asks, bids, buy_fee=0.001, sell_fee=0.001)
    # 1 at 100.0 and 0.5 at 100.2 sold at 100.6; the next unit (100.2 -> 100.1) loses.
    assert size.base == pytest.approx(1.5)
    assert size.buy_quote == pytest.approx(100.0 + 50.1) and size.sell_quote == pytest.approx(150.9)
    assert size.profit_quote == pytest.approx(150.9 * 0.999 - 150.1 * 1.001)
    assert (size.buy_levels, size.sell_levels) == (2, 1)


def test_atomic_slices_add_up_exactly():
    for total, n in ((10_000_000_000, 6), (10_000_010_000, 7), (1, 3), (999_999_999, 200)):
        parts = slices_atomic(total, n)
        assert sum(parts) == total and len(parts) == n and max(parts) - min(parts) <= 1


def test_annualized_funding():
    assert funding_annualized_pct(0.0001, 8) == pytest.approx(10.95)
    assert funding_annualized_pct(-0.0002, 4) == pytest.approx(-43.8)


# --- spreads and the pair-arb desk ------------------------------------------------------------


def test_a_60_bps_gap_with_10_bps_fees_is_40_bps_net_in_the_radar_and_the_desk(api, key, fees_10bps):
    gap_market()
    resp, charged = buy(api, key, "/api/a2a/exchange-spreads")
    assert resp.status_code == 200, resp.content
    assert charged == 50_000 and "Deprecation" not in resp
    body = resp.json()
    row = body["spreads"][0]
    assert row["symbol"] == "ETH/USDT" and row["venues"] == 2
    assert (row["buy"]["venue"], row["buy"]["price"], row["buy"]["size"]) == ("binance", 100.0, 10.0)
    assert (row["sell"]["venue"], row["sell"]["price"]) == ("okx", 100.6)
    assert (row["gross_bps"], row["net_bps"]) == (60.0, 40.0)
    assert row["buy"]["taker_fee_bps"] == row["sell"]["taker_fee_bps"] == 10.0
    assert row["crossed"] and row["actionable"]
    assert {f["venue"]: (f["taker_bps"], f["source"]) for f in body["fees"]} == {
        "binance": (10.0, "setting"),
        "okx": (10.0, "setting"),
    }
    assert body["replay"] is False and body["stale"] is False and body["as_of"]
    assert {s["venue"] for s in body["sources"]} == {"binance", "okx"}

    resp, charged = buy(api, key, "/api/a2a/x402/trading/pair-arb-desk")
    assert resp.status_code == 200 and charged == 150_000
    desk = resp.json()
    arb = desk["cross_venue"][0]
    assert (arb["symbol"], arb["buy_venue"], arb["sell_venue"]) == ("ETH/USDT", "binance", "okx")
    assert (arb["gross_bps"], arb["net_bps"], arb["actionable"]) == (60.0, 40.0, True)
    assert desk["opportunities"] == 1
    # Sized by depth: every level of both books still earns after fees (the worst ask, 100.04
    # plus 10 bps, is below the worst bid, 100.5598 minus 10 bps): 50 ETH.
    asks = ladder(100.00, side="ask", levels=5, size=10)
    bids = ladder(100.60, side="bid", levels=5, size=10)
    spent, got = sum(p * s for p, s in asks), sum(p * s for p, s in bids)
    assert arb["sized_by"] == "depth" and arb["size_base"] == 50.0
    assert (arb["buy_levels"], arb["sell_levels"]) == (5, 5)
    assert arb["size_quote"] == pytest.approx(spent, abs=0.01)
    assert arb["expected_profit_quote"] == pytest.approx(got * 0.999 - spent * 1.001, abs=0.01)


def test_crossing_the_threshold_pushes_exactly_one_alert(api, receiver, queued, fees_10bps, settings):
    settings.PAIR_ARB_ALERT_BPS = 25.0
    subscribe(api, receiver, events=("pair_arb_alert",))

    def feed_pass(okx_bid: float) -> None:
        """A pass of the feed: both tops rewritten, then its spreads recorded."""
        seen_at = timezone.now()
        book_write(exchange="binance", symbol="ETH/USDT", bids=[(99.99, 10)], asks=[(100.0, 10)], at=seen_at)
        book_write(
            exchange="okx", symbol="ETH/USDT", bids=[(okx_bid, 10)], asks=[(okx_bid + 0.01, 10)], at=seen_at
        )
        store.spreads_record(replay=False, seen_at=seen_at)

    feed_pass(100.10)  # 10 bps gross, -10 net: under the threshold
    feed_pass(100.60)  # 60 gross, 40 net: crosses
    feed_pass(100.60)  # stays over it: no second alert
    feed_pass(100.55)  # 55 gross, 35 net: still over
    alerts = WebhookDelivery.objects.filter(event__kind="pair_arb_alert")
    assert alerts.count() == 1
    delivered = run_until_settled(alerts.get())
    assert delivered.state == "delivered"
    payload = receiver.received[-1]["payload"]["data"]
    assert receiver.received[-1]["verified"]
    assert (payload["symbol"], payload["venue_a"], payload["venue_b"]) == ("ETH/USDT", "binance", "okx")
    assert (payload["spread_bps"], payload["net_bps"]) == (60.0, 40.0)
    readings = list(SpreadSnapshot.objects.order_by("captured_at").values_list("spread_bps", "net_bps"))
    assert readings == [
        (Decimal("10.000"), Decimal("-10.000")),
        (Decimal("60.000"), Decimal("40.000")),
        (Decimal("60.000"), Decimal("40.000")),
        (Decimal("55.000"), Decimal("35.000")),
    ]
    feed_pass(100.20)  # closes (0 net) ...
    feed_pass(100.70)  # ... and reopens: a new crossing
    assert alerts.count() == 2


def test_ingested_readings_alert_when_their_pair_crosses(api, receiver, queued, settings):
    settings.INGEST_TOKEN = "tok"
    settings.PAIR_ARB_ALERT_BPS = 25.0
    subscribe(api, receiver, events=("pair_arb_alert",))

    def push(*readings):
        resp = api.post(
            "/api/a2a/internal/spread-snapshot",
            {
                "readings": [
                    {"symbol": s, "venue_a": a, "venue_b": b, "spread_bps": v} for s, a, b, v in readings
                ]
            },
            format="json",
            HTTP_X_INGEST_TOKEN="tok",
        )
        assert resp.status_code == 201

    push(("BTC/USDT", "a", "b", 30.0), ("BTC/USDT", "c", "d", 10.0))
    push(("BTC/USDT", "b", "a", -32.0), ("BTC/USDT", "c", "d", 26.0))  # a/b stays over; c/d crosses
    kinds = list(
        WebhookDelivery.objects.filter(event__kind="pair_arb_alert")
        .order_by("pk")
        .values_list("event__payload", flat=True)
    )
    assert [(p["venue_a"], p["venue_b"], p["spread_bps"]) for p in kinds] == [
        ("a", "b", 30.0),
        ("c", "d", 26.0),
    ]
    assert SpreadSnapshot.objects.filter(source="ingest").count() == 4


def test_the_deprecated_snapshot_route_answers_with_its_successor(api, key, fees_10bps, settings):
    gap_market()
    store.spreads_record(replay=False, seen_at=ExchangeMarket.objects.first().updated_at)
    settings.INGEST_TOKEN = "tok"
    api.post(
        "/api/a2a/internal/spread-snapshot",
        {"readings": [{"symbol": "SOL/USDT", "venue_a": "x", "venue_b": "y", "spread_bps": 12.5}]},
        format="json",
        HTTP_X_INGEST_TOKEN="tok",
    )
    resp, charged = buy(api, key, "/api/a2a/spread-snapshot")
    assert resp.status_code == 200 and charged == 50_000
    assert resp["Deprecation"] == "true"
    assert resp["Link"] == '<http://testserver/api/a2a/exchange-spreads>; rel="successor-version"'
    snap = {(r["symbol"], r["source"]): r for r in resp.json()["snapshot"]}
    assert snap[("ETH/USDT", "exchanges")]["net_bps"] == 40.0
    assert (
        snap[("SOL/USDT", "ingest")]["spread_bps"] == 12.5 and snap[("SOL/USDT", "ingest")]["net_bps"] is None
    )
    # Refused calls say it too.
    assert api.get("/api/a2a/spread-snapshot")["Deprecation"] == "true"
    schema = api.get("/api/a2a/openapi.json").json()
    assert schema["paths"]["/api/a2a/spread-snapshot"]["get"]["deprecated"] is True
    # The credit fast path (in front of Django) would drop the headers: it serves the successor only.
    from billing.api.credit_fastpath import fast_routes

    routes = fast_routes()
    assert "/api/a2a/exchange-spreads" in routes and "/api/a2a/spread-snapshot" not in routes


def test_no_fresh_books_is_503_and_uncharged(api, key, fees_10bps):
    gap_market()
    old = timezone.now() - timedelta(minutes=10)
    ExchangeMarket.objects.update(updated_at=old)
    OrderBook.objects.update(observed_at=old, book_at=old)
    for path in (
        "/api/a2a/exchange-spreads",
        "/api/a2a/x402/trading/pair-arb-desk",
        "/api/a2a/twap/preview?symbol=ETH/USDT",
        "/api/a2a/x402/trading/intent-solver?symbol=ETH/USDT",
        "/api/a2a/x402/trading/dca-routing-desk?symbol=ETH/USDT",
        "/api/a2a/mm/hint",
    ):
        resp, charged = buy(api, key, path)
        assert resp.status_code == 503, (path, resp.content)
        assert charged == 0 and resp.json()["charged"] is False, path


def test_correlated_pairs_show_a_dislocation_as_a_z_score(api, key, fees_10bps):
    gap_market()
    bars = 200
    base = band(100.0, 0.03, 19.0)
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)  # bars open on the hour, as a venue's
    dislocated = lambda i: base(i) * (1.03 if i == bars - 1 else 1.0)  # noqa: E731 - the last close 3 % up
    candles_write(symbol="AAA/USDT", shape=dislocated, bars=bars, seed=1, end=hour)
    candles_write(symbol="BBB/USDT", shape=base, bars=bars, seed=2, end=hour)
    candles_write(symbol="CCC/USDT", shape=rising(50.0, 0.001), bars=bars, seed=3, noise=0.01, end=hour)
    resp, _ = buy(api, key, "/api/a2a/x402/trading/pair-arb-desk")
    pairs = resp.json()["correlated_pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == [("AAA/USDT", "BBB/USDT")]  # CCC correlates with neither
    pair = pairs[0]
    assert pair["correlation"] >= 0.8 and pair["bars"] == 168 and pair["beta"] == pytest.approx(1.0, abs=0.1)
    assert pair["zscore"] > 2 and pair["signal"] == "short_a_long_b"
    assert {s["venue"] for s in resp.json()["sources"]} >= {"binance", "okx"}


# --- funding ------------------------------------------------------------------------------------


def test_the_largest_funding_differential_leads(api, key, fees_10bps):
    book_write(exchange="binance", symbol="BTC/USDT", bids=[(99.9, 5)], asks=[(100.1, 5)])
    funding_reading_write(exchange="binance", symbol="BTC/USDT:USDT", rate=0.0001, mark=100.5)
    funding_reading_write(exchange="okx", symbol="BTC/USDT:USDT", rate=0.0003)
    funding_reading_write(exchange="bybit", symbol="BTC/USDT:USDT", rate=-0.0001)
    funding_reading_write(exchange="binance", symbol="ETH/USDT:USDT", rate=0.0002)
    funding_reading_write(exchange="okx", symbol="ETH/USDT:USDT", rate=0.00015, hours=4)
    resp, charged = buy(api, key, "/api/a2a/x402/trading/funding-hedge-desk")
    assert resp.status_code == 200 and charged == 150_000
    body = resp.json()
    lead = body["cross_venue"][0]
    # Short okx's perp (+0.03 % / 8 h = 32.85 %/yr), long bybit's (-10.95 %/yr): 43.8 %/yr.
    assert (lead["base"], lead["short_venue"], lead["long_venue"]) == ("BTC", "okx", "bybit")
    assert (lead["short_annualized_pct"], lead["long_annualized_pct"]) == (32.85, -10.95)
    assert lead["differential_annualized_pct"] == 43.8
    assert lead["round_trip_fee_bps"] == 40.0  # open and close both perps at 10 bps
    assert lead["breakeven_days"] == pytest.approx(40 / (43.8 * 100 / 365), abs=0.01)
    diffs = [c["differential_annualized_pct"] for c in body["cross_venue"]]
    assert diffs == sorted(diffs, reverse=True) and len(diffs) == 4
    # okx's ETH funds every 4 h: 0.015 % x 6 x 365 = 32.85 %/yr.
    carry = {(c["venue"], c["perp"]): c for c in body["cash_and_carry"]}
    eth = carry[("okx", "ETH/USDT:USDT")]
    assert (eth["period_hours"], eth["annualized_pct"]) == (4.0, 32.85)
    btc = carry[("binance", "BTC/USDT:USDT")]
    assert (btc["spot"], btc["basis_bps"], btc["legs"]) == ("BTC/USDT", 50.0, "long spot, short perp")
    assert carry[("bybit", "BTC/USDT:USDT")]["legs"] == "short spot, long perp"
    assert carry[("bybit", "BTC/USDT:USDT")]["spot"] is None
    assert abs(body["cash_and_carry"][0]["annualized_pct"]) == 32.85


# --- TWAP and the market-making hint ------------------------------------------------------------


def test_twap_slices_sum_to_the_notional_exactly(api, key, fees_10bps):
    # One deep level a side: every slice costs the half spread plus the fee.
    book_write(
        exchange="binance",
        symbol="BTC/USDT",
        bids=[(99.95, 100.0)],
        asks=[(100.05, 100.0)],
        volume_24h_usd=14_400_000.0,  # 10,000 a minute
    )
    resp, charged = buy(
        api, key, "/api/a2a/twap/preview", symbol="btc/usdt", notional_usdc="10000.01", slices="7"
    )
    assert resp.status_code == 200, resp.content
    assert charged == 30_000
    body = resp.json()
    schedule = body["schedule"]
    assert len(schedule) == 7 and body["slices"] == 7
    assert sum(s["amount_atomic"] for s in schedule) == 10_000_010_000
    assert sum(Decimal(s["amount_usdc"]) for s in schedule) == Decimal("10000.01")
    assert [s["amount_atomic"] for s in schedule] == [1_428_572_858] + [1_428_572_857] * 6
    # A 1,428.57 slice is 10 % of the volume of 1.43 minutes: slices 2 minutes apart.
    assert body["interval_minutes"] == 2
    times = [s["at"] for s in schedule]
    assert times == sorted(times)
    assert schedule[0]["participation_pct"] == pytest.approx(1428.572858 / 20_000 * 100, abs=1e-4)
    assert body["participation_24h_pct"] == pytest.approx(10000.01 / 14_400_000 * 100, abs=1e-6)
    assert body["est_cost_bps_buy"] == pytest.approx((100.05 * 1.001 - 100) / 100 * 10_000, abs=1e-3)
    assert body["est_cost_bps_sell"] == pytest.approx((100 - 99.95 * 0.999) / 100 * 10_000, abs=1e-3)
    assert (body["venue"], body["symbol"], body["levels_used"]) == ("binance", "BTC/USDT", 1)
    assert schedule[0]["est_base_qty"] == pytest.approx(1428.572858 / 100.05, abs=1e-6)
    # The interface's defaults; bad input is 422, an unknown market 404, both uncharged.
    resp, _ = buy(api, key, "/api/a2a/twap/preview")
    assert resp.json()["slices"] == 6 and resp.json()["notional_usdc"] == 10000
    resp, charged = buy(api, key, "/api/a2a/twap/preview", slices="0")
    assert resp.status_code == 422 and charged == 0 and resp.json()["detail"][0]["loc"] == ["query", "slices"]
    resp, charged = buy(api, key, "/api/a2a/twap/preview", symbol="NOPE/USDT")
    assert resp.status_code == 404 and charged == 0


def test_the_market_making_hint_quotes_from_volatility_and_fees(api, key, fees_10bps):
    book_write(
        exchange="binance",
        symbol="BTC/USDT",
        bids=ladder(99.99, side="bid", levels=20, size=5),
        asks=ladder(100.01, side="ask", levels=20, size=5),
    )
    candles_write(symbol="BTC/USDT", timeframe="1m", bars=120, shape=band(100.0, 0.002, 15.0))
    series = ohlcv("BTC/USDT", "1m", exchange="binance", limit=120)
    atr_bps = snapshot(series).atr / series.last * 10_000
    quotes = {}
    for bias in ("neutral", "long", "short"):
        resp, charged = buy(api, key, "/api/a2a/mm/hint", bias=bias)
        assert resp.status_code == 200 and charged == 30_000
        quotes[bias] = resp.json()["quotes"][0]
    q = quotes["neutral"]
    assert q["symbol"] == "BTC/USDT" and q["maker_fee_bps"] == 2.0
    assert q["atr_bps"] == pytest.approx(atr_bps, abs=1e-3)
    # A round trip pays the maker fee twice; the quote must outlast a minute's typical move.
    assert q["quote_spread_bps"] == pytest.approx(max(4.0 + atr_bps, 2.0), abs=1e-3)
    assert q["skew_bps"] == 0 and q["ask"] - q["mid"] == pytest.approx(q["mid"] - q["bid"], rel=1e-6)
    assert q["hourly_move_bps"] == pytest.approx(atr_bps * math.sqrt(60), abs=1e-2)
    floor = 100.0 * (1 - q["hourly_move_bps"] / 10_000)
    depth = sum(p * s for p, s in ladder(99.99, side="bid", levels=20, size=5) if p >= floor)
    assert q["max_inventory_quote"] == pytest.approx(depth, abs=0.01)
    long, short = quotes["long"], quotes["short"]
    assert long["skew_bps"] == pytest.approx(0.25 * q["quote_spread_bps"], abs=1e-3) == -short["skew_bps"]
    assert long["bid"] > q["bid"] and long["ask"] > q["ask"] and long["target_base_share"] == 0.65
    assert short["bid"] < q["bid"] and short["ask"] < q["ask"] and short["target_base_share"] == 0.35
    resp, charged = buy(api, key, "/api/a2a/mm/hint", bias="sideways")
    assert resp.status_code == 422 and charged == 0


# --- best execution --------------------------------------------------------------------------


def test_the_intent_solver_splits_when_cheaper(api, key, fees_10bps):
    book_write(exchange="binance", symbol="SOL/USDT", bids=[(99.9, 10)], asks=[(100.0, 1), (101.0, 10)])
    book_write(exchange="okx", symbol="SOL/USDT", bids=[(99.8, 10)], asks=[(100.2, 1), (101.5, 10)])
    resp, charged = buy(
        api, key, "/api/a2a/x402/trading/intent-solver", symbol="SOL/USDT", side="buy", notional_usdc="300"
    )
    assert resp.status_code == 200 and charged == 250_000
    body = resp.json()
    # binance's 100.0 (after fee 100.1), okx's 100.2 (100.3), then binance's 101.0 (101.1).
    legs = {leg["venue"]: leg for leg in body["legs"]}
    assert body["split"] and set(legs) == {"binance", "okx"}
    assert legs["binance"]["notional_quote"] == 199.8 and legs["okx"]["notional_quote"] == 100.2
    base = 1 + 1 + 99.8 / 101.0
    assert body["filled_base"] == pytest.approx(base, abs=1e-8) and body["unfilled_quote"] == 0
    assert body["reference_mid"] == (99.9 + 100.0) / 2
    cost = ((300 * 1.001) / base - 99.95) / 99.95 * 10_000
    assert body["cost_bps"] == pytest.approx(cost, abs=1e-3)
    single = ((300 * 1.001) / (1 + 200 / 101.0) - 99.95) / 99.95 * 10_000  # all at binance
    assert body["best_single_venue"]["venue"] == "binance"
    assert body["split_saves_bps"] == pytest.approx(single - cost, abs=2e-3) and body["split_saves_bps"] > 0
    # A sell walks the bids: binance's 99.9 first.
    resp, _ = buy(
        api, key, "/api/a2a/x402/trading/intent-solver", symbol="SOL/USDT", side="sell", notional_usdc="500"
    )
    body = resp.json()
    assert [leg["venue"] for leg in body["legs"]] == ["binance"] and not body["split"]
    assert body["all_in_avg_price"] == pytest.approx(99.9 * 0.999)


def test_dca_routes_to_the_cheapest_venue_after_fees(api, key, settings):
    settings.EXCHANGE_TAKER_FEES = {"binance": 0.001, "okx": 0.0001}
    book_write(
        exchange="binance",
        symbol="BTC/USDT",
        bids=ladder(99.98, side="bid"),
        asks=ladder(100.0, side="ask", size=100),
    )
    book_write(
        exchange="okx",
        symbol="BTC/USDT",
        bids=ladder(100.03, side="bid"),
        asks=ladder(100.05, side="ask", size=100),
    )
    resp, charged = buy(
        api,
        key,
        "/api/a2a/x402/trading/dca-routing-desk",
        symbol="BTC/USDT",
        notional_usdc="700.000003",
        days="7",
        interval_hours="24",
    )
    assert resp.status_code == 200 and charged == 120_000
    body = resp.json()
    assert body["buys"] == 7 and len(body["schedule"]) == 7
    assert sum(b["amount_atomic"] for b in body["schedule"]) == 700_000_003
    assert [b["amount_atomic"] for b in body["schedule"]][:4] == [100_000_001] * 3 + [100_000_000]
    cmid = (100.03 + 100.0) / 2
    costs = {v["venue"]: v["all_in_cost_bps"] for v in body["venues"]}
    # binance is cheaper on price, okx after its fee: 100.05 x 1.0001 < 100.00 x 1.001.
    assert costs["binance"] == pytest.approx((100.0 * 1.001 - cmid) / cmid * 10_000, abs=1e-3)
    assert costs["okx"] == pytest.approx((100.05 * 1.0001 - cmid) / cmid * 10_000, abs=1e-3)
    assert body["recommended_venue"] == "okx" and body["venues"][0]["venue"] == "okx"
    assert body["est_total_cost_usdc"] == pytest.approx(700.000003 * costs["okx"] / 10_000, abs=1e-4)
    resp, charged = buy(api, key, "/api/a2a/x402/trading/dca-routing-desk", days="365", interval_hours="1")
    assert resp.status_code == 422 and charged == 0


def test_tokenized_auto_route_is_advice_for_manual_routing(api, key, fees_10bps):
    TokenizedAsset.objects.create(symbol="PAXG", name="PAX Gold", venue="binance", underlying="XAU")
    book_write(exchange="binance", symbol="PAXG/USDT", bids=[(2649.0, 5)], asks=[(2651.0, 5)])
    book_write(exchange="okx", symbol="PAXG/USDT", bids=[(2648.0, 5)], asks=[(2650.0, 1), (2660.0, 5)])
    resp, charged = buy(api, key, "/api/a2a/x402/tokenized/auto-route", symbol="paxg", notional_usdc="5301")
    assert resp.status_code == 200 and charged == 200_000
    body = resp.json()
    assert body["manual_routing_only"] is True and "manual routing only" in body["notice"]
    route = body["routes"][0]
    assert (route["asset"], route["underlying"], route["listings"]) == ("PAXG", "XAU", 2)
    # okx's one unit at 2650 first, then binance's 2651 for the rest.
    assert {leg["venue"]: leg["notional_quote"] for leg in route["legs"]} == {
        "okx": 2650.0,
        "binance": 2651.0,
    }
    assert route["split"]
    resp, charged = buy(api, key, "/api/a2a/x402/tokenized/auto-route", symbol="NOPE")
    assert resp.status_code == 404 and charged == 0


# --- DeFi ----------------------------------------------------------------------------------------


def test_the_yield_scout_filters_and_ranks(api, key):
    yield_pool_write(pool_id="a")  # stable 5 % base
    yield_pool_write(
        pool_id="b",
        symbol="USDC-USDT",
        project="curve",
        tvl_usd=20e6,
        apy=12.0,
        apy_base=2.0,
        apy_reward=10.0,
        apy_mean_30d=6.0,
    )
    yield_pool_write(
        pool_id="c",
        symbol="WETH-USDC",
        project="uniswap-v3",
        tvl_usd=100e6,
        apy=20.0,
        apy_base=20.0,
        apy_mean_30d=20.0,
        stablecoin=False,
        il_risk="yes",
        exposure="multi",
    )
    yield_pool_write(pool_id="d", tvl_usd=30e6, apy=40.0, apy_base=40.0, apy_mean_30d=10.0, outlier=True)
    yield_pool_write(pool_id="e", tvl_usd=500_000, apy=9.0, apy_base=9.0, apy_mean_30d=9.0)
    yield_pool_write(pool_id="f", chain="Arbitrum", tvl_usd=10e6, apy=8.0, apy_base=8.0, apy_mean_30d=8.0)
    resp, charged = buy(api, key, "/api/a2a/x402/defi/yield-scout", chain="ethereum", stablecoin="true")
    assert resp.status_code == 200 and charged == 100_000
    body = resp.json()
    pools = body["pools"]
    # b: min(2 + 10/2, 30-day mean 6) = 6; a: 5; d: min(40, 10) x 0.5 (outlier) = 5, less TVL.
    assert [(p["pool_id"], p["rank"], p["risk_adjusted_apy"]) for p in pools] == [
        ("b", 1, 6.0),
        ("a", 2, 5.0),
        ("d", 3, 5.0),
    ]
    b, a, d = pools
    assert b["reward_share"] == pytest.approx(10 / 12, abs=1e-4) and b["apy_vs_30d_mean"] == 2.0
    assert b["flags"] == ["reward_heavy", "above_30d_mean"] and not b["sustainable"]
    assert a["flags"] == [] and a["sustainable"]
    assert d["flags"] == ["above_30d_mean", "outlier"] and not d["sustainable"]
    assert body["matched"] == 3 and body["stablecoin_only"] and body["chain"] == "ethereum"
    assert "30-day mean" in body["method"] and body["sources"][0]["name"] == "defillama"
    # No filters: c's 20 % x 0.7 (impermanent loss) = 14 leads; e is under the 1 M TVL floor.
    resp, _ = buy(api, key, "/api/a2a/x402/defi/yield-scout")
    ranked = [(p["pool_id"], p["risk_adjusted_apy"]) for p in resp.json()["pools"]]
    assert ranked == [("c", 14.0), ("f", 8.0), ("b", 6.0), ("a", 5.0), ("d", 5.0)]
    assert resp.json()["pools"][0]["il_risk"] is True
    resp, _ = buy(api, key, "/api/a2a/x402/defi/yield-scout", min_tvl_usd="0", limit="1")
    assert resp.json()["matched"] == 6 and len(resp.json()["pools"]) == 1
    resp, charged = buy(api, key, "/api/a2a/x402/defi/yield-scout", min_tvl_usd="-1")
    assert resp.status_code == 422 and charged == 0


def test_stale_yields_are_503_and_uncharged(api, key):
    yield_pool_write(pool_id="old", observed_at=timezone.now() - timedelta(hours=4))
    resp, charged = buy(api, key, "/api/a2a/x402/defi/yield-scout")
    assert resp.status_code == 503 and charged == 0
