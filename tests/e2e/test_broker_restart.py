"""A Redis restart under real Celery workers (PostgreSQL + a private redis-server): the `webhooks`
worker and the default worker, each holding a delivery in flight when the broker goes away (the
state in which kombu's Redis transport used to stop a worker for good, a2a_service/core/broker.py),
are both still consuming afterwards."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from billing.chain.localchain import free_port
from tests.support import ROOT
from tests.support.wallets import register_wallet
from webhooks.models import PushEntitlement, WebhookDelivery
from webhooks.services import event_publish, subscription_create

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
QUEUE = "webhooks-restart-test"
DEFAULT_QUEUE = "celery"


class PrivateRedis:
    """A redis-server of the test's own on a free port, without persistence: a restart loses
    every queued message, as a crashed broker does."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None


class GatedReceiver:
    """Answers 200 to every delivery; the first `held` requests wait until `release()`, so the
    workers have a delivery in flight (an unacknowledged message) while the broker restarts."""

    def __init__(self, held: int) -> None:
        self.held, self.gate, self.got = held, threading.Event(), []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with outer.lock:
                    outer.got.append(self.headers["webhook-id"])
                    wait = len(outer.got) <= outer.held
                if wait:
                    outer.gate.wait(60)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def release(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def broker_at(url: str) -> Iterator[None]:
    """This process queues its tasks on `url` (the private redis) for the block: Celery's
    connection and producer pools are rebuilt for it, and again for the old broker after."""
    from a2a_service.celery import app

    old = app.conf.broker_url

    def point(to: str) -> None:
        app.conf.broker_url = to
        app._pool = None
        app.amqp._producer_pool = None

    point(url)
    try:
        yield
    finally:
        point(old)


def start_worker(*, broker: str, queue: str, log: Path) -> subprocess.Popen:
    """A worker as production runs it (prefork, two processes), on the private broker."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": broker,
        "WEBHOOK_DELIVERY_QUEUE": QUEUE,
        "WEBHOOK_TIMEOUT_SECONDS": "60",
        "WEBHOOK_ATTEMPT_DEADLINE_SECONDS": "90",
        "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
    }
    return subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "a2a_service", "worker",
            "--pool", "prefork", "--concurrency", "2", "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--queues", queue,
            "--hostname", f"{queue}-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def wait_for(predicate, seconds: float = 90) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def account(settings):
    if shutil.which("redis-server") is None:
        pytest.skip("needs the redis-server binary")
    from catalog.services import catalog_seed

    catalog_seed()
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    reg = register_wallet()
    PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=1))
    return reg.account


def publish_to(settings, queue: str, n: int) -> WebhookDelivery:
    settings.WEBHOOK_DELIVERY_QUEUE = queue
    event = event_publish(kind="copy_signal", payload={"n": n})
    return event.deliveries.get()


def test_both_workers_consume_again_after_a_redis_restart(account, settings, tmp_path):
    broker = PrivateRedis()
    broker.start()
    receiver = GatedReceiver(held=2)
    subscription_create(account=account, url=receiver.url, events=["copy_signal"])
    logs = {"webhooks": tmp_path / "webhooks.log", "default": tmp_path / "default.log"}
    workers = {
        "webhooks": start_worker(broker=broker.url, queue=QUEUE, log=logs["webhooks"]),
        "default": start_worker(broker=broker.url, queue=DEFAULT_QUEUE, log=logs["default"]),
    }

    def logged(name: str, text: str) -> bool:
        return text in logs[name].read_text()

    try:
        with broker_at(broker.url):
            assert wait_for(lambda: all(logged(n, " ready.") for n in workers), 120), "workers did not start"
            # One delivery in flight on each worker (held by the receiver): its message is
            # unacknowledged and the worker's next BRPOP is waiting, when the broker goes away.
            publish_to(settings, QUEUE, 1)
            assert wait_for(lambda: len(receiver.got) == 1)
            publish_to(settings, DEFAULT_QUEUE, 2)
            assert wait_for(lambda: len(receiver.got) == 2)

            broker.stop()
            broker.start()
            assert wait_for(lambda: all(logged(n, "Connection to broker lost") for n in workers))
            receiver.release()

            # Queued after the restart: each is attempted only if its worker consumes again
            # (one queue each; the second is published once the first is delivered, so neither
            # worker can have taken the other's turn).
            after_webhooks = publish_to(settings, QUEUE, 3)
            assert wait_for(lambda: WebhookDelivery.objects.get(pk=after_webhooks.pk).state == "delivered"), (
                logs["webhooks"].read_text()[-3000:]
            )
            after_default = publish_to(settings, DEFAULT_QUEUE, 4)
            assert wait_for(lambda: WebhookDelivery.objects.get(pk=after_default.pk).state == "delivered"), (
                logs["default"].read_text()[-3000:]
            )
            for name, proc in workers.items():
                assert proc.poll() is None, f"the {name} worker exited: {logs[name].read_text()[-3000:]}"
                assert not logged(name, "Unrecoverable error")
    finally:
        for proc in workers.values():
            stop(proc)
        receiver.close()
        broker.stop()
    # Each delivery queued after the restart reached the receiver once (webhook-id: the event's).
    assert receiver.got.count(after_webhooks.event.message_id) == 1
    assert receiver.got.count(after_default.event.message_id) == 1
