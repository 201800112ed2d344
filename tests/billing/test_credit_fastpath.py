"""Credit-paid calls served in front of Django (billing/api/credit_fastpath.py): the same
answer as Django's, one debit with its ledger row, and every refusal left to Django, on a
real PostgreSQL and Redis."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.db import connection, connections
from werkzeug.test import Client

from a2a_service.core.schemas import ChargeUnconfirmedOut, RateLimitedOut
from a2a_service.wsgi import application
from billing.api import credit_fastpath
from billing.api.credit_fastpath import fast_routes
from billing.credits import api_key_issue, credit_add, ledger_audit
from billing.models import Account, ApiKey, BillingSettings, LedgerEntry
from catalog.models import Sku
from tests.support.wallets import register_wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
STATUS = "/api/a2a/x402/payments/dual-rail-status"
CREDIT_FASTPATH = application.app.app  # ChallengeFastPath(FreeFastPath(CreditFastPath(Django)))


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the credit fast path needs Redis (CI sets REDIS_URL); without it Django answers")
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    yield Client(application)
    connections.close_all()


@pytest.fixture
def django_calls(monkeypatch) -> list[str]:
    """The paths of requests that reached Django behind the fast path."""
    calls: list[str] = []
    django_app = CREDIT_FASTPATH.app

    def counting(environ, start_response):
        calls.append(environ["PATH_INFO"])
        return django_app(environ, start_response)

    monkeypatch.setattr(CREDIT_FASTPATH, "app", counting)
    return calls


def funded(usdc: float, wallet_digit: str = "4") -> tuple[str, Account]:
    reg = register_wallet()
    if usdc:
        credit_add(
            account_id=reg.account.id, amount_atomic=int(usdc * 10**6), kind="adjustment", reason="test"
        )
    return reg.api_key, reg.account


def debits() -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).order_by("id"))


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.credit_balance_atomic


def test_a_keyed_call_is_served_in_front_of_django_with_djangos_answer(wsgi, django_calls):
    key, account = funded(1.0)
    fast = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert fast.status_code == 200 and django_calls == []
    assert fast.headers["X-Credit-Charged"] == "0.01" and fast.headers["X-Credit-Balance"] == "0.99"

    through_django = Client(CREDIT_FASTPATH.app).get(STATUS, headers={"X-API-Key": key})
    assert through_django.status_code == 200
    assert json.loads(fast.data) == json.loads(through_django.data)
    assert through_django.headers["X-Credit-Balance"] == "0.98"
    same = {"Content-Type", "Vary", "Allow", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"}
    for name in same | {"Cross-Origin-Opener-Policy"}:
        assert fast.headers.get(name) == through_django.headers.get(name), name
    assert set(fast.headers.keys()) - {"Content-Length"} == set(through_django.headers.keys()) - {
        "Content-Length"
    }

    rows = debits()
    assert [r.amount_atomic for r in rows] == [-10_000, -10_000]
    assert rows[0].reference.startswith(STATUS + " req:") and rows[0].sku.sku == "payments_dual_rail_status"
    assert rows[0].balance_after_atomic == 990_000 and balance(account) == 980_000
    assert ledger_audit() == []


def test_every_product_on_the_fast_path_answers_as_django_does(wsgi, django_calls):
    key, account = funded(5.0)
    routes = fast_routes()
    assert STATUS in routes and "/api/a2a/telemetry/detail" in routes
    assert "/api/a2a/x402/news/unlock" not in routes  # has parameters and a per-item price
    assert "/api/a2a/x402/webhooks/signal-desk-pack" not in routes  # writes an entitlement
    for path, route in routes.items():
        before = balance(account)
        fast = wsgi.get(path, headers={"X-API-Key": key})
        after_fast = balance(account)
        slow = Client(CREDIT_FASTPATH.app).get(path, headers={"X-API-Key": key})
        assert fast.status_code == slow.status_code, path
        if fast.status_code == 200:
            assert set(json.loads(fast.data)) == set(json.loads(slow.data)), path
            assert fast.headers["Allow"] == slow.headers["Allow"], path
            assert before - after_fast == Sku.objects.get(sku=route.sku).price_atomic, path
        else:  # a product without data: 503 from Django, nothing charged either way
            assert fast.status_code == 503 and json.loads(fast.data)["charged"] is False, path
            assert before == after_fast == balance(account)
    assert ledger_audit() == []


def test_not_enough_credit_is_djangos_402_and_charges_nothing(wsgi, django_calls):
    key, account = funded(0.005)
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 402 and django_calls == [STATUS]
    body = json.loads(resp.data)
    assert (
        body["code"] == "insufficient_credit" and body["price_usdc"] == 0.01 and body["balance_usdc"] == 0.005
    )
    assert debits() == [] and balance(account) == 5_000


def test_a_revoked_or_rotated_key_is_refused_at_once_even_after_it_was_remembered(wsgi):
    key, account = funded(1.0)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 200  # now in this process's map
    ApiKey.objects.filter(account=account).update(revoked_at="2026-01-01T00:00:00Z")  # the admin's action
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 401
    new_key = api_key_issue(account=account)
    assert wsgi.get(STATUS, headers={"X-API-Key": new_key}).status_code == 200
    old_again = api_key_issue(account=account)  # rotate again: new_key is revoked
    assert wsgi.get(STATUS, headers={"X-API-Key": new_key}).status_code == 401
    assert wsgi.get(STATUS, headers={"X-API-Key": old_again}).status_code == 200
    assert len(debits()) == 3 and balance(account) == 970_000


def test_a_deactivated_account_is_refused_and_not_charged(wsgi):
    key, account = funded(1.0)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 200
    Account.objects.filter(pk=account.pk).update(is_active=False)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 401
    assert len(debits()) == 1


def test_a_price_change_in_the_admin_is_charged_on_the_next_call(wsgi):
    key, account = funded(1.0)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).headers["X-Credit-Charged"] == "0.01"
    sku = Sku.objects.get(sku="payments_dual_rail_status")
    sku.price_atomic = 70_000
    sku.save()
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.headers["X-Credit-Charged"] == "0.07" and balance(account) == 920_000


def test_a_disabled_sku_is_404_and_billing_off_is_free(wsgi):
    key, account = funded(1.0)
    Sku.objects.filter(sku="payments_dual_rail_status").update(status=Sku.Status.DISABLED)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 404
    Sku.objects.filter(sku="payments_dual_rail_status").update(status=Sku.Status.LIVE)
    billing = BillingSettings.load()
    billing.credit_billing_enabled = False
    billing.save()
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 200 and resp.headers["X-Credit-Charged"] == "0"
    assert debits() == [] and balance(account) == 1_000_000


def test_a_product_that_fails_is_not_charged(wsgi):
    key, account = funded(1.0)
    resp = wsgi.get("/api/a2a/x402/telemetry/detail", headers={"X-API-Key": key})  # nothing ingested
    assert resp.status_code == 503 and json.loads(resp.data)["charged"] is False
    assert debits() == [] and balance(account) == 1_000_000


def test_what_the_fast_path_leaves_to_django(wsgi, django_calls):
    key, _ = funded(1.0)
    cases = [
        ("GET", STATUS, {"X-API-Key": key, "Idempotency-Key": "k1"}, 200),
        ("GET", STATUS + "?x=1", {"X-API-Key": key}, 200),
        ("GET", STATUS, {"X-API-Key": key, "Origin": "https://agent.example"}, 200),
        ("GET", STATUS, {"X-API-Key": "a2a_unknownunknownunknown"}, 401),
        ("GET", STATUS, {"X-API-Key": ""}, 402),  # an empty key is no key: the x402 challenge
        ("HEAD", STATUS, {"X-API-Key": key}, 405),  # never charged (tests/billing/test_paid_head_idempotency.py)
        ("GET", STATUS, {"X-API-Key": key, "Host": "evil.example"}, 400),
    ]
    for method, path, headers, status in cases:
        before = len(django_calls)
        resp = wsgi.open(path, method=method, headers=headers)
        assert resp.status_code == status, (path, headers, resp.data[:200])
        assert len(django_calls) == before + 1, (path, headers)


def test_the_rate_limit_holds_on_the_fast_path_with_one_budget_shared_with_django(wsgi, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/day"})  # no window ends mid-test
    key, account = funded(1.0)
    env = {"REMOTE_ADDR": "10.7.7.7"}
    codes = [wsgi.get(STATUS, headers={"X-API-Key": key}, environ_base=env).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]
    refused = wsgi.get(STATUS, headers={"X-API-Key": key}, environ_base=env)
    assert int(refused.headers["Retry-After"]) >= 1 and json.loads(refused.data)["code"] == "rate_limited"
    RateLimitedOut.model_validate(json.loads(refused.data))  # as documented in OpenAPI
    assert len(debits()) == 3  # a refused call is not charged
    # The same window, counted by the fast path, holds for Django's routes too.
    from a2a_service.core.throttling import BUFFERED_WINDOWS

    BUFFERED_WINDOWS.flush()
    assert wsgi.get("/api/a2a/discovery/storefront", environ_base=env).status_code == 429
    other = wsgi.get(STATUS, headers={"X-API-Key": key}, environ_base={"REMOTE_ADDR": "10.7.7.8"})
    assert other.status_code == 200


def test_100_concurrent_fast_calls_against_a_balance_for_10(wsgi):
    key, account = funded(0.1)

    def call(_: int) -> int:
        try:
            return Client(application).get(STATUS, headers={"X-API-Key": key}).status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = list(pool.map(call, range(100)))
    assert codes.count(200) == 10 and codes.count(402) == 90
    assert balance(account) == 0 and len(debits()) == 10 and ledger_audit() == []


def test_a_connection_lost_after_the_debit_committed_serves_the_paid_call_once(wsgi, monkeypatch):
    key, account = funded(1.0)
    real = credit_fastpath.debit_execute

    def committed_then_lost(raw, params):
        real(raw, params)
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(credit_fastpath, "debit_execute", committed_then_lost)
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 200 and resp.headers["X-Credit-Balance"] == "0.99"
    assert len(debits()) == 1 and balance(account) == 990_000


def test_a_connection_lost_before_the_debit_committed_is_charged_once_by_django(
    wsgi, monkeypatch, django_calls
):
    key, account = funded(1.0)

    def lost(raw, params):
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(credit_fastpath, "debit_execute", lost)
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 200 and django_calls == [STATUS]
    assert len(debits()) == 1 and balance(account) == 990_000


def test_a_charge_that_cannot_be_confirmed_is_503_and_never_retried(wsgi, monkeypatch, django_calls):
    key, account = funded(1.0)
    real_raw = credit_fastpath._raw
    state = {"lost": False}

    def lost(raw, params):
        state["lost"] = True
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    def unreachable(conn):
        if state["lost"]:
            raise psycopg.OperationalError("connection refused")
        return real_raw(conn)

    monkeypatch.setattr(credit_fastpath, "debit_execute", lost)
    monkeypatch.setattr(credit_fastpath, "_raw", unreachable)
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 503 and django_calls == []
    body = json.loads(resp.data)
    assert body["code"] == "charge_unconfirmed" and body["reference"].startswith(STATUS + " req:")
    ChargeUnconfirmedOut.model_validate(body)  # as documented in OpenAPI
    assert debits() == [] and balance(account) == 1_000_000


def wal_syncs() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT wal_sync FROM pg_stat_wal")
        return cursor.fetchone()[0]


def test_debits_skip_the_disk_flush_only_in_their_own_transaction(wsgi, settings):
    """CREDIT_DEBIT_SYNC_COMMIT=false: a debit commits without waiting for its WAL flush, and
    the connection's setting is untouched afterwards (an x402 claim on it stays durable)."""
    key, account = funded(1.0)
    calls = 40
    for sync in (False, True):
        settings.CREDIT_DEBIT_SYNC_COMMIT = sync
        start = wal_syncs()
        for _ in range(calls):
            assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 200
        # Through Django too (Idempotency-Key sends the call there).
        assert wsgi.get(STATUS, headers={"X-API-Key": key, "Idempotency-Key": f"s{sync}"}).status_code == 200
        flushes = wal_syncs() - start
        if sync:
            assert flushes >= calls + 1
        else:
            assert flushes < calls // 2
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
    assert len(debits()) == 2 * (calls + 1) and ledger_audit() == []


def test_a_forgotten_statement_is_prepared_again_and_a_killed_connection_is_charged_once(wsgi, django_calls):
    """The debit is libpq's own prepared-statement call: a statement the server forgot (DISCARD
    ALL, as a pooler sends) is prepared again, nothing charged twice; a connection the server
    ended is psycopg's OperationalError, the ledger says the debit did not commit, and Django
    serves the call, charged once."""
    key, account = funded(1.0)
    assert wsgi.get(STATUS, headers={"X-API-Key": key}).status_code == 200  # prepared here
    with connection.cursor() as cursor:
        cursor.execute("DISCARD ALL")
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 200 and django_calls == [] and resp.headers["X-Credit-Balance"] == "0.98"

    pid = connection.connection.info.backend_pid
    other = connection.copy()  # a second connection, to end the first one's backend
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    resp = wsgi.get(STATUS, headers={"X-API-Key": key})
    assert resp.status_code == 200 and django_calls == [STATUS]
    assert [r.amount_atomic for r in debits()] == [-10_000] * 3 and balance(account) == 970_000
    assert ledger_audit() == []
