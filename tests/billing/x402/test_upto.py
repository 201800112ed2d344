"""Metered calls paid with `upto` (issue 26, item 2): the SDK's unmodified upto client authorizes
the product's price as a maximum (Permit2, through x402UptoPermit2Proxy, bound to our
facilitator), the service runs the product and settles what it used, on anvil and PostgreSQL.

The metered product is the tech regulatory digest (ProductSpec.metered: a share of its price
per item delivered of `limit`); some tests swap its meter to say 0, or more than authorized."""

from __future__ import annotations

import dataclasses
import math

import pytest
import requests
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.constants import ERR_UNSUPPORTED_SCHEME, ERR_UPTO_SETTLEMENT_EXCEEDS_AMOUNT

from billing.chain.localchain import FACILITATOR, dev_account
from billing.credits import ledger_audit
from billing.facilitator.service import hosted_settle
from billing.models import Payment
from billing.selectors.sales import sales_by_sku
from billing.x402.proof import PROOF_ALREADY_USED
from catalog.models import Sku
from catalog.products import registry
from tests.support.marketdata import digests_market_write
from tests.support.upto import UptoPayer, required_of, upto_payer

DIGEST = "/api/a2a/x402/intel/tech-regulatory-digest"
SKU = "tech_regulatory_digest"
LIMIT = 10


@pytest.fixture
def metered(paid_stack) -> str:
    """The digest's URL with news to deliver (fewer items than `limit`)."""
    digests_market_write()
    return f"{paid_stack.url}{DIGEST}?limit={LIMIT}"


@pytest.fixture
def payer(paid_stack) -> UptoPayer:
    return upto_payer(paid_stack.chain)


def meter_swap(monkeypatch, meter) -> None:
    spec = registry.product_get(SKU)
    assert spec is not None and spec.metered is not None
    monkeypatch.setitem(registry._SPECS, SKU, dataclasses.replace(spec, metered=meter))


def test_a_metered_402_offers_upto_next_to_exact_and_a_plain_one_does_not(paid_stack, metered, brief, payer):
    required = required_of(requests.get(metered, timeout=30))
    exact, upto = required.accepts
    price = Sku.objects.get(sku=SKU).price_atomic
    assert (exact.scheme, exact.amount) == ("exact", str(price))
    assert (upto.scheme, upto.amount, upto.pay_to, upto.asset) == ("upto", str(price), exact.pay_to, exact.asset)
    assert upto.extra == {
        "name": "USD Coin",
        "version": "2",
        "assetTransferMethod": "permit2",
        "facilitatorAddress": dev_account(FACILITATOR).address,
    }
    supported = requests.get(paid_stack.url + "/api/a2a/facilitator/supported", timeout=30).json()
    [kind] = [k for k in supported["kinds"] if k["scheme"] == "upto"]
    assert kind["extra"] == {"facilitatorAddress": dev_account(FACILITATOR).address}
    brief_url = paid_stack.url + "/api/a2a/x402/morning-brief"
    plain = required_of(requests.get(brief_url, timeout=30))
    assert [a.scheme for a in plain.accepts] == ["exact"]
    # An upto proof for a product that is not metered is refused, and nothing is claimed.
    refused = requests.get(brief_url, headers=payer.header(payer.authorize(required)), timeout=30)
    assert required_of(refused).error == ERR_UNSUPPORTED_SCHEME and not Payment.objects.exists()


def test_an_upto_call_settles_what_it_used_and_a_replay_is_refused(paid_stack, metered, payer):
    price = Sku.objects.get(sku=SKU).price_atomic
    payload = payer.authorize(required_of(requests.get(metered, timeout=30)))
    payer_before, treasury_before = payer.balance(), payer.balance(paid_stack.treasury)
    resp = requests.get(metered, headers=payer.header(payload), timeout=60)
    assert resp.status_code == 200, resp.text
    delivered = len(resp.json()["items"])
    assert 0 < delivered < LIMIT
    used = math.ceil(price * delivered / LIMIT)
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    assert settled.success and settled.amount == str(used) and settled.transaction.startswith("0x")
    assert paid_stack.chain.w3.eth.get_transaction_receipt(settled.transaction)["status"] == 1
    # Less than authorized, exactly what was used, on chain.
    assert used < price
    assert payer_before - payer.balance() == used
    assert payer.balance(paid_stack.treasury) - treasury_before == used
    payment = Payment.objects.get()
    assert (payment.scheme, payment.state, payment.amount_atomic, payment.tx_hash) == (
        "upto",
        Payment.State.SETTLED,
        used,
        settled.transaction,
    )
    assert payment.payer == payer.address.lower() and payment.delivered_at is not None
    # The sale as any other: storefront sales and revenue of the amount settled.
    sales = sales_by_sku()[payment.sku_id]
    assert (sales.sales_30d, sales.revenue_30d_atomic, sales.sales_30d_by_rail) == (1, used, {"x402": 1})

    again = requests.get(metered, headers=payer.header(payload), timeout=60)
    assert again.status_code == 402
    assert required_of(again).error == PROOF_ALREADY_USED
    assert payer_before - payer.balance() == used and Payment.objects.count() == 1
    assert ledger_audit() == []


