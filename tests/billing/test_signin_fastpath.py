"""Sign-in through the unpaid 402's cache (billing/x402/fastpath.py): the cache keeps one stored
challenge per path, and each 402 it serves carries a nonce of its own, so one wallet calling the
same path twice within the cache's minute signs two messages and spends by sign-in twice (the
SDK's clients sign whatever nonce they are given and pay when the sign-in is refused). A request
carrying SIGN-IN-WITH-X always goes to Django."""

from __future__ import annotations

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from eth_account import Account as EthAccount
from werkzeug.test import Client
from x402.http.utils import decode_payment_required_header

from a2a_service.wsgi import application
from billing.credits import credit_add, ledger_audit
from billing.models import LedgerEntry
from billing.x402.fastpath import LOCAL
from tests.support.payments import BRIEF, BRIEF_PRICE, publish_brief
from tests.support.signin import signin_headers
from tests.support.wallets import register_wallet

pytestmark = pytest.mark.django_db


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the challenge cache needs Redis (CI sets REDIS_URL)")
    request_started.disconnect(close_old_connections)  # keep the test transaction's connection
    request_finished.disconnect(close_old_connections)
    LOCAL.ensure_started()
    assert LOCAL._listening.wait(5), "the invalidation subscriber did not subscribe"
    LOCAL.clear()
    yield Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def test_one_wallet_signs_in_twice_within_the_cached_minute(wsgi):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    publish_brief()
    url = BRIEF
    assert wsgi.get(url).status_code == 402  # rendered by Django, stored
    calls: list[int] = []
    django_app = application.app
    application.app = lambda environ, start: calls.append(1) or django_app(environ, start)
    try:
        served = [wsgi.get(url) for _ in range(2)]  # both from the cache
        assert calls == [], "Django was called for a stored challenge"
        for resp in served:
            assert resp.status_code == 402
            required = decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])
            header = signin_headers(wallet, required, "http://localhost" + url)
            paid = wsgi.get(url, headers={"SIGN-IN-WITH-X": header["HTTP_SIGN_IN_WITH_X"]})
            assert paid.status_code == 200, paid.json
        assert len(calls) == 2  # the signed-in calls went to Django
    finally:
        application.app = django_app
    rows = LedgerEntry.objects.filter(account=reg.account, kind=LedgerEntry.Kind.SKU_CALL)
    assert list(rows.values_list("amount_atomic", flat=True)) == [-BRIEF_PRICE, -BRIEF_PRICE]
    reg.account.refresh_from_db()
    assert reg.account.credit_balance_atomic == 1_000_000 - 2 * BRIEF_PRICE
    assert ledger_audit() == []


@pytest.mark.parametrize("pad", [0, 1, 2, 3])  # the nonce at each offset modulo base64's 3 bytes
@pytest.mark.parametrize("tail", ["", "x", "xy", ',"more":"after the nonce"'])
def test_a_renewed_header_differs_only_by_a_valid_nonce_of_its_own(pad, tail):
    import base64
    import json

    from billing.x402.signin import SiwxRenonce, siwx_nonce_issue, siwx_nonce_valid

    document = {"p": "a" * pad, "extensions": {"sign-in-with-x": {"info": {"nonce": siwx_nonce_issue()}}}}
    raw = json.dumps(document, separators=(",", ":"))
    raw = raw[:-3] + tail + raw[-3:]  # what follows the nonce: 0, 1, 2 or more bytes
    header = base64.b64encode(raw.encode()).decode()
    prepared = SiwxRenonce(header)
    nonces = set()
    for _ in range(3):
        fresh = prepared.fresh()
        assert len(fresh) == len(header)
        text = base64.b64decode(fresh).decode()
        start = text.index('"nonce":"') + len('"nonce":"')
        nonce = text[start : start + 52]
        assert siwx_nonce_valid(nonce)
        assert text[:start] + text[start + 52 :] == raw[:start] + raw[start + 52 :]
        nonces.add(nonce)
    assert len(nonces) == 3


def test_a_header_without_a_sign_in_nonce_is_served_as_it_is():
    from billing.x402.signin import SiwxRenonce

    assert SiwxRenonce("eyJhIjoxfQ==").fresh() == "eyJhIjoxfQ=="  # {"a":1}
    assert SiwxRenonce("not base64!").fresh() == "not base64!"
