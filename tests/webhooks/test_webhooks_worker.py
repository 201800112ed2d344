"""Webhook delivery by a real Celery worker (PostgreSQL + Redis): retries through the broker,
and a worker killed in the middle of a delivery loses nothing."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from tests.support.receivers import DrippingServer
from tests.support.wallets import register_wallet
from tests.support.workers import start_celery_worker, stop_process
from webhooks.models import DeliveryAttempt, PushEntitlement, WebhookDelivery
from webhooks.services import deliveries_sweep, event_publish, subscription_create

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
QUEUE = "webhooks-worker-test"


class Receiver:
    def __init__(self, plan: list[tuple[int, float]]):
        self.plan, self.got, self.secret = plan, [], ""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                Webhook(outer.secret).verify(body, dict(self.headers.items()))  # raises if not signed by us
                status, delay = outer.plan.pop(0) if outer.plan else (200, 0)
                outer.got.append((self.headers["webhook-id"], status))
                time.sleep(delay)
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


def start_worker():
    return start_celery_worker(
        QUEUE,
        WEBHOOK_TIMEOUT_SECONDS="1",
        WEBHOOK_ATTEMPT_DEADLINE_SECONDS="2",
        WEBHOOK_DELIVERY_QUEUE=QUEUE,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS="true",  # the receiver is on loopback
    )


def wait_for(predicate, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def setup(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs Redis as the broker (CI sets REDIS_URL)")
    from catalog.services import catalog_seed

    catalog_seed()
    settings.WEBHOOK_DELIVERY_QUEUE = QUEUE
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    reg = register_wallet()
    PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=1))
    return reg.account


def test_a_real_worker_retries_until_the_receiver_takes_it(setup):
    receiver = Receiver([(503, 0)])
    receiver.secret = subscription_create(account=setup, url=receiver.url, events=["copy_signal"]).secret
    worker = start_worker()
    try:
        event_publish(kind="copy_signal", payload={"n": 1})
        assert wait_for(lambda: WebhookDelivery.objects.filter(state="delivered").exists())
    finally:
        stop_process(worker)
    assert [s for _, s in receiver.got] == [503, 200] and len({i for i, _ in receiver.got}) == 1


def test_a_worker_killed_mid_delivery_loses_nothing(setup):
    receiver = Receiver([(200, 5.0)])  # the first request hangs: the worker is killed meanwhile
    receiver.secret = subscription_create(account=setup, url=receiver.url, events=["copy_signal"]).secret
    worker = start_worker()
    event_publish(kind="copy_signal", payload={"n": 1})
    assert wait_for(lambda: len(receiver.got) == 1, 120)  # the worker's start takes seconds when loaded
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=20)
    delivery = WebhookDelivery.objects.get()
    assert delivery.state == "delivering"  # claimed, never finished
    worker = start_worker()
    try:
        # After the lease (2 x the 2 s deadline + 5 s) the sweeper (beat, here called directly)
        # queues it again.
        assert wait_for(
            lambda: deliveries_sweep() > 0 or WebhookDelivery.objects.filter(state="delivered").exists(), 30
        )
        assert wait_for(lambda: WebhookDelivery.objects.filter(state="delivered").exists(), 60)
    finally:
        stop_process(worker)
    assert len({i for i, _ in receiver.got}) == 1 and len(receiver.got) == 2  # at least once, same webhook-id


def test_a_dripping_receiver_holds_a_real_worker_only_until_the_attempt_deadline(setup, settings):
    """Three events to a receiver that drips headers: the one solo worker cuts each attempt at
    its 2 s deadline and goes on to the next, instead of being held 20 s by each."""
    receiver = DrippingServer()
    subscription_create(account=setup, url=receiver.url, events=["copy_signal"])
    worker = start_worker()
    try:
        for n in range(3):
            event_publish(kind="copy_signal", payload={"n": n})
        # The window covers the worker's start, which takes seconds on a loaded machine; what is
        # measured is each attempt's own duration, recorded by the worker.
        assert wait_for(lambda: DeliveryAttempt.objects.count() >= 3, 120)
    finally:
        stop_process(worker)
        receiver.close()
    first_three = DeliveryAttempt.objects.order_by("attempted_at")[:3]
    # Each attempt was cut at its 2 s deadline: one dripping attempt alone would take 20 s.
    assert all(a.error.startswith("DeadlineExceeded") and 1900 < a.latency_ms < 10_000 for a in first_three)
    assert len(receiver.accepted) >= 3


def test_two_claimants_settling_410s_at_once_refund_once(setup):
    """The lease ran out under worker A and worker B claimed the delivery; both get 410 and
    settle at the same moment on PostgreSQL, ten times over: one refund each time."""
    from billing.credits import credit_add, ledger_audit
    from billing.models import Account, LedgerEntry
    from webhooks import services

    PushEntitlement.objects.filter(account=setup).delete()  # events are paid from credits
    credit_add(account_id=setup.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    receiver = Receiver([(410, 0.2)] * 20)  # both requests are answered together
    receiver.secret = subscription_create(account=setup, url=receiver.url, events=["copy_signal"]).secret
    for n in range(10):
        services.WebhookSubscription.objects.update(is_active=True, disabled_reason="")
        with_claims = []
        event_publish(kind="copy_signal", payload={"n": n})
        delivery = WebhookDelivery.objects.latest("id")
        assert delivery.charged_atomic == 10_000
        with_claims.append(services.delivery_claim(delivery_id=delivery.pk))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            claimed_until=timezone.now() - timedelta(seconds=1)
        )
        with_claims.append(services.delivery_claim(delivery_id=delivery.pk))
        outcomes: list[str] = []

        def settle(claimed: WebhookDelivery, into: list[str] = outcomes) -> None:
            from django.db import connection

            try:
                into.append(services.delivery_send(delivery=claimed))
            finally:
                connection.close()  # each thread is a worker with its own connection

        threads = [threading.Thread(target=settle, args=(d,)) for d in with_claims]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(outcomes) == ["dead", "superseded"]
    account = Account.objects.get(pk=setup.pk)
    refunds = LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.REFUND)
    assert refunds.count() == 10 and account.credit_balance_atomic == 1_000_000
    assert ledger_audit() == []


class OrderedReceiver:
    """Two receivers in one: /slow/<n> (the attacker's, each request held a moment) and /fast
    (the other customer's); records every request's webhook-id in arrival order."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[str, str]] = []
        self.secrets: dict[str, str] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                Webhook(outer.secrets[self.path]).verify(body, dict(self.headers.items()))
                with outer.lock:
                    outer.arrivals.append((self.path, self.headers["webhook-id"]))
                if self.path.startswith("/slow"):
                    time.sleep(0.3)  # a slow receiver: what the backlog holds the workers with
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


def test_one_free_accounts_backlog_does_not_starve_another_customer_on_real_workers(setup, settings):
    """The attack of the review on two real workers: a free account (no pack; test events are
    free) tries 20 subscriptions with 5 test events each, all queued before another customer's
    one event. The caps hold (5 subscriptions, 10 test events), and the other customer's
    delivery is attempted after at most one of the backlog's attempts per worker, not after
    all of them; every delivery is made once."""
    from webhooks.services import SubscriptionLimitReached, SubscriptionTestLimited, subscription_test_send

    settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = 5
    settings.WEBHOOK_TEST_EVENTS_PER_ACCOUNT = 10
    receiver = OrderedReceiver()
    attacker = register_wallet().account
    subs = []
    for n in range(20):
        try:
            sub = subscription_create(account=attacker, url=f"{receiver.base}/slow/{n}", events=["copy_signal"])
        except SubscriptionLimitReached:
            continue
        receiver.secrets[f"/slow/{n}"] = sub.secret
        subs.append(sub)
    assert len(subs) == 5
    queued = 0
    for sub in subs:
        for _ in range(5):
            try:
                subscription_test_send(subscription_id=sub.id)
                queued += 1
            except SubscriptionTestLimited:
                pass
    assert queued == 10
    theirs = subscription_create(account=setup, url=f"{receiver.base}/fast", events=["copy_signal"])
    receiver.secrets["/fast"] = theirs.secret
    event, _ = subscription_test_send(subscription_id=theirs.id)  # queued last, behind the backlog

    workers = [start_worker(), start_worker()]
    try:
        assert wait_for(lambda: WebhookDelivery.objects.filter(state="delivered").count() == 11, 120)
    finally:
        for worker in workers:
            stop_process(worker)
        receiver.server.shutdown()
    ids = [webhook_id for _, webhook_id in receiver.arrivals]
    assert ids.index(event.message_id) <= len(workers)  # without turns: 10, after the whole backlog
    assert len(ids) == len(set(ids)) == 11 and DeliveryAttempt.objects.count() == 11
