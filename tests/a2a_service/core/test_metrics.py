"""The Prometheus metrics (a2a_service/core/metrics.py): each moves when its event happens, the
endpoint answers only its token, the figures of several processes add up, and every metric the
dashboard and the alert rules use is in a scrape."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import timedelta

import pytest
import yaml
from celery import shared_task
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from prometheus_client import REGISTRY
from werkzeug.test import Client

from a2a_service.core import metrics
from a2a_service.core.redisconn import redis_client
from a2a_service.wsgi import application
from billing.credits import deposit_settle
from billing.models import Deposit, LedgerEntry
from catalog.feeds import registry
from catalog.feeds.registry import FeedPass, FeedSource
from catalog.feeds.runner import feed_run
from tests.support import ROOT
from tests.support.payments import BASE, BRIEF_PRICE, funded, publish_brief
from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import register_wallet
from webhooks.models import WebhookDelivery
from webhooks.services import event_publish

OPERATIONS = ROOT / "docs" / "operations"
TOKEN = "metrics-test-token-0123456789"
pytestmark = pytest.mark.django_db


def value(name: str, **labels: str) -> float:
    metrics.REQUESTS.flush()  # the request histogram is buffered per process (added every second)
    return REGISTRY.get_sample_value(name, labels) or 0.0


class Moves:
    """The change of a set of samples across a block of code."""

    def __init__(self, *samples: tuple[str, dict[str, str]]) -> None:
        self.samples = samples

    def __enter__(self) -> Moves:
        self.before = [value(name, **labels) for name, labels in self.samples]
        return self

    def __exit__(self, *exc: object) -> None:
        self.delta = [value(name, **labels) - b for (name, labels), b in zip(self.samples, self.before, strict=True)]


@pytest.fixture
def keep_connection():
    """Requests (and scrapes) made in the test keep the test transaction's connection open."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def wsgi(keep_connection):
    """The whole WSGI application (fast paths, the metrics endpoint, Django)."""
    return Client(application)


