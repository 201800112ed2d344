"""Attacks and faults on webhook push (security review, issue 9): refunds minted by a lease
that ran out, workers starved by dripping receivers and free test events, SSRF by DNS
rebinding and by addresses Python calls global, charges lost on delete, a broker that is
down, and alerts lost by bulk ingest."""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import ssl
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from django.utils import timezone

import a2a_service.core.http
from a2a_service.core.http import DeadlineExceeded, TargetRefused, address_public, outbound_request
from billing.credits import credit_add, ledger_audit
from billing.models import Account, LedgerEntry
from tests.support.receivers import DrippingServer, Receiver, subscribe
from tests.support.wallets import register_wallet
from webhooks import services
from webhooks.models import (
    DeliveryAttempt,
    PushEntitlement,
    WebhookDelivery,
    WebhookEvent,
    WebhookSubscription,
)
from webhooks.services import deliveries_sweep, delivery_attempt, event_publish

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.215.14"  # a public address (example.com's); nothing connects to it in these tests


@pytest.fixture
def queued(monkeypatch):
    calls: list[tuple[int, float]] = []
    monkeypatch.setattr(
        services, "_enqueue", lambda delivery_id, countdown=0: calls.append((delivery_id, countdown))
    )
    return calls


def paying_account(balance: int) -> Account:
    """An account without a signal desk pack: every event is charged from its credits."""
    account = register_wallet().account
    credit_add(account_id=account.id, amount_atomic=balance, kind="adjustment", reason="test")
    return account


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.credit_balance_atomic


# --- 5. a refund is given once, whoever holds the claim -------------------------------------
def test_two_final_410s_of_one_delivery_refund_its_charge_once(receiver, queued):
    account = paying_account(50_000)
    sub = services.subscription_create(account=account, url=receiver.url, events=["copy_signal"])
    receiver.secret = sub.secret
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = WebhookDelivery.objects.get()
    assert delivery.charged_atomic == 10_000 and balance(account) == 40_000
    receiver.statuses = [(410, {}), (410, {})]

    # Worker A claims it and stalls past its lease; the sweeper's message lets worker B claim it.
    stalled = services.delivery_claim(delivery_id=delivery.pk)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert delivery_attempt(delivery_id=delivery.pk) == "dead"  # B: 410, refunded
    assert services.delivery_send(delivery=stalled) == "superseded"  # A wakes up: 410 again

    assert [r["status"] for r in receiver.received] == [410, 410]  # both really were answered 410
    assert balance(account) == 50_000  # refunded once, not 60_000
    refunds = LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.REFUND)
    assert [r.amount_atomic for r in refunds] == [10_000]
    delivery.refresh_from_db()
    assert delivery.state == "dead" and delivery.charged_atomic == 0 and delivery.attempt_log.count() == 2
    assert WebhookSubscription.objects.get().is_active is False
    assert ledger_audit() == []


def test_an_attempt_that_lost_its_claim_does_not_overwrite_the_new_claimants_outcome(receiver, queued):
    account = paying_account(50_000)
    receiver.secret = services.subscription_create(
        account=account, url=receiver.url, events=["copy_signal"]
    ).secret
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = WebhookDelivery.objects.get()
    stalled = services.delivery_claim(delivery_id=delivery.pk)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    fresh = services.delivery_claim(delivery_id=delivery.pk)
    assert fresh is not None and fresh.claim_token != stalled.claim_token
    receiver.statuses = [(410, {}), (200, {})]
    assert services.delivery_send(delivery=stalled) == "superseded"  # A first: 410, but not A's to settle
    assert services.delivery_send(delivery=fresh) == "delivered"
    delivery.refresh_from_db()
    assert delivery.state == "delivered" and delivery.charged_atomic == 10_000  # earned, not refunded
    assert WebhookSubscription.objects.get().is_active is True  # the stale 410 did not disable it
    assert balance(account) == 40_000 and ledger_audit() == []


