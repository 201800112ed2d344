"""The ceiling of issue 27 item 1: the credit debit alone behind granian, with none of the
call's other work (no key lookup, rate limit, product, rendering or money event), measured by
`make bench` beside the credit call and the reference's unpaid 402.

- `one_per_call`: the service's own debit statement (billing/api/credit_fastpath.py, prepared,
  asynchronous commit), one statement and one commit per request, one thread per worker as
  production runs (with CREDIT_DEBIT_SYNC_COMMIT=true, each commit waits for the disk, as
  the service's does with that setting). Whatever the service does around it, a credit call that commits each debit
  on its own cannot be faster than this.
- `grouped`: group commit at its cheapest. Each worker runs BENCH_GROUP_THREADS request threads and
  one committer thread; the committer takes every debit waiting (up to GROUP_MAX) and runs them
  as ONE statement (GROUPED_SQL: every key checked, the accounts locked in id order so two
  workers cannot deadlock, each account debited for as many of its calls as its balance covers,
  one ledger row per call with its balance after), then wakes the request threads. It is the
  database side of the design docs/performance.md describes, without the rest of a call.

The request names the account and key (`X-Bench-Account: <account id>:<key id>`): the ledger
rows are real, and the bench audits them with the credit rounds (one row per 200, every
balance equal to its ledger sum). Bench code, not the service's: nothing imports it."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local")
django.setup()

import psycopg  # noqa: E402 - after Django's setup, which the statement's module needs
from psycopg import pq  # noqa: E402

from a2a_service.core.randpool import token_hex  # noqa: E402
from billing.api.credit_fastpath import _DEBIT, prepared_row  # noqa: E402

SKU = os.environ.get("BENCH_DEBIT_SKU", "payments_dual_rail_status")
# As the service's CREDIT_DEBIT_SYNC_COMMIT: each debit waits for its commit's WAL flush.
SYNC_COMMIT = os.environ.get("CREDIT_DEBIT_SYNC_COMMIT", "").lower() == "true"
GROUP_MAX = int(os.environ.get("BENCH_GROUP_MAX", "32"))
DSN = os.environ.get("DATABASE_URL", "").replace("postgres://", "postgresql://", 1)
BODY = b'{"charged":"0.01"}'
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]
REFUSED = b'{"refused":true}'
REFUSED_HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(REFUSED)))]

# $1 accounts, $2 keys, $3 references (one each per call, in arrival order), $4 the SKU.
GROUPED_SQL = b"""
WITH req AS (
  SELECT r.account, r.reference, row_number() OVER (PARTITION BY r.account ORDER BY r.ord) AS k
    FROM unnest($1::int8[], $2::int8[], $3::text[]) WITH ORDINALITY AS r(account, key, reference, ord)
   WHERE EXISTS (SELECT 1 FROM billing_apikey AS kk
                  WHERE kk.id = r.key AND kk.account_id = r.account AND kk.revoked_at IS NULL)
), price AS (
  SELECT s.id AS sku_id, s.price_atomic AS p FROM catalog_sku AS s, billing_billingsettings AS b
   WHERE s.sku = $4 AND s.status = 'live_x402' AND s.price_atomic > 0 AND b.id = 1 AND b.credit_billing_enabled
), locked AS (
  SELECT a.id, a.credit_balance_atomic AS bal,
         LEAST((SELECT count(*) FROM req WHERE req.account = a.id), a.credit_balance_atomic / (SELECT p FROM price)) AS n
    FROM billing_account AS a
   WHERE a.id IN (SELECT account FROM req) AND a.is_active AND EXISTS (SELECT 1 FROM price)
   ORDER BY a.id FOR UPDATE OF a
), debit AS (
  UPDATE billing_account AS a SET credit_balance_atomic = l.bal - l.n * (SELECT p FROM price)
    FROM locked AS l WHERE a.id = l.id AND l.n > 0 RETURNING a.id
), commit_mode AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO billing_ledgerentry
    (account_id, amount_atomic, balance_after_atomic, kind, reference, sku_id, reason, created_at)
SELECT req.account, -pr.p, l.bal - req.k * pr.p, 'sku_call', req.reference, pr.sku_id, '', now()
  FROM req JOIN locked AS l ON l.id = req.account, price AS pr, commit_mode
 WHERE req.k <= l.n AND EXISTS (SELECT 1 FROM debit WHERE debit.id = l.id)
RETURNING reference
"""

StartResponse = Callable[..., Any]
_local = threading.local()


def _call(environ: dict[str, Any]) -> tuple[str, str, str]:
    account, key = environ["HTTP_X_BENCH_ACCOUNT"].split(":")
    return account, key, "bench-debit-alone:" + token_hex(16)  # no space: an array element


def _answer(ok: bool, start_response: StartResponse) -> Iterable[bytes]:
    if ok:
        start_response("200 OK", HEADERS)
        return [BODY]
    start_response("402 Payment Required", REFUSED_HEADERS)
    return [REFUSED]


def one_per_call(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = psycopg.connect(DSN, autocommit=True)
    account, key, reference = _call(environ)
    params = {"account": account, "key": key, "sku": SKU, "reference": reference, "sync_commit": SYNC_COMMIT}
    return _answer(prepared_row(conn, _DEBIT, params) is not None, start_response)


class _Waiting:
    __slots__ = ("call", "done", "ok")

    def __init__(self, call: tuple[str, str, str]) -> None:
        self.call = call
        self.ok = False
        self.done = threading.Lock()
        self.done.acquire()


_queue: queue.SimpleQueue[_Waiting] = queue.SimpleQueue()
_committer_lock = threading.Lock()
_committer: threading.Thread | None = None


def _array(values: Iterable[str]) -> bytes:
    return ("{" + ",".join(values) + "}").encode()


def _commit_groups() -> None:
    pgconn = psycopg.connect(DSN, autocommit=True).pgconn
    prepared = pgconn.prepare(b"bench_grouped_debit", GROUPED_SQL, [1016, 1016, 1009, 25])
    if prepared.status != pq.ExecStatus.COMMAND_OK:
        raise RuntimeError(prepared.error_message)
    while True:
        group = [_queue.get()]
        while len(group) < GROUP_MAX:
            try:
                group.append(_queue.get_nowait())
            except queue.Empty:
                break
        result = pgconn.exec_prepared(
            b"bench_grouped_debit",
            [
                _array(w.call[0] for w in group),
                _array(w.call[1] for w in group),
                _array(w.call[2] for w in group),
                SKU.encode(),
            ],
        )
        taken: set[bytes] = set()
        if result.status == pq.ExecStatus.TUPLES_OK:
            taken = {result.get_value(i, 0) or b"" for i in range(result.ntuples)}
        for waiting in group:
            waiting.ok = waiting.call[2].encode() in taken
            waiting.done.release()


def grouped(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    global _committer
    if _committer is None:
        with _committer_lock:
            if _committer is None:
                _committer = threading.Thread(target=_commit_groups, daemon=True)
                _committer.start()
    waiting = _Waiting(_call(environ))
    _queue.put(waiting)
    waiting.done.acquire()
    return _answer(waiting.ok, start_response)
