"""Webhook receivers on loopback: one that verifies every delivery's signature and answers the
statuses a test queues, and one that drips its answer forever; with the helpers that subscribe
an account and run a delivery until it settles."""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from tests.support.wallets import register_wallet
from webhooks import services
from webhooks.models import PushEntitlement, WebhookDelivery
from webhooks.services import delivery_attempt


class Receiver:
    """Answers with the queued statuses (then 200) and verifies each request's signature."""

    def __init__(self) -> None:
        self.statuses: list[tuple[int, dict]] = []
        self.received: list[dict] = []
        self.secret = ""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k: v for k, v in self.headers.items()}
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                    verified = True
                except Exception:
                    payload, verified = None, False
                status, extra = receiver.statuses.pop(0) if receiver.statuses else (200, {})
                receiver.received.append(
                    {
                        "id": headers.get("webhook-id"),
                        "verified": verified,
                        "payload": payload,
                        "status": status,
                    }
                )
                self.send_response(status)
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def queued(monkeypatch):
    """Deliveries the code queues; the tests run the task body themselves."""
    calls: list[int] = []
    monkeypatch.setattr(services, "_enqueue", lambda delivery_id, countdown=0: calls.append(delivery_id))
    return calls


def subscribe(api, receiver, events=("copy_signal",), pack: bool = True) -> tuple[str, dict]:
    reg = register_wallet()
    key = reg.api_key
    if pack:  # a signal desk pack covers the account's events
        PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=30))
    resp = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": receiver.url, "events": list(events)},
        format="json",
        HTTP_X_API_KEY=key,
    )
    assert resp.status_code == 201, resp.content
    receiver.secret = resp.json()["secret"]
    return key, resp.json()


def run_until_settled(delivery: WebhookDelivery, max_attempts: int = 12) -> WebhookDelivery:
    for _ in range(max_attempts):
        WebhookDelivery.objects.filter(pk=delivery.pk, state="pending").update(next_attempt_at=timezone.now())
        delivery_attempt(delivery_id=delivery.pk)
        delivery.refresh_from_db()
        if delivery.state in (WebhookDelivery.State.DELIVERED, WebhookDelivery.State.DEAD):
            break
    return delivery


@pytest.fixture
def receiver(settings):
    """A webhook receiver on loopback (Receiver), allowed as a target."""
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    r = Receiver()
    yield r
    r.close()


# --- 5/6. a whole attempt has a deadline, shorter than its lease -----------------------------
class DrippingServer:
    """Answers the status line, then one header line every `every` seconds, never ending the
    headers (each byte resets a per-read timeout). Gives up on its own after `limit` s."""

    def __init__(self, every: float = 0.3, limit: float = 20.0) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.every, self.limit = every, limit
        self.accepted: list[float] = []  # when each connection came (monotonic)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def connections(self) -> int:
        return len(self.accepted)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        started = time.monotonic()
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            n = 0
            while time.monotonic() - started < self.limit:
                time.sleep(self.every)
                conn.sendall(f"X-Drip-{n}: 1\r\n".encode())
                n += 1
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()