def test_a_receiver_that_drips_headers_is_cut_at_the_attempt_deadline(settings, queued):
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0  # each drip (0.3 s) resets this
    settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS = 1.5
    server = DrippingServer()
    try:
        account = register_wallet().account
        services.subscription_create(account=account, url=server.url, events=["test"])
        event_publish(kind="test", payload={"n": 1})
        delivery = WebhookDelivery.objects.get()
        started = time.monotonic()
        assert delivery_attempt(delivery_id=delivery.pk) == "pending"  # a failed attempt, retried later
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert 1.4 < elapsed < 3.0  # the deadline, not the 20 s the receiver would have dripped
    assert elapsed < services.lease_seconds()  # so nobody could claim it again meanwhile
    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None and attempt.error.startswith("DeadlineExceeded")
    delivery.refresh_from_db()
    assert delivery.state == "pending" and delivery.attempts == 1 and delivery.claim_token is None


def test_a_claims_lease_outlasts_the_attempt_deadline(settings, queued):
    settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS = 10.0
    account = register_wallet().account
    services.subscription_create(account=account, url=f"http://{PUBLIC}/hook", events=["test"])
    event_publish(kind="test", payload={"n": 1})
    before = timezone.now()
    claimed = services.delivery_claim(delivery_id=WebhookDelivery.objects.get().pk)
    assert (claimed.claimed_until - before).total_seconds() >= 2 * 10.0  # deadline + time to settle


# --- 6. workers are not starved ---------------------------------------------------------
def test_deliveries_go_to_their_own_queue_and_make_run_starts_a_worker_for_it(settings, monkeypatch):
    from a2a_service.scripts import devstack
    from webhooks.tasks import deliver

    assert settings.WEBHOOK_DELIVERY_QUEUE == "webhooks"  # the default, from base settings
    sent: list[dict] = []
    monkeypatch.setattr(deliver, "apply_async", lambda **kw: sent.append(kw))
    services._enqueue(42)
    assert sent == [{"args": [42], "countdown": 0, "queue": "webhooks"}]
    commands = devstack._commands("8000")
    assert commands["webhooks"][commands["webhooks"].index("--queues") + 1] == "webhooks"
    assert "--queues" not in commands["worker"]  # the default worker keeps the default queue


def test_free_test_events_are_limited_per_subscription(api, receiver, queued, settings):
    settings.WEBHOOK_TEST_EVENTS_PER_WINDOW = 3
    settings.WEBHOOK_TEST_EVENTS_WINDOW_SECONDS = 600
    key, sub = subscribe(api, receiver)
    url = f"/api/a2a/account/webhooks/{sub['id']}/test"
    assert [api.post(url, HTTP_X_API_KEY=key).status_code for _ in range(3)] == [202, 202, 202]
    limited = api.post(url, HTTP_X_API_KEY=key)
    assert limited.status_code == 429
    wait = int(limited["Retry-After"])
    assert 590 <= wait <= 600
    assert limited.json() == {
        "detail": f"rate limit exceeded; retry in {wait} s",
        "code": "rate_limited",
        "retry_after": wait,
    }
    assert WebhookDelivery.objects.filter(subscription_id=sub["id"]).count() == 3  # nothing queued
    # Another subscription has its own allowance.
    other = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": receiver.url, "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    ).json()
    assert api.post(f"/api/a2a/account/webhooks/{other['id']}/test", HTTP_X_API_KEY=key).status_code == 202
    # Once the oldest leaves the window, one more is allowed.
    oldest = WebhookDelivery.objects.filter(subscription_id=sub["id"]).order_by("created_at").first()
    WebhookDelivery.objects.filter(pk=oldest.pk).update(created_at=timezone.now() - timedelta(seconds=601))
    assert api.post(url, HTTP_X_API_KEY=key).status_code == 202


