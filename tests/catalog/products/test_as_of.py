"""`as_of` is never after the answer: on candles whose newest bar is still open (the exchanges
feed rewrites the bar in progress every pass), the candle-based answers report when the data
was observed, not the open bar's close time (00:00 at 23:49). Each product is bought with
credits on the same market; those that read candles only report the observation time exactly."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.analytics.provenance import Provenance
from catalog.analytics.series import candle_as_of, ohlcv
from catalog.editorial.intel import intel_compute
from catalog.models import DeskSignal, IntelSnapshot
from catalog.products.digests.groups import move_24h
from tests.support.marketdata import open_bars_market_write, tokenized_market_write
from tests.support.wallets import funded_buyer
from webhooks.delegation.selectors import mark_price

pytestmark = pytest.mark.django_db


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def market() -> datetime:
    return open_bars_market_write("BTC/USDT", now=timezone.now())


def test_a_series_whose_newest_bar_is_open_is_as_of_its_observation(market):
    for timeframe in ("1h", "1m"):
        series = ohlcv("BTC/USDT", timeframe)
        assert series is not None
        assert series.times[-1] + (timedelta(hours=1) if timeframe == "1h" else timedelta(minutes=1)) > (
            timezone.now()
        )  # the newest bar closes later: it is open
        assert series.last_at == market <= timezone.now()
    # A closed bar is as of its close, however late it was observed.
    opened = market - timedelta(hours=3)
    assert candle_as_of(opened, "1h", market) == opened + timedelta(hours=1)
    assert candle_as_of(opened, "1h", None) == opened + timedelta(hours=1)


# (path, params, exact): exact = the answer reads candles only, so its as_of is the observation.
PRODUCTS = [
    ("/api/a2a/signals", {"symbol": "BTC/USDT"}, True),
    ("/api/a2a/x402/risk/regime-gate", {}, True),
    ("/api/a2a/x402/trading/grid-range-desk", {}, True),
    ("/api/a2a/x402/trading/broker-scalp-desk", {}, False),  # with the ticker's time
    ("/api/a2a/x402/risk/decision-pack", {"symbol": "BTC/USDT"}, False),  # tickers, calendar
]


@pytest.mark.parametrize("path,params,exact", PRODUCTS)
def test_candle_based_answers_are_as_of_the_observation_never_after_the_answer(api, market, path, params, exact):
    key, _ = funded_buyer(api)
    resp = api.get(path, params, HTTP_X_API_KEY=key)
    answered = timezone.now()
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert _at(body["as_of"]) <= answered
    for source in body["sources"]:
        assert source["as_of"] is None or _at(source["as_of"]) <= answered
    if exact:
        assert body["as_of"] == iso(market)
    assert body["stale"] is False


def test_the_signal_timeframes_say_when_their_newest_close_was_observed(api, market):
    key, _ = funded_buyer(api)
    signal = api.get("/api/a2a/signals", {"symbol": "BTC"}, HTTP_X_API_KEY=key).json()["signals"][0]
    assert [f["last_close_at"] for f in signal["timeframes"]] == [iso(market), iso(market)]


def test_the_intel_snapshot_copy_and_exit_prices_are_not_dated_in_the_future(api, market):
    run = intel_compute()
    snap = IntelSnapshot.objects.get(pk=run.intel_snapshot)
    assert snap.as_of == market
    now = timezone.now()
    DeskSignal.objects.create(
        desk="trend-momentum",
        symbol="BTC/USDT",
        side="long",
        venue="binance",
        timeframe="1h",
        entry_price=Decimal("99"),
        stop_price=Decimal("95"),
        target_price=Decimal("110"),
        opened_at=now - timedelta(hours=2),
        expires_at=now + timedelta(hours=20),
    )
    key, _ = funded_buyer(api)
    for path in ("/api/a2a/signals/copy-trade", "/api/a2a/x402/trading/risk-exit-alerts"):
        resp = api.get(path, HTTP_X_API_KEY=key)
        answered = timezone.now()
        assert resp.status_code == 200, (path, resp.content)
        body = resp.json()
        assert body["as_of"] and _at(body["as_of"]) <= answered, path
        for source in body["sources"]:
            assert source["as_of"] is None or _at(source["as_of"]) <= answered, path
    move = move_24h("BTC", {"BTC": "BTC/USDT"})
    assert move is not None and move["as_of"] == iso(market)


def test_tokenized_signals_and_delegation_marks_are_not_dated_in_the_future(api):
    now = timezone.now()
    tokenized_market_write(now=now)
    observed = open_bars_market_write("PAXG/USDT", now=now)
    key, _ = funded_buyer(api)
    resp = api.get("/api/a2a/tokenized/signals", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    paxg = next(s for s in resp.json()["signals"] if s["symbol"] == "PAXG")
    assert [f["last_close_at"] for f in paxg["timeframes"]] == [iso(observed), iso(observed)]
    assert _at(resp.json()["as_of"]) <= timezone.now()
    # A delegated position's mark: the newest of the venue's ticker and candles, never a close ahead.
    mark = mark_price("PAXG/USDT", "binance")
    assert mark is not None and mark.as_of <= timezone.now()


def test_provenance_never_dates_an_answer_after_it_is_given():
    """A source whose own clock runs ahead (a venue, a quote's time zone) is as of the answer."""
    now = timezone.now()
    prov = Provenance(method="m", max_age=timedelta(hours=1), now=now)
    prov.add(source="exchanges", replay=False, as_of=now + timedelta(minutes=49))
    out = prov.out()
    assert out["as_of"] == iso(now) and out["sources"][0]["as_of"] == iso(now)