def test_a_call_that_used_nothing_settles_nothing_on_chain(paid_stack, metered, payer, monkeypatch):
    meter_swap(monkeypatch, lambda call, content, authorized: 0)
    session = payer.session()
    block, before = paid_stack.chain.w3.eth.block_number, payer.balance()
    resp = session.get(metered, timeout=60)
    assert resp.status_code == 200, resp.text
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    assert settled.success and settled.transaction == "" and settled.amount == "0"
    assert paid_stack.chain.w3.eth.block_number == block and payer.balance() == before
    payment = Payment.objects.get()
    assert (payment.scheme, payment.state, payment.amount_atomic, payment.tx_hash) == (
        "upto",
        Payment.State.SETTLED,
        0,
        "",
    )
    assert ledger_audit() == []


def test_more_than_authorized_is_never_settled(paid_stack, metered, payer, monkeypatch):
    price = Sku.objects.get(sku=SKU).price_atomic
    meter_swap(monkeypatch, lambda call, content, authorized: authorized * 3)
    before = payer.balance()
    resp = payer.session().get(metered, timeout=60)
    assert resp.status_code == 200, resp.text
    assert decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"]).amount == str(price)
    assert before - payer.balance() == price  # the maximum, not three times it
    # Asked directly, our facilitator refuses to settle more than the authorization allows.
    payload = payer.authorize(required_of(requests.get(metered, timeout=30)))
    over = payload.accepted.model_copy(update={"amount": str(price + 1)})
    refused = hosted_settle(payload, over)
    assert not refused.success and refused.error_reason == ERR_UPTO_SETTLEMENT_EXCEEDS_AMOUNT
    assert before - payer.balance() == price and Payment.objects.count() == 1


def test_a_failed_product_charges_nothing(paid_stack, metered, payer, monkeypatch):
    spec = registry.product_get(SKU)
    assert spec is not None

    def failing(call):
        raise registry.ProductFailed("the digest could not be built; nothing was charged")

    monkeypatch.setitem(registry._SPECS, SKU, dataclasses.replace(spec, run=failing))
    before = payer.balance()
    resp = payer.session().get(metered, timeout=60)
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert payer.balance() == before and not Payment.objects.exists()


def test_an_upto_proof_pays_in_the_catalog_agents_chat(paid_stack, payer):
    """The chat sells the same metered product: an upto proof for the product's URL (the chat's
    next call) pays the chat's answer, settled for what the answer used."""
    digests_market_write()
    hub = paid_stack.url + "/api/a2a/agenthub/chat"
    question = {"message": "grants for AI agents"}
    call = requests.post(hub, json=question, timeout=30).json()["next_call"]
    price = call["price_atomic"]
    payload = payer.authorize(required_of(requests.get(call["x402"]["url"], timeout=30)))
    before = payer.balance()
    paid = requests.post(hub, json=question, headers=payer.header(payload), timeout=60)
    assert paid.status_code == 200, paid.text
    body = paid.json()
    programs = len(body["result"]["programs"])
    limit = int(call["params"].get("limit", 20)) if call.get("params") else 20
    used = math.ceil(price * programs / limit)
    assert body["charged"]["rail"] == "x402" and body["charged"]["amount_usdc"] == used / 10**6
    assert decode_payment_response_header(paid.headers["PAYMENT-RESPONSE"]).amount == str(used)
    assert before - payer.balance() == used
    payment = Payment.objects.get()
    assert (payment.sku.sku, payment.scheme, payment.amount_atomic) == ("grant_scout_desk", "upto", used)
    assert ledger_audit() == []


@pytest.fixture
def challenge_cache(settings):
    """The WSGI application with the 402 cache in front of Django (billing/x402/fastpath.py)."""
    if not settings.REDIS_URL:
        pytest.skip("the challenge cache needs Redis (CI sets REDIS_URL)")
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    from werkzeug.test import Client

    from a2a_service.wsgi import application
    from billing.x402.fastpath import LOCAL

    # Keep the request cycle from closing the test transaction's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    LOCAL.ensure_started()
    assert LOCAL._listening.wait(5)
    LOCAL.clear()
    yield application, Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