def test_deliveries_over_the_per_subscription_cap_are_deferred_not_lost(
    receiver, queued, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION = 1
    settings.WEBHOOK_DEFER_SECONDS = 5.0
    account = register_wallet().account
    PushEntitlement.objects.create(account=account, expires_at=timezone.now() + timedelta(days=1))
    receiver.secret = services.subscription_create(
        account=account, url=receiver.url, events=["copy_signal"]
    ).secret
    event_publish(kind="copy_signal", payload={"n": 1})
    event_publish(kind="copy_signal", payload={"n": 2})
    first, second = WebhookDelivery.objects.order_by("id")
    in_flight = services.delivery_claim(delivery_id=first.pk)  # a slow receiver holds this one
    with django_capture_on_commit_callbacks(execute=True):
        assert delivery_attempt(delivery_id=second.pk) == "deferred"
    second.refresh_from_db()
    assert second.state == "pending" and second.attempts == 0 and receiver.received == []
    assert second.next_attempt_at > timezone.now() + timedelta(seconds=4)
    assert queued == [(second.pk, 5.0)]  # queued again for when it is due
    assert services.delivery_send(delivery=in_flight) == "delivered"
    WebhookDelivery.objects.filter(pk=second.pk).update(next_attempt_at=timezone.now())
    assert delivery_attempt(delivery_id=second.pk) == "delivered"
    assert [r["payload"]["data"]["n"] for r in receiver.received] == [1, 2]


# --- 8. SSRF ------------------------------------------------------------------------------
REFUSED = ["100.64.0.1", "100.100.100.200", "2002:7f00:1::", "::ffff:127.0.0.1", "64:ff9b::7f00:1"]


@pytest.mark.parametrize(
    "address",
    [
        *REFUSED,
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "::1",
        "fd00::1",
        "fe80::1",
        "224.0.0.1",
        "ff0e::1",
        "0.0.0.0",
        "::",
        "::7f00:1",
        "64:ff9b:1::a00:1",
        "2001::1",
        "198.18.0.1",
        "240.0.0.1",
    ],
)
def test_non_public_addresses_are_refused(address):
    assert address_public(ipaddress.ip_address(address)) is False


@pytest.mark.parametrize(
    "address", [PUBLIC, "8.8.8.8", "2606:4700:4700::1111", "2002:808:808::", "64:ff9b::808:808"]
)
def test_public_addresses_are_accepted(address):
    assert address_public(ipaddress.ip_address(address)) is True


@pytest.mark.parametrize("address", REFUSED)
def test_subscribing_to_cgnat_6to4_mapped_and_nat64_addresses_is_refused(api, address):
    key = register_wallet().api_key
    host = f"[{address}]" if ":" in address else address
    resp = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": f"http://{host}/hook", "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    )
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["body", "url"]
    assert "non-public" in resp.json()["detail"][0]["msg"] and WebhookSubscription.objects.count() == 0


def test_a_public_address_is_accepted_when_subscribing(api, monkeypatch):
    monkeypatch.setattr(a2a_service.core.http, "host_addresses", lambda host, port: [PUBLIC])
    key = register_wallet().api_key
    resp = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": "http://hooks.example.com/in", "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    )
    assert resp.status_code == 201


def test_dns_rebinding_to_loopback_is_refused_at_delivery_and_recorded(api, monkeypatch, queued, settings):
    """Public when subscribing, 127.0.0.1 (where a receiver listens) when delivering."""
    target = Receiver()  # stands for an internal service on loopback
    port = target.server.server_address[1]
    answers = {"rebind.example.com": [PUBLIC]}
    monkeypatch.setattr(a2a_service.core.http, "host_addresses", lambda host, p: answers[host])
    try:
        key = register_wallet().api_key
        account = Account.objects.get()
        PushEntitlement.objects.create(account=account, expires_at=timezone.now() + timedelta(days=1))
        resp = api.post(
            "/api/a2a/account/webhooks/register",
            {"url": f"http://rebind.example.com:{port}/hook", "events": ["copy_signal"]},
            format="json",
            HTTP_X_API_KEY=key,
        )
        assert resp.status_code == 201
        answers["rebind.example.com"] = ["127.0.0.1"]  # the attacker's DNS changes its answer
        event_publish(kind="copy_signal", payload={"n": 1})
        delivery = WebhookDelivery.objects.get()
        assert delivery_attempt(delivery_id=delivery.pk) == "pending"
    finally:
        target.close()
    assert target.received == []  # nothing was sent to loopback
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert attempt.status_code is None
    assert attempt.error == "TargetRefused: rebind.example.com resolves to a non-public address (127.0.0.1)"
    delivery.refresh_from_db()
    assert delivery.state == "pending" and delivery.attempts == 1 and "non-public" in delivery.last_error


@pytest.mark.parametrize("address", REFUSED + ["127.0.0.1"])
def test_outbound_requests_refuse_a_host_resolving_to_a_non_public_address(monkeypatch, address):
    monkeypatch.setattr(a2a_service.core.http, "host_addresses", lambda host, port: [PUBLIC, address])
    connects: list = []
    monkeypatch.setattr(
        a2a_service.core.http.urllib3_connection, "create_connection", lambda *a, **k: connects.append(a)
    )
    for kwargs in ({}, {"deadline": 5.0}):
        with pytest.raises(TargetRefused, match="non-public"):
            outbound_request("GET", "http://feed.example.com/x", public_only=True, **kwargs)
    assert connects == []  # refused before any connection


def test_feeds_are_public_only_by_default_unless_allowed(settings):
    target = Receiver()
    url = f"http://127.0.0.1:{target.server.server_address[1]}/feed"
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
        with pytest.raises(TargetRefused):
            outbound_request("POST", url, data=b"{}")
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        assert outbound_request("POST", url, data=b"{}").status_code == 200
        # The operator's own facilitator may be on loopback: its host is configuration.
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
        settings.FACILITATOR_URL = f"http://127.0.0.1:{target.server.server_address[1]}/facilitator"
        assert outbound_request("POST", url, data=b"{}").status_code == 200
    finally:
        a2a_service.core.http.close_sessions()
        target.close()


def test_redirects_are_never_followed():
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits.append(self.path)
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        resp = outbound_request(
            "GET", f"http://127.0.0.1:{server.server_address[1]}/a", public_only=False, deadline=5
        )
    finally:
        server.shutdown()
        a2a_service.core.http.close_sessions()
    assert resp.status_code == 302 and hits == ["/a"]


@pytest.fixture(scope="module")
def tls_server():
    """An HTTPS server on 127.0.0.1 with a certificate for hook.example.com only, recording
    the SNI name and Host header of each request."""
    import tempfile

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hook.example.com")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("hook.example.com")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tempfile.mkdtemp()
    cert_path, key_path = f"{folder}/cert.pem", f"{folder}/key.pem"
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    seen: list[tuple[str | None, str]] = []
    sni: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append((sni[-1] if sni else None, self.headers["Host"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    context.sni_callback = lambda sock, server_name, ctx: sni.append(server_name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server.server_address[1], cert_path, seen
    server.shutdown()


def test_the_connection_goes_to_the_checked_address_with_the_hostnames_host_sni_and_certificate(
    monkeypatch, tls_server
):
    port, ca, seen = tls_server
    resolved: list[str] = []

    def resolver(host: str, p: int) -> list[str]:
        resolved.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr(a2a_service.core.http, "host_addresses", resolver)
    resp = outbound_request(
        "GET", f"https://hook.example.com:{port}/x", public_only=False, verify=ca, deadline=5
    )
    assert resp.status_code == 200 and resp.text == "ok"
    assert resolved == ["hook.example.com"]  # our resolver, not the system's, chose the address
    assert seen[-1] == ("hook.example.com", f"hook.example.com:{port}")
    # The certificate is still verified against the hostname asked for, not the address.
    monkeypatch.setattr(a2a_service.core.http, "host_addresses", lambda host, p: ["127.0.0.1"])
    with pytest.raises(requests.exceptions.SSLError):
        outbound_request(
            "GET", f"https://other.example.com:{port}/x", public_only=False, verify=ca, deadline=5
        )


def test_a_deadline_also_bounds_a_resolver_that_hangs(monkeypatch):
    monkeypatch.setattr(a2a_service.core.http, "host_addresses", lambda host, port: time.sleep(3) or [PUBLIC])
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        outbound_request("GET", "http://slow-dns.example.com/x", public_only=True, deadline=0.5)
    assert time.monotonic() - started < 1.5


# --- 17. deleting a subscription gives back what its undelivered events were charged --------
def test_deleting_a_subscription_refunds_its_charged_undelivered_deliveries(api, receiver, queued):
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=100_000, kind="adjustment", reason="test")
    sub = services.subscription_create(account=reg.account, url=receiver.url, events=["copy_signal"])
    receiver.secret = sub.secret
    for n in range(3):
        event_publish(kind="copy_signal", payload={"n": n})
    delivered, pending, claimed = WebhookDelivery.objects.order_by("id")
    assert delivery_attempt(delivery_id=delivered.pk) == "delivered"  # earned: kept
    services.delivery_claim(delivery_id=claimed.pk)  # in flight when the delete comes
    assert balance(reg.account) == 70_000
    assert api.delete(f"/api/a2a/account/webhooks/{sub.id}", HTTP_X_API_KEY=reg.api_key).status_code == 204
    assert balance(reg.account) == 90_000  # the two undelivered are given back
    refunds = LedgerEntry.objects.filter(account=reg.account, kind=LedgerEntry.Kind.REFUND)
    assert sorted(r.amount_atomic for r in refunds) == [10_000, 10_000]
    assert not WebhookSubscription.objects.exists() and not WebhookDelivery.objects.exists()
    assert ledger_audit() == []
    assert len(receiver.received) == 1  # only the delivered one was ever sent
    # The worker that held the claim finishes its attempt: nothing left to settle, no error.
    stale = WebhookDelivery(pk=claimed.pk, event=claimed.event, subscription=sub, charged_atomic=10_000)
    assert services.delivery_send(delivery=stale) == "superseded"
    assert balance(reg.account) == 90_000 and ledger_audit() == []


# --- 19. the broker down does not turn a committed request into a 500 ----------------------
@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_a_test_event_is_accepted_and_the_sweeper_sends_it_later(
    api, receiver, monkeypatch, caplog
):
    from kombu.exceptions import OperationalError

    from webhooks.tasks import deliver

    def broker_down(**kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(deliver, "apply_async", broker_down)
    key, sub = subscribe(api, receiver)
    with caplog.at_level(logging.WARNING, logger="webhooks.services"):
        resp = api.post(f"/api/a2a/account/webhooks/{sub['id']}/test", HTTP_X_API_KEY=key)
    assert resp.status_code == 202  # after the commit, the broker's failure is not the client's
    warnings = [r for r in caplog.records if r.name == "webhooks.services"]
    assert len(warnings) == 1 and "stay pending for the sweeper" in warnings[0].getMessage()
    delivery = WebhookDelivery.objects.get()
    assert delivery.state == "pending" and delivery.event.message_id == resp.json()["webhook_id"]
    # The broker is back: the sweeper (beat) queues it, and the worker delivers it.
    sent: list[int] = []
    monkeypatch.setattr(deliver, "apply_async", lambda args, **kw: sent.append(args[0]))
    assert deliveries_sweep() == 1 and sent == [delivery.pk]
    assert delivery_attempt(delivery_id=delivery.pk) == "delivered"
    assert [r["id"] for r in receiver.received] == [resp.json()["webhook_id"]]


# --- 21. a bulk spread ingest raises its pair_arb_alert --------------------------------------
def test_a_wide_spread_ingested_in_bulk_raises_a_pair_arb_alert(api, receiver, queued, settings):
    settings.PAIR_ARB_ALERT_BPS = 25.0
    subscribe(api, receiver, events=("pair_arb_alert",))
    resp = api.post(
        "/api/a2a/internal/spread-snapshot",
        {
            "readings": [
                {"symbol": "ETH/USDT", "venue_a": "binance", "venue_b": "okx", "spread_bps": 10},
                {"symbol": "BTC/USDT", "venue_a": "binance", "venue_b": "kraken", "spread_bps": -41.5},
            ]
        },
        format="json",
        HTTP_X_INGEST_TOKEN=settings.INGEST_TOKEN,
    )
    assert resp.status_code == 201 and resp.json()["accepted"] == 2
    event = WebhookEvent.objects.get(kind="pair_arb_alert")
    assert event.payload["symbol"] == "BTC/USDT" and event.payload["spread_bps"] == -41.5
    assert event.payload["venue_b"] == "kraken"
    delivery = WebhookDelivery.objects.get(event=event)
    assert delivery_attempt(delivery_id=delivery.pk) == "delivered"
    assert receiver.received[0]["payload"]["type"] == "pair_arb_alert"
