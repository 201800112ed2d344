"""Webhook delivery by a real Celery worker (PostgreSQL + Redis): retries through the broker,
and a worker killed in the middle of a delivery loses nothing."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from tests.conftest import start_celery_worker
from tests.wallets import register_wallet
from webhooks.models import PushEntitlement, WebhookDelivery
from webhooks.services import deliveries_sweep, event_publish, subscription_create

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[1]
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
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def start_worker():
    return start_celery_worker(QUEUE, WEBHOOK_TIMEOUT_SECONDS="1", WEBHOOK_DELIVERY_QUEUE=QUEUE)


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
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=20)
    assert [s for _, s in receiver.got] == [503, 200] and len({i for i, _ in receiver.got}) == 1


def test_a_worker_killed_mid_delivery_loses_nothing(setup):
    receiver = Receiver([(200, 5.0)])  # the first request hangs: the worker is killed meanwhile
    receiver.secret = subscription_create(account=setup, url=receiver.url, events=["copy_signal"]).secret
    worker = start_worker()
    event_publish(kind="copy_signal", payload={"n": 1})
    assert wait_for(lambda: len(receiver.got) == 1, 30)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=20)
    delivery = WebhookDelivery.objects.get()
    assert delivery.state == "delivering"  # claimed, never finished
    worker = start_worker()
    try:
        # After the lease (3 x the 1 s timeout) the sweeper (beat, here called directly) queues it again.
        assert wait_for(
            lambda: deliveries_sweep() > 0 or WebhookDelivery.objects.filter(state="delivered").exists(), 30
        )
        assert wait_for(lambda: WebhookDelivery.objects.filter(state="delivered").exists(), 60)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=20)
    assert len({i for i, _ in receiver.got}) == 1 and len(receiver.got) == 2  # at least once, same webhook-id
