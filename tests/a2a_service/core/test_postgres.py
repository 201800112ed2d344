"""PostgreSQL behaviour: concurrent counters and a real Celery worker on the shared database."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from django.db import connections
from django.utils import timezone

from catalog.counters import counter_add_to_db, counter_increment, counters_flush, counters_pending
from catalog.models import DailyCounter, WorkerHeartbeat
from tests.support.concurrency import at_once
from tests.support.workers import start_celery_worker

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_concurrent_counter_increments_lose_nothing():
    """The database path (no Redis): concurrent first hits race to create the row."""
    threads, per_thread = 8, 25
    today = timezone.now().date()

    def work() -> None:
        for _ in range(per_thread):
            counter_add_to_db(metric="hit", key="race", day=today, by=1)

    at_once(threads, work)  # a thread's exception fails the test
    row = DailyCounter.objects.get(day=timezone.now().date(), metric="hit", key="race")
    assert row.count == threads * per_thread


def test_a_real_celery_worker_runs_the_heartbeat_task():
    """The heartbeat in program/health is written by a worker process, through the broker."""
    from a2a_service.celery import app

    worker = start_celery_worker("heartbeat-test")
    try:
        app.send_task("catalog.tasks.worker_heartbeat", queue="heartbeat-test")
        deadline = time.monotonic() + 60
        while (
            time.monotonic() < deadline and not WorkerHeartbeat.objects.filter(name="celery-worker").exists()
        ):
            time.sleep(0.3)
        assert WorkerHeartbeat.objects.filter(name="celery-worker").exists()
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def test_redis_counters_flush_into_rows_without_losing_hits(settings):
    """The Redis path: hits land in Redis, a flush moves them to rows, later hits stay."""
    if not settings.REDIS_URL:
        pytest.skip("needs Redis (CI sets REDIS_URL)")
    today = timezone.now().date()
    for _ in range(5):
        counter_increment(metric="challenge", key="sentiment")
    assert counters_pending(since=today) == {"challenge": 5}
    assert counters_flush() == 5
    counter_increment(metric="challenge", key="sentiment")
    assert counters_pending(since=today) == {"challenge": 1}
    assert DailyCounter.objects.get(day=today, metric="challenge", key="sentiment").count == 5
    counters_flush()
    assert DailyCounter.objects.get(day=today, metric="challenge", key="sentiment").count == 6


def test_100_concurrent_debits_against_a_balance_for_10_never_go_negative():
    from concurrent.futures import ThreadPoolExecutor

    from billing.credits import InsufficientCredit, credit_add, credit_debit, ledger_audit
    from billing.models import Account, LedgerEntry
    from catalog.services import catalog_seed
    from tests.support.wallets import register_wallet

    catalog_seed()
    account = register_wallet().account
    credit_add(
        account_id=account.id, amount_atomic=10 * 40_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )

    def debit(_: int) -> bool:
        from django.db import transaction

        try:
            with transaction.atomic():
                credit_debit(account_id=account.id, amount_atomic=40_000, sku_id=None, reference="race")
            return True
        except InsufficientCredit:
            return False
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(debit, range(100)))
    assert results.count(True) == 10
    account.refresh_from_db()
    assert account.credit_balance_atomic == 0
    assert LedgerEntry.objects.filter(kind="sku_call").count() == 10 and ledger_audit() == []
    assert not Account.objects.filter(credit_balance_atomic__lt=0).exists()


def test_two_concurrent_passes_of_one_feed_source_run_once():
    """Two workers start the same source at once: one claims the FeedState row, the other is
    skipped while the first runs (the lock is a committed conditional UPDATE)."""
    from catalog.feeds import registry
    from catalog.feeds.registry import FeedSource
    from catalog.feeds.runner import feed_run

    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def run(fp) -> int:
        runs.append(1)
        started.set()
        release.wait(10)
        return 1

    registry.feed_register(FeedSource(name="t-concurrent", run=run))
    outcomes: dict[str, str] = {}

    def first() -> None:
        try:
            outcomes["first"] = feed_run(name="t-concurrent", mode="live").outcome
        finally:
            connections.close_all()

    try:
        thread = threading.Thread(target=first)
        thread.start()
        assert started.wait(10)
        outcomes["second"] = feed_run(name="t-concurrent", mode="live").outcome
        release.set()
        thread.join(10)
    finally:
        release.set()
        registry._SOURCES.pop("t-concurrent", None)
    assert outcomes == {"first": "ok", "second": "running"} and runs == [1]
