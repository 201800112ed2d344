"""Sign-in credit calls served in front of Django (billing/api/signin_fastpath.py): the same
debit, ledger row and receipt as Django's answer, the nonce spent once whichever path sees it
first, and every other case (owned, unfunded, refused, replayed) left to Django, on a real
PostgreSQL and Redis."""

from __future__ import annotations

import json
from datetime import timedelta

import psycopg
import pytest
from django.db import connections
from django.utils import timezone
from eth_account import Account as EthAccount
from werkzeug.test import Client
from x402.http.utils import decode_payment_required_header

from a2a_service.wsgi import application
from billing.api import signin_fastpath
from billing.credits import credit_add, ledger_audit
from billing.models import Account, LedgerEntry, SignInNonce
from catalog.models import Sku
from sessions_app.services import session_create
from tests.support.payments import BRIEF, publish_brief
from tests.support.signin import signin_headers
from tests.support.wallets import register_wallet
from webhooks.models import PushEntitlement

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
STATUS = "/api/a2a/x402/payments/dual-rail-status"  # 0.01 USDC, pure: a credit fast path route
SIGNIN_FASTPATH = application.app.app.app  # ChallengeFastPath(FreeFastPath(CreditFastPath(SignIn(Django))))


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the fast paths need Redis (CI sets REDIS_URL); without it Django answers")
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    yield Client(application)
    connections.close_all()


@pytest.fixture
def django_calls(monkeypatch) -> list[str]:
    """The paths of signed-in requests that reached Django behind the sign-in fast path."""
    calls: list[str] = []
    django_app = SIGNIN_FASTPATH.app

    def counting(environ, start_response):
        if "HTTP_SIGN_IN_WITH_X" in environ:
            calls.append(environ["PATH_INFO"])
        return django_app(environ, start_response)

    monkeypatch.setattr(SIGNIN_FASTPATH, "app", counting)
    return calls


def funded_wallet(atomic: int):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)  # signed our ownership challenge: a verified account
    if atomic:
        credit_add(account_id=reg.account.id, amount_atomic=atomic, kind="adjustment", reason="test")
    return wallet, reg.account


def signed(client: Client, wallet, path: str = STATUS) -> dict[str, str]:
    """The SDK client's round trip: the unpaid 402 (from the challenge cache or Django), then the
    header its sign-in hook sends."""
    unpaid = client.get(path)
    assert unpaid.status_code == 402
    required = decode_payment_required_header(unpaid.headers["PAYMENT-REQUIRED"])
    header = signin_headers(wallet, required, "http://localhost" + path)["HTTP_SIGN_IN_WITH_X"]
    return {"SIGN-IN-WITH-X": header}


def debits(account: Account) -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).order_by("id"))


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.credit_balance_atomic


def test_a_sign_in_credit_call_is_served_in_front_of_django_with_djangos_answer(wsgi, django_calls):
    wallet, account = funded_wallet(1_000_000)
    fast = wsgi.get(STATUS, headers=signed(wsgi, wallet))
    assert fast.status_code == 200 and django_calls == []
    assert fast.headers["X-Credit-Charged"] == "0.01" and fast.headers["X-Credit-Balance"] == "0.99"

    through_django = Client(SIGNIN_FASTPATH.app).get(STATUS, headers=signed(wsgi, wallet))
    assert through_django.status_code == 200
    assert json.loads(fast.data) == json.loads(through_django.data)
    assert through_django.headers["X-Credit-Balance"] == "0.98"
    for name in (
        "Content-Type",
        "Vary",
        "Allow",
        "X-Frame-Options",
        "X-Content-Type-Options",
        "Referrer-Policy",
    ):
        assert fast.headers.get(name) == through_django.headers.get(name), name
    assert set(fast.headers.keys()) - {"Content-Length"} == set(through_django.headers.keys()) - {
        "Content-Length"
    }

    rows = debits(account)
    assert [r.amount_atomic for r in rows] == [-10_000, -10_000]
    assert [r.balance_after_atomic for r in rows] == [990_000, 980_000]
    assert rows[0].reference.startswith(STATUS + " req:") and rows[0].sku.sku == "payments_dual_rail_status"
    assert rows[1].reference == STATUS  # Django's
    assert balance(account) == 980_000
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == 2
    assert ledger_audit() == []


def test_a_replayed_signature_is_refused_whichever_path_saw_it_first(wsgi, django_calls):
    wallet, account = funded_wallet(1_000_000)
    header = signed(wsgi, wallet)
    assert wsgi.get(STATUS, headers=header).status_code == 200 and django_calls == []
    replay = wsgi.get(STATUS, headers=header)  # the statement fails on the nonce: Django refuses it
    assert replay.status_code == 402 and json.loads(replay.data)["error"] == "invalid_siwx_nonce_used"
    assert django_calls == [STATUS]
    # Used first by Django (an Idempotency-Key sends the call there), replayed on the fast path.
    header = signed(wsgi, wallet)
    assert wsgi.get(STATUS, headers={**header, "Idempotency-Key": "k1"}).status_code == 200
    replay = wsgi.get(STATUS, headers=header)
    assert replay.status_code == 402 and json.loads(replay.data)["error"] == "invalid_siwx_nonce_used"
    assert [r.amount_atomic for r in debits(account)] == [-10_000, -10_000]
    assert balance(account) == 980_000
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == 2
    assert ledger_audit() == []


