"""Federation: partner signal documents parsed (and their odd items skipped), ingested from the
partner URLs staff set (live and replay, idempotent, one failing partner isolated, all failing
fail the pass with nothing written), and resold with attribution, checked against our own
ingested prices, by credits — or 503 uncharged when no partner signal is fresh."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

import catalog.feeds.federation as federation
from billing.models import Account
from catalog.feeds.federation.parse import document_parse
from catalog.feeds.registry import FeedError, FeedPass
from catalog.feeds.runner import feed_run
from catalog.models import PartnerAgent, PartnerSignal, Sku
from catalog.services import catalog_seed
from tests.support.federation import doc, federation_data, sig
from tests.support.sample_server import Answer, SampleServer, sample_json
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

PATH = "/api/a2a/x402/federation/signal-resale"


@pytest.fixture
def partners(settings):
    server = SampleServer()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.5
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 3.0
    settings.FEEDS_REPLAY_URL = server.url
    a = PartnerAgent.objects.create(
        slug="alpha",
        name="Alpha desk",
        description="d",
        url="https://alpha.example/",
        signals_url=f"{server.url}/alpha",
    )
    b = PartnerAgent.objects.create(
        slug="beta",
        name="Beta desk",
        description="d",
        url="https://beta.example/",
        signals_url=f"{server.url}/beta",
    )
    yield server, a, b
    server.close()


def run_pass(*, replay: bool = False) -> FeedPass:
    feed_pass = FeedPass(source=federation.SOURCE, replay=replay)
    with transaction.atomic():
        federation.run(feed_pass)
    return feed_pass


def test_the_recorded_partner_document_parses_and_skips_what_it_cannot_use():
    rows, skipped = document_parse(sample_json("federation_partners", "sample-partner.json"))
    assert skipped == 1  # "sideways" is no side
    assert [(r.external_id, r.symbol, r.side) for r in rows] == [
        ("sp-101", "BTC/USDT", "long"),
        ("sp-102", "ETH/USDT", "short"),
        ("sp-103", "SOL/USDT", "long"),  # "buy", with the *_price spellings and opened_at
    ]
    sol = rows[2]
    assert (sol.entry_price, sol.stop_price, sol.target_price) == (
        Decimal("240.1"),
        Decimal("234.9"),
        Decimal("251.0"),
    )
    assert rows[0].confidence == 0.64 and rows[2].confidence is None
    with pytest.raises(FeedError):
        document_parse({"no": "signals"})


def test_a_pass_ingests_each_partner_idempotently(partners):
    server, alpha, beta = partners
    server.routes["/alpha"] = Answer(body=doc(sig("a1"), sig("a2", side="sell", entry=50.0)))
    server.routes["/beta"] = Answer(body=doc(sig("b1", symbol="eth/usdt")))
    run_pass()
    run_pass()  # the same documents again: nothing duplicated
    assert PartnerSignal.objects.count() == 3
    a2 = PartnerSignal.objects.get(partner=alpha, external_id="a2")
    assert (a2.side, a2.entry_price, a2.replay) == ("short", Decimal("50"), False)
    assert PartnerSignal.objects.get(partner=beta).symbol == "ETH/USDT"
    # A partner's revised signal is updated in place.
    server.routes["/alpha"] = Answer(body=doc(sig("a1", entry=101.0)))
    run_pass()
    assert PartnerSignal.objects.get(partner=alpha, external_id="a1").entry_price == Decimal("101")


def test_one_failing_partner_is_a_warning_and_all_failing_fail_the_pass_writing_nothing(partners):
    server, alpha, beta = partners
    server.routes["/alpha"] = Answer(body=doc(sig("a1")))
    server.routes["/beta"] = Answer(body=b"<html>not json</html>")
    feed_pass = run_pass()
    assert PartnerSignal.objects.count() == 1
    assert any(w.startswith("beta: ") and "malformed JSON" in w for w in feed_pass.warnings)
    PartnerSignal.objects.all().delete()
    server.routes["/alpha"] = Answer(status=500, body=b"{}")
    state = feed_run(name=federation.SOURCE, mode="live", force=True)
    assert state.outcome == "failed" and "every partner failed" in state.last_error
    assert PartnerSignal.objects.count() == 0


def test_replay_serves_each_partner_its_sample_moved_to_now(partners):
    server, alpha, beta = partners
    beta.delete()
    alpha.slug = "sample-partner"
    alpha.save()
    run_pass(replay=True)
    rows = list(PartnerSignal.objects.order_by("published_at"))
    assert len(rows) == 3 and all(r.replay for r in rows)
    # The newest recorded signal lands on the pass's start; the spacing is kept (09:00 → 11:15).
    assert timezone.now() - rows[-1].published_at < timedelta(minutes=2)
    assert rows[-1].published_at - rows[0].published_at == timedelta(hours=2, minutes=15)


@pytest.fixture
def buyer(api):
    catalog_seed()
    return funded_buyer(api, 5_000_000)


def test_resale_attributes_and_checks_each_signal_against_our_prices(api, buyer):
    key, account = buyer
    federation_data()
    price = Sku.objects.get(sku="federation_signal_resale").price_atomic
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(PATH, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == before - price
    assert body["count"] == 2 and body["partners"] == 1 and body["max_age_hours"] == 24.0
    btc, eth = body["signals"]
    # BTC: market = mean of 102 and 104 = 103, a long from 100 is +3 %, still open.
    assert (btc["market_price"], btc["market_venues"], btc["move_from_entry_pct"], btc["status"]) == (
        103.0,
        2,
        3.0,
        "open",
    )
    assert btc["attribution"] == {
        "partner": "alpha",
        "name": "Alpha desk",
        "url": "https://alpha.example/",
        "agent_card_url": None,
        "signal_id": "a1",
    }
    # ETH: a short from 50 with the market at 52.5 is -5 % and past its stop at 52.
    assert (eth["move_from_entry_pct"], eth["status"]) == (-5.0, "stop_touched")
    assert body["replay"] is False and body["stale"] is False
    assert {(s["name"], s["venue"]) for s in body["sources"]} == {
        ("federation", "alpha"),
        ("exchanges", "binance"),
        ("exchanges", "okx"),
    }
    only_eth = api.get(PATH, {"symbol": "eth/usdt"}, HTTP_X_API_KEY=key).json()
    assert [s["symbol"] for s in only_eth["signals"]] == ["ETH/USDT"]


def test_no_fresh_partner_signal_is_503_and_nothing_is_charged(api, buyer):
    key, account = buyer
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(PATH, HTTP_X_API_KEY=key)
    assert resp.status_code == 503
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == before
    bad = api.get(PATH, {"limit": "0"}, HTTP_X_API_KEY=key)
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "limit"]