def test_a_cached_402_keeps_upto_and_follows_the_facilitators_address(challenge_cache, settings):
    import base64
    import json

    from billing.x402.fastpath import challenges_forget

    application, client = challenge_cache
    settings.FACILITATOR_URL = ""
    settings.FACILITATOR_PRIVATE_KEY = "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x")
    digests_market_write()
    challenges_forget()

    def upto_of(resp) -> dict:
        assert resp.status_code == 402
        accepts = json.loads(base64.b64decode(resp.headers["PAYMENT-REQUIRED"]))["accepts"]
        return next(a for a in accepts if a["scheme"] == "upto")

    first = upto_of(client.get(DIGEST))
    calls: list[int] = []
    django_app = application.app
    application.app = lambda environ, start: calls.append(1) or django_app(environ, start)
    try:
        cached = upto_of(client.get(DIGEST))
        assert calls == [] and cached == first  # served before Django, upto as Django built it
        assert cached["extra"]["facilitatorAddress"] == dev_account(FACILITATOR).address
        # Another facilitator key: the stored 402 (keyed by the settling address) is not served.
        settings.FACILITATOR_PRIVATE_KEY = "0x" + dev_account(5).key.hex().removeprefix("0x")
        moved = upto_of(client.get(DIGEST))
    finally:
        application.app = django_app
    assert calls == [1] and moved["extra"]["facilitatorAddress"] == dev_account(5).address


def test_the_reconciler_and_the_deposit_watcher_know_an_upto_settlement(paid_stack, metered, payer):
    """An upto settlement has no AuthorizationUsed event: the reconciler finds it by the proxy's
    settle call (payer, Permit2 nonce), and the deposit watcher does not credit it as a deposit."""
    from billing.deposits import _is_x402_sale
    from billing.reconcile import payment_reconcile

    resp = payer.session().get(metered, timeout=60)
    assert resp.status_code == 200, resp.text
    payment = Payment.objects.get()
    tx_hash, used = payment.tx_hash, payment.amount_atomic
    assert _is_x402_sale(paid_stack.chain.w3.eth.get_transaction_receipt(tx_hash))
    # As if the answer had been lost after the broadcast: pending, its transaction unknown.
    Payment.objects.filter(pk=payment.pk).update(state=Payment.State.PENDING, tx_hash="")
    assert payment_reconcile(payment_id=payment.pk, w3=paid_stack.chain.w3) == "settled"
    payment.refresh_from_db()
    assert (payment.state, payment.tx_hash, payment.amount_atomic) == (Payment.State.SETTLED, tx_hash, used)
    # A claim whose authorization never moved anything and has expired is released.
    payload = payer.authorize(required_of(requests.get(metered, timeout=30)))
    auth = payload.payload["permit2Authorization"]
    Payment.objects.create(
        sku=payment.sku,
        resource=metered,
        payer=payer.address.lower(),
        nonce=f"0x{int(auth['nonce']):064x}",
        amount_atomic=int(auth["permitted"]["amount"]),
        network=payment.network,
        asset=payment.asset,
        pay_to=payment.pay_to,
        scheme="upto",
        valid_before=1,
    )
    stale = Payment.objects.get(state=Payment.State.CLAIMED)
    assert payment_reconcile(payment_id=stale.pk, w3=paid_stack.chain.w3) == "released"
    assert Payment.objects.count() == 1 and ledger_audit() == []


def test_a_separately_run_facilitator_verifies_and_settles_upto(paid_stack, metered, payer, settings):
    """FACILITATOR_URL pointing at this service's facilitator over HTTP (with the shared secret):
    the 402's facilitatorAddress comes from its /supported, and /settle settles the metered claim."""
    from billing.x402.facilitator_client import _client

    settings.FACILITATOR_SHARED_SECRET = "the-service-knows-this"
    settings.FACILITATOR_URL = paid_stack.url + "/api/a2a/facilitator"
    settings.FACILITATOR_TIMEOUT_SECONDS = 10.0  # verify simulates the settlement on chain first
    before = payer.balance()
    try:
        required = required_of(requests.get(metered, timeout=30))
        upto = next(a for a in required.accepts if a.scheme == "upto")
        assert upto.extra["facilitatorAddress"] == dev_account(FACILITATOR).address
        resp = requests.get(metered, headers=payer.header(payer.authorize(required)), timeout=60)
    finally:
        _client.cache_clear()
    assert resp.status_code == 200, resp.text
    payment = Payment.objects.get()
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    assert settled.success and settled.amount == str(payment.amount_atomic)
    assert payment.state == Payment.State.SETTLED and before - payer.balance() == payment.amount_atomic > 0
