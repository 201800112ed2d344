"""PostgreSQL connections lost under a real granian server (persistent connections, as in
production): between calls the next call reconnects (CONN_HEALTH_CHECKS) and is served; during a
call (the server's backend terminated while its statement waits on a lock the test holds) the
answer is 503 with Retry-After, never a 500, and nothing is claimed or charged for it; the same
request then goes through once. ledger_audit() stays clean (conftest checks it)."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid

import pytest
import requests
from django.db import connection, transaction
from django.utils import timezone

from billing.models import Account, LedgerEntry, Payment
from billing.services import payment_claim
from catalog.models import EditorialPiece, Sku
from tests.support import LEAK_PROBE_NAME
from tests.support.granian_server import granian
from tests.support.payments import BRIEF, balances, challenge, funded, paying_session, signed_header

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
PRICE = 80_000  # the morning brief


@pytest.fixture
def server(chain, transactional_db, tmp_path):
    from catalog.services import catalog_seed

    catalog_seed()  # committed: the server is another process
    EditorialPiece.objects.create(
        kind="morning_brief", title="Rates day", summary="CPI", body="The full brief.", published_at=timezone.now()
    )
    with granian(rpc_url=chain.url, run_dir=tmp_path, workers=1, threads=2, ready=BRIEF) as (proc, base, log):
        yield base, log


def server_backends() -> list[int]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend' AND application_name <> %s",
            [LEAK_PROBE_NAME],  # the suite's own probe is not the server's
        )
        return [row[0] for row in cur.fetchall()]


def terminate(pids: list[int]) -> None:
    with connection.cursor() as cur:
        for pid in pids:
            cur.execute("SELECT pg_terminate_backend(%s)", [pid])


def waiting_on_a_lock(seconds: float = 30) -> int:
    """The server backend whose statement waits on a lock the test holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            rows = cur.fetchall()
        if rows:
            return int(rows[0][0])
        time.sleep(0.05)
    raise AssertionError("the server never waited on the test's lock")


def in_background(fn) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    return thread, out


def assert_database_503(resp: requests.Response) -> None:
    assert resp.status_code == 503, resp.text
    assert resp.headers["Retry-After"] == "2"
    assert resp.json()["code"] == "database_unavailable" and resp.json()["retry_after"] == 2


def credit_call(base: str, key: str, idempotency_key: str = "") -> requests.Response:
    headers = {"X-API-Key": key}
    if idempotency_key:  # Django's path (the credit fast path leaves it to Django)
        headers["Idempotency-Key"] = idempotency_key
    return requests.get(base + BRIEF, headers=headers, timeout=60)


def test_connections_lost_between_and_during_calls_answer_no_500_and_charge_nothing_twice(server, chain):
    """One server for the three faults (each start costs seconds)."""
    base, log = server
    between_calls(base, chain)
    x402_call_dies_mid_claim(base, chain)
    credit_call_dies_mid_debit(base)
    assert "Internal Server Error" not in log.read_text() and "Traceback" not in log.read_text(), log.read_text()[-3000:]


def between_calls(base: str, chain) -> None:
    key, account = funded(1.0)
    x402 = paying_session()
    calls = [
        lambda: x402.get(base + BRIEF, timeout=60),
        lambda: credit_call(base, key),
        lambda: credit_call(base, key, uuid.uuid4().hex),
    ]
    assert [call().status_code for call in calls] == [200, 200, 200]
    killed = server_backends()
    assert killed  # the server keeps its connections between requests
    terminate(killed)
    assert [call().status_code for call in calls] == [200, 200, 200]  # reconnected, no 500, no 503
    assert not set(killed) & set(server_backends())
    assert Payment.objects.filter(state=Payment.State.SETTLED).count() == 2
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000 - 4 * PRICE
    assert LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).count() == 4
    Payment.objects.all().delete()  # the next part counts its own


def x402_call_dies_mid_claim(base: str, chain) -> None:
    header = signed_header(challenge(base + BRIEF))
    auth = json.loads(base64.b64decode(header))["payload"]["authorization"]
    before = balances_of(chain)
    # The test claims the proof's (payer, nonce) in a transaction it keeps open: the server's
    # claim waits on that row's unique index, and its connection is terminated meanwhile.
    with transaction.atomic():
        payment_claim(
            sku=Sku.objects.get(sku="morning_brief"),
            resource=base + BRIEF,
            payer=auth["from"],
            nonce=auth["nonce"],
            amount_atomic=PRICE,
            network="eip155:8453",
            asset="0x",
            pay_to="0x",
            x402_version=2,
        )
        thread, out = in_background(
            lambda: requests.get(base + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=60)
        )
        terminate([waiting_on_a_lock()])
        thread.join(60)
        transaction.set_rollback(True)  # the test's claim was never there
    assert_database_503(out[0])
    assert not Payment.objects.exists() and balances_of(chain) == before

    again = requests.get(base + BRIEF, headers={"PAYMENT-SIGNATURE": header}, timeout=60)  # the same proof
    assert again.status_code == 200 and again.json()["body"] == "The full brief."
    assert Payment.objects.get().state == Payment.State.SETTLED
    assert before[0] - balances_of(chain)[0] == PRICE


def credit_call_dies_mid_debit(base: str) -> None:
    key, account = funded(1.0)
    idempotency_key = uuid.uuid4().hex
    # The test holds the account's row: the server's debit waits on it, and its connection is
    # terminated meanwhile.
    with transaction.atomic():
        Account.objects.select_for_update().get(pk=account.pk)
        thread, out = in_background(lambda: credit_call(base, key, idempotency_key))
        terminate([waiting_on_a_lock()])
        thread.join(60)
    assert_database_503(out[0])
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000  # nothing charged for the 503

    again = credit_call(base, key, idempotency_key)  # the same request, the same Idempotency-Key
    assert again.status_code == 200 and again.json()["body"] == "The full brief."
    replay = credit_call(base, key, idempotency_key)
    assert replay.status_code == 200 and replay.json() == again.json()
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000 - PRICE  # charged once


def balances_of(chain) -> tuple[int, int]:
    from types import SimpleNamespace

    from django.conf import settings

    return balances(SimpleNamespace(chain=chain, treasury=settings.TREASURY_ADDRESS))