def test_a_wallet_that_owns_a_session_pack_is_served_by_it_not_charged(wsgi, django_calls):
    publish_brief()
    wallet, account = funded_wallet(1_000_000)  # credits too: the pack still comes first
    pack = Sku.objects.get(sku="m2m_session_desk")
    session = session_create(pack_sku=pack, buyer=wallet.address)
    assert session.pack.covered_skus.filter(sku="morning_brief").exists()
    resp = wsgi.get(BRIEF, headers=signed(wsgi, wallet, BRIEF))
    assert resp.status_code == 200 and django_calls == [BRIEF]  # the statement found it owned
    assert resp.headers["X-Session-Calls-Remaining"] == str(session.calls_total - 1)
    session.refresh_from_db()
    assert session.calls_used == 1 and debits(account) == [] and balance(account) == 1_000_000
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == 1  # Django's
    # Without the pack, the same wallet's next call is charged on the fast path.
    session.delete()
    resp = wsgi.get(BRIEF, headers=signed(wsgi, wallet, BRIEF))
    assert resp.status_code == 200 and django_calls == [BRIEF] and resp.headers["X-Credit-Charged"] == "0.08"
    assert [r.amount_atomic for r in debits(account)] == [-80_000]
    assert ledger_audit() == []


def test_a_push_entitlement_owns_the_brief_on_the_fast_path_too(wsgi, django_calls):
    publish_brief()
    wallet, account = funded_wallet(1_000_000)
    PushEntitlement.objects.create(account=account, expires_at=timezone.now() + timedelta(days=7), kinds=[])
    resp = wsgi.get(BRIEF, headers=signed(wsgi, wallet, BRIEF))
    assert resp.status_code == 200 and django_calls == [BRIEF]  # the statement found it owned
    assert json.loads(resp.data)["body"] == "full brief" and "X-Credit-Charged" not in resp.headers
    assert debits(account) == [] and balance(account) == 1_000_000 and ledger_audit() == []


def test_what_the_sign_in_fast_path_leaves_to_django(wsgi, django_calls):
    poor, poor_account = funded_wallet(5_000)  # less than the price
    resp = wsgi.get(STATUS, headers=signed(wsgi, poor))
    assert resp.status_code == 402 and json.loads(resp.data)["code"] == "insufficient_credit"
    stranger = EthAccount.create()  # no account
    resp = wsgi.get(STATUS, headers=signed(wsgi, stranger))
    assert resp.status_code == 402 and json.loads(resp.data)["error"] == "siwx_nothing_owned"
    wallet, account = funded_wallet(1_000_000)
    header = signed(wsgi, wallet)  # for STATUS, sent to another path: refused before its nonce is used
    elsewhere = wsgi.get("/api/a2a/x402/exchange-spreads", headers=header)
    assert elsewhere.status_code in (402, 503) and debits(account) == []
    Account.objects.filter(pk=account.pk).update(is_active=False)
    resp = wsgi.get(STATUS, headers=signed(wsgi, wallet))
    assert resp.status_code == 402
    assert django_calls == [STATUS, STATUS, "/api/a2a/x402/exchange-spreads", STATUS]
    # None was served, so no nonce was used: each is used with the payment, in its transaction.
    assert SignInNonce.objects.count() == 0
    assert debits(poor_account) == [] and debits(account) == [] and ledger_audit() == []


def test_a_connection_lost_after_the_statement_committed_serves_the_call_once(wsgi, monkeypatch):
    wallet, account = funded_wallet(1_000_000)
    real = signin_fastpath.signin_debit_execute

    def committed_then_lost(raw, statement, params):
        real(raw, statement, params)
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(signin_fastpath, "signin_debit_execute", committed_then_lost)
    header = signed(wsgi, wallet)
    resp = wsgi.get(STATUS, headers=header)
    assert resp.status_code == 200 and resp.headers["X-Credit-Balance"] == "0.99"
    assert len(debits(account)) == 1 and balance(account) == 990_000
    monkeypatch.undo()
    assert json.loads(wsgi.get(STATUS, headers=header).data)["error"] == "invalid_siwx_nonce_used"
    assert ledger_audit() == []


def test_a_connection_lost_before_the_statement_committed_is_charged_once_by_django(
    wsgi, monkeypatch, django_calls
):
    wallet, account = funded_wallet(1_000_000)

    def lost(raw, statement, params):
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(signin_fastpath, "signin_debit_execute", lost)
    resp = wsgi.get(STATUS, headers=signed(wsgi, wallet))
    assert resp.status_code == 200 and django_calls == [STATUS]  # the nonce was not spent
    assert [r.reference for r in debits(account)] == [STATUS] and balance(account) == 990_000
    assert ledger_audit() == []


def test_a_key_sent_with_a_sign_in_leaves_the_choice_to_django_where_sign_in_comes_first(wsgi, django_calls):
    """The key's fast path does not charge a call that also signs in: the front tries sign-in
    before the key, and the wallet's session pack makes this call free."""
    publish_brief()
    wallet = EthAccount.create()
    reg = register_wallet(wallet)
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer=wallet.address)
    resp = wsgi.get(BRIEF, headers={**signed(wsgi, wallet, BRIEF), "X-API-Key": reg.api_key})
    assert resp.status_code == 200 and django_calls == [BRIEF]
    assert resp.headers["X-Session-Calls-Remaining"] == str(session.calls_total - 1)
    assert debits(reg.account) == [] and balance(reg.account) == 1_000_000
    assert ledger_audit() == []
