"""Logs that can be followed (a2a_service/core/requestlog.py, taskobserve.py, observe.py): a
request's id (X-Request-ID, accepted when sane, else made) is in its answer, in its log records
(LOG_FORMAT=json: one JSON object per line), in the Celery tasks it queues and in their outbound
calls' records; each money event is logged exactly once with its ids."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from celery.signals import before_task_publish, task_postrun, task_prerun
from django.conf import settings as django_settings
from pythonjsonlogger.json import JsonFormatter
from x402.http.utils import decode_payment_required_header
from x402.schemas import SettleResponse, VerifyResponse

from a2a_service.core import http
from a2a_service.core.requestlog import Context, RequestIdFilter, context_enter, context_exit
from billing.credits import deposit_settle
from billing.models import Deposit, LedgerEntry, Payment
from billing.x402.facilitator_client import Settlement, SettleOutcome
from tests.support import ROOT
from tests.support.payments import BRIEF_PRICE, funded, publish_brief, signed_header
from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import register_wallet
from webhooks.models import WebhookDelivery
from webhooks.services import event_publish
from webhooks.tasks import deliver

BRIEF = "/api/a2a/x402/morning-brief"


@pytest.fixture
def json_log():
    """The service's JSON log lines (settings LOGGING's json formatter and request id filter), as
    parsed objects: each line must be one JSON object."""
    stream = io.StringIO()
    config = django_settings.LOGGING["formatters"]["json"]
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(config["fmt"], rename_fields=config["rename_fields"]))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.INFO)

    def lines() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    yield lines
    root.removeHandler(handler)
    root.setLevel(level)


def money(caplog, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "a2a.money" and getattr(r, "money_event", None) == event]


# --- the id -------------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize(
    "sent,kept",
    [
        ("agent-7f3a.run:42_x", True),
        ("a" * 128, True),
        ("a" * 129, False),  # too long
        ("has space", False),
        ("semi;colon", False),
        ("", False),
        ("é", False),
    ],
)
def test_a_sane_request_id_is_kept_else_a_new_one_is_made(api, sent, kept):
    resp = api.get("/api/a2a/no-such-operation", HTTP_X_REQUEST_ID=sent)
    assert resp.status_code == 404
    if kept:
        assert resp["X-Request-ID"] == sent
    else:
        assert re.fullmatch(r"[0-9a-f]{24}", resp["X-Request-ID"]), resp["X-Request-ID"]


@pytest.mark.django_db
def test_without_one_each_request_gets_its_own(api):
    ids = {api.get("/api/a2a/no-such-operation")["X-Request-ID"] for _ in range(3)}
    assert len(ids) == 3


@pytest.mark.django_db
def test_json_lines_of_a_request_carry_its_id(api, json_log):
    api.get("/api/a2a/no-such-operation", HTTP_X_REQUEST_ID="follow-me-1")
    api.get("/api/a2a/no-such-operation", HTTP_X_REQUEST_ID="someone-else")
    logging.getLogger("outside").info("not in a request")
    lines = json_log()
    (mine,) = [line for line in lines if line.get("request_id") == "follow-me-1"]
    assert mine["logger"] == "django.request" and mine["level"] == "INFO" and "Not Found" in mine["message"]
    assert {"time", "level", "logger", "message"} <= set(mine)
    (outside,) = [line for line in lines if line["logger"] == "outside"]
    assert "request_id" not in outside


def test_an_unknown_log_format_is_refused_at_start():
    env = {**os.environ, "LOG_FORMAT": "xml"}
    done = subprocess.run(
        [sys.executable, "-c", "import a2a_service.settings.test"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0 and "LOG_FORMAT must be plain or json, not 'xml'" in done.stderr


# --- money events, once each with their ids ------------------------------------------------------
@pytest.mark.django_db
def test_a_credit_call_logs_one_debit_with_its_ids(api, caplog, django_capture_on_commit_callbacks):
    caplog.set_level(logging.INFO, logger="a2a.money")
    publish_brief()
    key, account = funded(1.0)
    with django_capture_on_commit_callbacks(execute=True):
        resp = api.get(BRIEF, HTTP_X_API_KEY=key, HTTP_X_REQUEST_ID="credit-call-1")
    assert resp.status_code == 200 and resp["X-Request-ID"] == "credit-call-1"
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.SKU_CALL)
    (debit,) = money(caplog, "debit")
    assert (debit.ledger_entry_id, debit.account_id, debit.amount_atomic) == (entry.id, account.id, BRIEF_PRICE)
    assert debit.request_id == "credit-call-1"
    assert [r.money_event for r in caplog.records if r.name == "a2a.money"] == ["debit"]


@pytest.mark.django_db
def test_an_x402_payment_logs_one_claim_and_one_settle(api, caplog, monkeypatch, django_capture_on_commit_callbacks):
    """The proof is the official client's; the facilitator's answer is made up (no chain here)."""
    caplog.set_level(logging.INFO, logger="a2a.money")
    publish_brief()
    tx = "0x" + "ab" * 32

    def settled(proof):
        return SettleOutcome(
            Settlement.SETTLED, SettleResponse(success=True, transaction=tx, network="eip155:8453", payer=proof.payer)
        )

    monkeypatch.setattr("billing.rails.x402.facilitator_settle", settled)
    monkeypatch.setattr(
        "billing.rails.x402.facilitator_verify", lambda proof: VerifyResponse(is_valid=True, payer=proof.payer)
    )
    required = decode_payment_required_header(api.get(BRIEF)["PAYMENT-REQUIRED"])
    with django_capture_on_commit_callbacks(execute=True):
        resp = api.get(BRIEF, HTTP_PAYMENT_SIGNATURE=signed_header(required), HTTP_X_REQUEST_ID="x402-call-1")
    assert resp.status_code == 200, resp.content
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED
    events = [r for r in caplog.records if r.name == "a2a.money"]
    assert [r.money_event for r in events] == ["claim", "settle"]
    for record in events:
        assert (record.payment_id, record.nonce, record.payer) == (payment.id, payment.nonce, payment.payer)
        assert record.amount_atomic == BRIEF_PRICE and record.request_id == "x402-call-1"
    assert events[1].tx_hash == tx


@pytest.mark.django_db
def test_a_refused_x402_call_claims_and_logs_nothing(api, caplog):
    caplog.set_level(logging.INFO, logger="a2a.money")
    publish_brief()
    bad = base64.b64encode(b'{"x402Version": 2}').decode()
    assert api.get(BRIEF, HTTP_PAYMENT_SIGNATURE=bad).status_code == 402
    assert [r for r in caplog.records if r.name == "a2a.money"] == []


@pytest.mark.django_db
def test_a_dead_lettered_webhook_logs_one_refund(api, receiver, caplog, monkeypatch, django_capture_on_commit_callbacks):
    from billing.credits import credit_add
    from billing.models import Account
    from webhooks import services

    caplog.set_level(logging.INFO, logger="a2a.money")
    monkeypatch.setattr(services, "_enqueue", lambda delivery_id, countdown=0: None)
    subscribe(api, receiver, pack=False)
    account = Account.objects.get()
    credit_add(account_id=account.id, amount_atomic=50_000, kind="adjustment", reason="test")
    with django_capture_on_commit_callbacks(execute=True):
        event_publish(kind="copy_signal", payload={"n": 1})
        delivery = WebhookDelivery.objects.get()
        price = delivery.charged_atomic
        receiver.statuses = [(410, {})]
        assert run_until_settled(delivery).state == "dead"
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.REFUND)
    (refund,) = money(caplog, "refund")
    assert (refund.ledger_entry_id, refund.account_id, refund.amount_atomic) == (entry.id, account.id, price)
    assert len(money(caplog, "debit")) == 1


@pytest.mark.django_db
def test_a_deposit_credit_logs_one_deposit_with_its_ids(caplog, django_capture_on_commit_callbacks):
    caplog.set_level(logging.INFO, logger="a2a.money")
    reg = register_wallet()
    deposit = Deposit.objects.create(
        tx_hash="0x" + "c" * 64,
        log_index=3,
        tx_log_index=0,
        block_number=7,
        block_hash="0x" + "f" * 64,
        from_address=reg.account.wallet_address,
        amount_atomic=2_000_000,
        state=Deposit.State.PENDING,
    )
    with django_capture_on_commit_callbacks(execute=True):
        deposit_settle(deposit_id=deposit.id)
        deposit_settle(deposit_id=deposit.id)  # a second scan: credited once, logged once
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.DEPOSIT)
    (record,) = money(caplog, "deposit")
    assert (record.deposit_id, record.ledger_entry_id, record.account_id) == (deposit.id, entry.id, reg.account.id)
    assert record.amount_atomic == 2_000_000 and record.tx_hash == deposit.tx_hash


# --- into Celery tasks and outbound calls ---------------------------------------------------------
@pytest.mark.django_db
def test_a_task_runs_in_the_context_of_the_request_that_queued_it(caplog, monkeypatch):
    """The signals in process: the message a request publishes carries its id; the worker's task
    runs with it (its records and its outbound calls' records say so); then the context ends."""
    caplog.set_level(logging.INFO)
    headers: dict = {"id": "task-1", "task": "webhooks.tasks.deliver"}
    token = context_enter(Context(request_id="req-42"))
    try:
        before_task_publish.send(sender="webhooks.tasks.deliver", headers=headers, body=((1,), {}, {}))
    finally:
        context_exit(token)
    assert headers["a2a_request_id"] == "req-42"
    queued = [r for r in caplog.records if r.getMessage().startswith("queued task webhooks.tasks.deliver task-1")]
    assert len(queued) == 1 and queued[0].request_id == "req-42"

    class Answer:
        status_code = 204

    monkeypatch.setattr(http, "_outbound", lambda *a, **k: Answer())
    task = deliver._get_current_object()
    task.push_request(id="task-1", a2a_request_id=headers["a2a_request_id"])
    caplog.clear()
    try:
        task_prerun.send(sender=task, task_id="task-1", task=task, args=(1,), kwargs={})
        http.outbound_request("POST", "https://hooks.example.com/in?token=secret", data=b"{}")
        task_postrun.send(sender=task, task_id="task-1", task=task, args=(1,), kwargs={}, retval=None)
        http.outbound_request("GET", "https://example.com/after")
    finally:
        task.pop_request()
    first, after = [r for r in caplog.records if r.name == "a2a_service.core.http"]
    assert first.getMessage().startswith("outbound POST https://hooks.example.com/in 204 in ")
    assert "secret" not in first.getMessage()
    assert (first.request_id, first.task, first.task_id) == ("req-42", "webhooks.tasks.deliver", "task-1")
    assert not hasattr(after, "request_id")  # the task's context ended with it


def test_a_message_sent_outside_any_request_starts_its_own_chain():
    headers: dict = {"id": "beat-1"}
    before_task_publish.send(sender="billing.tasks.scan_deposits", headers=headers, body=((), {}, {}))
    assert re.fullmatch(r"[0-9a-f]{24}", headers["a2a_request_id"])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_request_its_task_on_a_real_worker_and_the_outbound_call_share_one_id(
    api, receiver, settings, tmp_path, json_log
):
    """A test event asked for over HTTP with X-Request-ID: the answer carries the id, the request's
    JSON lines carry it, and the Celery worker (LOG_FORMAT=json) that delivers the event logs its
    task and its outbound POST to the receiver with the same id."""
    if not settings.REDIS_URL:
        pytest.skip("needs Redis as the broker (CI sets REDIS_URL)")
    from tests.support.workers import start_celery_worker, stop_process

    queue = "request-id-test"
    settings.WEBHOOK_DELIVERY_QUEUE = queue
    log = tmp_path / "worker.log"
    worker = start_celery_worker(
        queue,
        log_path=log,
        loglevel="INFO",
        LOG_FORMAT="json",
        WEBHOOK_DELIVERY_QUEUE=queue,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS="true",
    )
    try:
        key, sub = subscribe(api, receiver)
        resp = api.post(
            f"/api/a2a/account/webhooks/{sub['id']}/test", HTTP_X_API_KEY=key, HTTP_X_REQUEST_ID="follow-me-2"
        )
        assert resp.status_code in (200, 202), resp.content
        assert resp["X-Request-ID"] == "follow-me-2"
        deadline = time.monotonic() + 90
        while not receiver.received and time.monotonic() < deadline:
            assert worker.poll() is None, log.read_text()
            time.sleep(0.2)
        assert receiver.received, log.read_text()
        time.sleep(1)  # the worker logs the attempt after the receiver answered
    finally:
        stop_process(worker)
    mine = [line for line in json_log() if line.get("request_id") == "follow-me-2"]
    assert any(line["message"].startswith("queued task webhooks.tasks.deliver") for line in mine), mine
    # Log records are JSON lines (the worker's banner and Python's warnings are printed as text).
    lines = [json.loads(text) for text in log.read_text().splitlines() if text.startswith("{")]
    assert any(line["logger"].startswith("celery") for line in lines)  # Celery's own records too
    followed = [line for line in lines if line.get("request_id") == "follow-me-2"]
    outbound = [line for line in followed if line["logger"] == "a2a_service.core.http"]
    assert len(outbound) == 1 and outbound[0]["message"].startswith(f"outbound POST {receiver.url} 200 in ")
    assert outbound[0]["task"] == "webhooks.tasks.deliver" and outbound[0]["task_id"]
    assert WebhookDelivery.objects.get().state == "delivered"


# --- a real server ----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    """(status, headers (case-insensitive), body)."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def _processes_that_served(metrics_dir: Path) -> int:
    """How many processes' files in the multiprocess directory hold request observations."""
    from prometheus_client.mmap_dict import MmapedDict

    return sum(
        any("a2a_http_request_duration_seconds" in key for key, *_ in MmapedDict.read_all_values_from_file(str(f)))
        for f in metrics_dir.glob("histogram_*.db")
    )


@pytest.mark.slow
def test_granian_with_two_workers_logs_json_lines_and_adds_up_its_workers_metrics(tmp_path):
    """The production way: granian, 2 workers, LOG_FORMAT=json, one PROMETHEUS_MULTIPROC_DIR.
    Every line the service logs is one JSON object (granian's own lines are granian's); a
    request's carries its X-Request-ID; the scrape counts every request whichever worker served it."""
    port = _free_port()
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="a2a_service.settings.local",
        DJANGO_DEBUG="false",
        A2A_RUN_DIR=str(tmp_path),
        PYTHONUNBUFFERED="1",
        LOG_FORMAT="json",
        METRICS_TOKEN="granian-test-token",
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
    )
    out = tmp_path / "granian.log"
    base = f"http://127.0.0.1:{port}"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "granian"), "--interface", "wsgi", "--host", "127.0.0.1",
             "--port", str(port), "--workers", "2", "a2a_service.wsgi:application"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    _get(base + "/api/a2a/no-such-operation-0", {})
                    break
                except OSError:
                    assert proc.poll() is None, out.read_text()
                    assert time.monotonic() < deadline, out.read_text()
                    time.sleep(0.3)
            status, headers, _ = _get(base + "/api/a2a/no-such-operation-1", {"X-Request-ID": "granian-follow-1"})
            assert status == 404 and headers.get("X-Request-ID") == "granian-follow-1"
            sent = 2
            # Until both workers have served requests (each adds them to its own file every second).
            while _processes_that_served(metrics_dir) < 2 and sent < 2000:
                _get(base + f"/api/a2a/no-such-operation-{sent}", {})
                sent += 1
            assert _processes_that_served(metrics_dir) == 2, "one worker served every request"
            assert _get(base + "/internal/metrics", {})[0] == 404  # no token: a 404 like the others
            expected = sent + 1
            # Each worker adds its requests to the shared directory every second: scrape until all are in.
            deadline = time.monotonic() + 30
            while True:
                status, _, body = _get(base + "/internal/metrics", {"Authorization": "Bearer granian-test-token"})
                assert status == 200
                count = re.search(
                    r'^a2a_http_request_duration_seconds_count\{layer="django",method="GET",'
                    r'route="<unresolved>",status="404"\} (\S+)$',
                    body.decode(),
                    re.M,
                )
                seen = float(count.group(1)) if count else 0.0
                assert seen <= expected
                if seen == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
            assert seen == expected, f"{seen} of the {expected} requests in the scrape"
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    lines = [line for line in out.read_text().splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    (followed,) = [r for r in records if r.get("request_id") == "granian-follow-1"]
    assert followed["logger"] == "django.request" and "no-such-operation-1" in followed["message"]
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