def scrape(wsgi) -> str:
    resp = wsgi.get("/internal/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status_code == 200, resp.data
    return resp.get_data(as_text=True)


# --- the endpoint -----------------------------------------------------------------------------
def test_the_endpoint_is_not_public_without_its_token(wsgi, settings):
    unknown = wsgi.get("/internal/no-such-thing")
    assert unknown.status_code == 404
    settings.METRICS_TOKEN = ""
    for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer anything"}):
        resp = wsgi.get("/internal/metrics", headers=headers)
        # As any unknown path: Django's 404.
        assert resp.status_code == 404, headers
        assert json.loads(resp.data) == {**json.loads(unknown.data), "path": "/internal/metrics"}
    settings.METRICS_TOKEN = TOKEN
    for headers in ({}, {"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": TOKEN}, {"X-Token": TOKEN}):
        assert wsgi.get("/internal/metrics", headers=headers).status_code == 404, headers
    assert wsgi.post("/internal/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
    text = scrape(wsgi)
    assert "# TYPE a2a_paid_calls_total counter" in text and "a2a_celery_queue_depth" in text
    # The scrape itself is one more request, labelled as what it is.
    assert value(
        "a2a_http_request_duration_seconds_count",
        route="/internal/metrics",
        method="GET",
        status="200",
        layer="internal",
    ) >= 1


def test_serve_metrics_answers_on_its_own_port_and_asks_for_the_token_when_there_is_one(settings, keep_connection):
    """`manage.py serve_metrics` (a node with Celery workers only) serves the same exposition."""
    from catalog.management.commands.serve_metrics import metrics_app

    client = Client(metrics_app)
    settings.METRICS_TOKEN = ""
    assert client.get("/nothing").status_code == 404
    resp = client.get("/metrics")
    assert resp.status_code == 200 and b"a2a_paid_calls_total" in resp.data
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_each_request_is_timed_by_route_status_and_layer(wsgi):
    labels = {"route": "/api/a2a/teaser/<str:name>", "method": "GET", "status": "404", "layer": "django"}
    unresolved = {"route": "<unresolved>", "method": "GET", "status": "404", "layer": "django"}
    with Moves(
        ("a2a_http_request_duration_seconds_count", labels),
        ("a2a_http_request_duration_seconds_count", unresolved),
    ) as moved:
        for name in ("no-such-a", "no-such-b"):  # two paths, one route: the label is the URL pattern
            resp = wsgi.get(f"/api/a2a/teaser/{name}")
            assert resp.status_code == 404 and resp.headers["X-Request-ID"]
        wsgi.get("/no/such/path")
    assert moved.delta == [2, 1]


def test_cache_hits_are_the_fast_layers_answers(wsgi, settings):
    if not settings.REDIS_URL:
        pytest.skip("the fast paths' caches need Redis (CI sets REDIS_URL)")
    from a2a_service.core.fastcache import FREE_LOCAL
    from billing.x402.fastpath import LOCAL

    for copy in (FREE_LOCAL, LOCAL):
        copy.ensure_started()
        assert copy._listening.wait(5)
        copy.clear()
    publish_brief()
    free = {"route": "/api/a2a/news/catalog", "method": "GET", "status": "200", "layer": "free_cache"}
    challenge = {"route": "/api/a2a/x402/morning-brief", "method": "GET", "status": "402", "layer": "challenge_cache"}
    with Moves(
        ("a2a_http_request_duration_seconds_count", free),
        ("a2a_http_request_duration_seconds_count", challenge),
    ) as moved:
        for path in ("/api/a2a/news/catalog", "/api/a2a/x402/morning-brief"):
            first = wsgi.get(path)  # Django renders and stores it
            ids = [wsgi.get(path).headers.getlist("X-Request-ID") for _ in range(3)]
            # Each stored answer carries its own request's id, once (never the renderer's).
            assert all(len(i) == 1 and i[0] != first.headers["X-Request-ID"] for i in ids), ids
    assert moved.delta == [3, 3]


# --- payments and money -------------------------------------------------------------------------
def test_a_credit_call_moves_the_debits_and_the_paid_calls(api, django_capture_on_commit_callbacks):
    publish_brief()
    key, _ = funded(1.0)
    with Moves(
        ("a2a_money_events_total", {"event": "debit"}),
        ("a2a_money_events_atomic_total", {"event": "debit"}),
        ("a2a_paid_calls_total", {"rail": "credits", "outcome": "served"}),
        ("a2a_paid_calls_total", {"rail": "credits", "outcome": "refused"}),
    ) as moved, django_capture_on_commit_callbacks(execute=True):
        assert api.get("/api/a2a/x402/morning-brief", HTTP_X_API_KEY=key).status_code == 200
    assert moved.delta == [1, BRIEF_PRICE, 1, 0]
    poor, _ = funded(0.01)
    with Moves(
        ("a2a_money_events_total", {"event": "debit"}),
        ("a2a_paid_calls_total", {"rail": "credits", "outcome": "refused"}),
    ) as moved, django_capture_on_commit_callbacks(execute=True):
        assert api.get("/api/a2a/x402/morning-brief", HTTP_X_API_KEY=poor).status_code == 402
    assert moved.delta == [0, 1]


def test_a_debit_rolled_back_with_a_failed_product_is_not_counted(django_capture_on_commit_callbacks):
    from a2a_service.core.errors import ProductUnavailable
    from billing.paid_call import paid_call
    from billing.rails.credits import CreditRail

    _, account = funded(1.0)  # no brief published: the product fails after the debit
    with Moves(
        ("a2a_money_events_total", {"event": "debit"}),
        ("a2a_paid_calls_total", {"rail": "credits", "outcome": "refunded"}),
    ) as moved, django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(ProductUnavailable):
            paid_call(product="morning_brief", base_url=BASE, payment=CreditRail(account=account, reference="t"))
    assert moved.delta == [0, 1]


def test_a_refused_proof_is_counted(api):
    with Moves(("a2a_paid_calls_total", {"rail": "x402", "outcome": "refused"})) as moved:
        publish_brief()
        resp = api.get("/api/a2a/x402/morning-brief", HTTP_PAYMENT_SIGNATURE="bm90IGEgcHJvb2Y=")
        assert resp.status_code == 402 and resp.json()["error"] == "invalid_payload"
    assert moved.delta == [1]


def test_x402_calls_settled_and_given_back_are_counted(api, monkeypatch, django_capture_on_commit_callbacks):
    """A proof signed by the official client; the facilitator is the test settings' unreachable
    one (verify fails after the claim: given back), then a made-up one that settles."""
    from x402.http.utils import decode_payment_required_header
    from x402.schemas import SettleResponse, VerifyResponse

    from billing.x402.facilitator_client import Settlement, SettleOutcome
    from tests.support.payments import signed_header

    publish_brief()
    required = decode_payment_required_header(api.get("/api/a2a/x402/morning-brief")["PAYMENT-REQUIRED"])
    samples = [
        ("a2a_paid_calls_total", {"rail": "x402", "outcome": "refunded"}),
        ("a2a_paid_calls_total", {"rail": "x402", "outcome": "served"}),
        ("a2a_money_events_total", {"event": "claim"}),
        ("a2a_money_events_total", {"event": "release"}),
        ("a2a_money_events_atomic_total", {"event": "settle"}),
        ("a2a_x402_settlement_duration_seconds_count", {"outcome": "settled"}),
    ]
    with Moves(*samples) as moved, django_capture_on_commit_callbacks(execute=True):
        header = signed_header(required)
        assert api.get("/api/a2a/x402/morning-brief", HTTP_PAYMENT_SIGNATURE=header).status_code == 503
        monkeypatch.setattr(
            "billing.rails.x402.facilitator_verify", lambda proof: VerifyResponse(is_valid=True, payer=proof.payer)
        )
        monkeypatch.setattr(
            "billing.rails.x402.facilitator_settle",
            lambda proof: SettleOutcome(
                Settlement.SETTLED,
                SettleResponse(success=True, transaction="0x" + "12" * 32, network="eip155:8453", payer=proof.payer),
            ),
        )
        assert api.get("/api/a2a/x402/morning-brief", HTTP_PAYMENT_SIGNATURE=header).status_code == 200
    assert moved.delta == [1, 1, 2, 1, BRIEF_PRICE, 1]


def test_a_deposit_credited_is_counted_with_its_amount(django_capture_on_commit_callbacks):
    reg = register_wallet()
    deposit = Deposit.objects.create(
        tx_hash="0x" + "d" * 64,
        log_index=0,
        tx_log_index=0,
        block_number=10,
        block_hash="0x" + "e" * 64,
        from_address=reg.account.wallet_address,
        amount_atomic=5_000_000,
        state=Deposit.State.PENDING,
    )
    with Moves(
        ("a2a_money_events_total", {"event": "deposit"}),
        ("a2a_money_events_atomic_total", {"event": "deposit"}),
    ) as moved, django_capture_on_commit_callbacks(execute=True):
        assert deposit_settle(deposit_id=deposit.id).state == Deposit.State.CREDITED
        deposit_settle(deposit_id=deposit.id)  # again: credited once, told once
    assert moved.delta == [1, 5_000_000]


def test_a_deposit_waiting_for_its_confirmations_has_an_age_when_scraped(wsgi, settings):
    settings.METRICS_TOKEN = TOKEN
    Deposit.objects.create(
        tx_hash="0x" + "a" * 64,
        log_index=0,
        tx_log_index=0,
        block_number=10,
        block_hash="0x" + "b" * 64,
        from_address="0x" + "1" * 40,
        amount_atomic=1,
        state=Deposit.State.PENDING,
    )
    Deposit.objects.update(seen_at=timezone.now() - timedelta(minutes=20))
    text = scrape(wsgi)
    age = float(re.search(r"^a2a_deposits_pending_oldest_age_seconds ([0-9.e+]+)$", text, re.M).group(1))
    assert 20 * 60 <= age < 30 * 60
    assert 'a2a_deposits{state="pending_confirmations"} 1.0' in text
    assert 'a2a_scrape_collector_up{collector="billing"} 1.0' in text


# --- webhooks -----------------------------------------------------------------------------------
def test_webhook_attempts_successes_and_dead_letters(api, receiver, queued, django_capture_on_commit_callbacks):
    from billing.credits import credit_add
    from billing.models import Account

    subscribe(api, receiver, pack=False)
    account = Account.objects.get()
    credit_add(account_id=account.id, amount_atomic=100_000, kind="adjustment", reason="test")
    samples = [
        ("a2a_webhook_attempts_total", {"result": "delivered"}),
        ("a2a_webhook_attempts_total", {"result": "retry"}),
        ("a2a_webhook_attempts_total", {"result": "dead"}),
        ("a2a_webhook_dead_letters_total", {}),
        ("a2a_webhook_attempt_duration_seconds_count", {}),
        ("a2a_webhook_delivery_delay_seconds_count", {}),
        ("a2a_money_events_total", {"event": "refund"}),
        ("a2a_money_events_atomic_total", {"event": "refund"}),
    ]
    with Moves(*samples) as moved, django_capture_on_commit_callbacks(execute=True):
        receiver.statuses = [(500, {})]  # one retry, then delivered
        event_publish(kind="copy_signal", payload={"n": 1})
        assert run_until_settled(WebhookDelivery.objects.get()).state == "delivered"
        receiver.statuses = [(410, {})]  # gone: dead-lettered, its charge refunded
        event_publish(kind="copy_signal", payload={"n": 2})
        charged = WebhookDelivery.objects.get(state="pending")
        price = charged.charged_atomic
        assert price > 0
        assert run_until_settled(charged).state == "dead"
    assert moved.delta == [1, 1, 1, 1, 3, 1, 1, price]


@pytest.fixture
def queued(monkeypatch):
    from webhooks import services

    monkeypatch.setattr(services, "_enqueue", lambda delivery_id, countdown=0: None)


# --- feeds, tasks, queues -----------------------------------------------------------------------
@pytest.fixture
def source():
    made: list[str] = []

    def register(name: str, run) -> FeedSource:
        made.append(name)
        return registry.feed_register(FeedSource(name=name, run=run, interval_seconds=120))

    yield register
    for name in made:
        registry._SOURCES.pop(name, None)


def test_a_feed_pass_moves_its_source_counters_and_its_age_is_scraped(source, wsgi, settings):
    settings.METRICS_TOKEN = TOKEN
    source("metrics_ok", lambda fp: 7)

    def broken(fp: FeedPass) -> int:
        raise ValueError("the source answered garbage")

    source("metrics_broken", broken)
    with Moves(
        ("a2a_feed_passes_total", {"source": "metrics_ok", "outcome": "ok"}),
        ("a2a_feed_rows_total", {"source": "metrics_ok"}),
        ("a2a_feed_passes_total", {"source": "metrics_broken", "outcome": "failed"}),
    ) as moved:
        feed_run(name="metrics_ok", force=True)
        feed_run(name="metrics_broken", force=True)
    assert moved.delta == [1, 7, 1]
    text = scrape(wsgi)
    age = float(re.search(r'^a2a_feed_last_success_age_seconds\{source="metrics_ok"\} (\S+)$', text, re.M).group(1))
    assert 0 <= age < 60
    assert 'a2a_feed_last_success_age_seconds{source="metrics_broken"} +Inf' in text
    assert 'a2a_feed_interval_seconds{source="metrics_ok"} 120.0' in text
    assert 'a2a_feed_consecutive_failures{source="metrics_broken"} 1.0' in text


@shared_task(name="tests.metrics.explode", ignore_result=True)
def explode() -> None:
    raise RuntimeError("a task that fails")


def test_a_task_failure_is_counted(monkeypatch):
    from celery.backends.base import DisabledBackend

    task = explode._get_current_object()
    monkeypatch.setattr(task, "_backend", DisabledBackend(task.app))  # no result store in tests
    with Moves(("a2a_celery_task_failures_total", {"task": "tests.metrics.explode"})) as moved:
        assert explode.apply().failed()
    assert moved.delta == [1]


def test_queue_depth_is_read_from_the_redis_broker(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs the Redis broker (CI sets REDIS_URL)")
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    settings.METRICS_CELERY_QUEUES = ["a2a-metrics-test", "a2a-metrics-empty"]
    client = redis_client()
    client.delete("a2a-metrics-test", "a2a-metrics-test\x06\x163")
    try:
        client.lpush("a2a-metrics-test", b"m1", b"m2", b"m3")
        client.lpush("a2a-metrics-test\x06\x163", b"m4")  # a message of priority 3
        assert metrics.celery_queue_depths() == {"a2a-metrics-test": 4, "a2a-metrics-empty": 0}
    finally:
        client.delete("a2a-metrics-test", "a2a-metrics-test\x06\x163")


def test_queue_depth_counts_the_filesystem_brokers_messages(settings, tmp_path):
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": str(tmp_path)}
    settings.METRICS_CELERY_QUEUES = ["celery", "webhooks"]
    for n, queue in enumerate(["celery", "celery", "webhooks", "other"]):
        (tmp_path / f"{1000 + n}_{n:032x}.{queue}.msg").write_bytes(b"{}")
    assert metrics.celery_queue_depths() == {"celery": 2, "webhooks": 1}


def test_buffered_observations_land_in_the_buckets_a_direct_one_would():
    from prometheus_client import CollectorRegistry, Histogram

    registry = CollectorRegistry()
    direct = Histogram("direct_seconds", "d", ["k"], buckets=metrics.LATENCY_BUCKETS, registry=registry)
    buffered_metric = Histogram("buffered_seconds", "b", ["k"], buckets=metrics.LATENCY_BUCKETS, registry=registry)
    buffered = metrics.BufferedHistogram(buffered_metric, metrics.LATENCY_BUCKETS)
    amounts = [0.0001, 0.0005, 0.00051, 0.001, 0.3, 29.9, 30.0, 31.0, 1000.0]
    for amount in amounts:
        direct.labels("a").observe(amount)
        buffered.observe(("a",), amount)
    buffered.flush()
    buffered.flush()  # nothing twice
    for le in [*map(str, metrics.LATENCY_BUCKETS), "+Inf"]:
        assert registry.get_sample_value("buffered_seconds_bucket", {"k": "a", "le": le}) == registry.get_sample_value(
            "direct_seconds_bucket", {"k": "a", "le": le}
        ), le
    assert registry.get_sample_value("buffered_seconds_count", {"k": "a"}) == len(amounts)
    assert registry.get_sample_value("buffered_seconds_sum", {"k": "a"}) == pytest.approx(sum(amounts))


# --- several processes ---------------------------------------------------------------------------
WRITER = """
import sys
from a2a_service.core import metrics
metrics.PAID_CALLS.labels("credits", "served").inc(int(sys.argv[1]))
metrics.MONEY_EVENT_ATOMIC.labels("debit").inc(int(sys.argv[2]))
metrics.HTTP_REQUEST_SECONDS.labels("/api/a2a/x402/morning-brief", "GET", "402", "challenge_cache").observe(0.0004)
"""


def test_several_processes_add_up_in_one_scrape(tmp_path):
    """Two processes (as granian's workers or Celery's pool) write to one PROMETHEUS_MULTIPROC_DIR;
    a scrape adds their samples up."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for served, atomic in ((3, 10_000), (4, 25_000)):
        subprocess.run([sys.executable, "-c", WRITER, str(served), str(atomic)], cwd=ROOT, env=env, check=True)
    assert len(list(tmp_path.glob("counter_*.db"))) == 2  # one file per process
    text = metrics.metrics_text(multiproc_dir=str(tmp_path)).decode()
    assert 'a2a_paid_calls_total{outcome="served",rail="credits"} 7.0' in text
    assert 'a2a_money_events_atomic_total{event="debit"} 35000.0' in text
    bucket = re.search(
        r'^a2a_http_request_duration_seconds_bucket\{layer="challenge_cache",le="0\.0005",method="GET",'
        r'route="/api/a2a/x402/morning-brief",status="402"\} (\S+)$',
        text,
        re.M,
    )
    assert bucket is not None and float(bucket.group(1)) == 2.0


def test_make_run_empties_its_metrics_directory_before_starting(tmp_path):
    from a2a_service.scripts.devstack import metrics_dir_fresh

    folder = tmp_path / "metrics"
    folder.mkdir()
    (folder / "counter_123.db").write_bytes(b"old")
    (folder / "notes.txt").write_text("not ours")
    env = {"PROMETHEUS_MULTIPROC_DIR": str(folder)}
    assert metrics_dir_fresh(env) == folder
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


# --- the dashboard and the alert rules use metrics that exist ------------------------------------
def expressions() -> list[str]:
    """Every PromQL expression of the alert rules and of the dashboard's panels."""
    rules = yaml.safe_load((OPERATIONS / "alerts.yml").read_text())
    dashboard = json.loads((OPERATIONS / "grafana-dashboard.json").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    exprs += [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    return exprs


def referenced_metrics() -> set[str]:
    return {name for expr in expressions() for name in re.findall(r"\ba2a_[a-z0-9_]+", expr)}


def test_every_metric_the_dashboard_and_the_rules_use_is_in_a_scrape(wsgi, settings):
    settings.METRICS_TOKEN = TOKEN
    text = scrape(wsgi)
    families = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    exported = families | {f"{family}_total" for family in families}
    exported |= {f"{family}{suffix}" for family in families for suffix in ("_bucket", "_count", "_sum")}
    used = referenced_metrics()
    assert len(used) >= 15
    assert sorted(used - exported) == []


# --- the credit fast path (in front of Django, PostgreSQL) ----------------------------------------
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_credit_call_served_in_front_of_django_moves_the_same_metrics(settings, caplog):
    if not settings.REDIS_URL:
        pytest.skip("the credit fast path needs Redis (CI sets REDIS_URL)")
    from django.db import connections

    from catalog.services import catalog_seed

    caplog.set_level("INFO", logger="a2a.money")
    catalog_seed()
    key, account = funded(1.0)
    status = "/api/a2a/x402/payments/dual-rail-status"
    fast = {"route": status, "method": "GET", "status": "200", "layer": "credit_fast"}
    try:
        with Moves(
            ("a2a_money_events_total", {"event": "debit"}),
            ("a2a_money_events_atomic_total", {"event": "debit"}),
            ("a2a_paid_calls_total", {"rail": "credits", "outcome": "served"}),
            ("a2a_http_request_duration_seconds_count", fast),
        ) as moved:
            resp = Client(application).get(status, headers={"X-API-Key": key, "X-Request-ID": "fast-1"})
            assert resp.status_code == 200 and resp.headers["X-Request-ID"] == "fast-1"
    finally:
        connections.close_all()
    entry = LedgerEntry.objects.get(kind=LedgerEntry.Kind.SKU_CALL)
    assert moved.delta == [1, -entry.amount_atomic, 1, 1]
    (debit,) = [r for r in caplog.records if getattr(r, "money_event", None) == "debit"]
    assert (debit.ledger_entry_id, debit.account_id) == (entry.id, account.id)
    assert debit.amount_atomic == -entry.amount_atomic and debit.request_id == "fast-1"
