"""Webhook push: a real receiver on loopback verifies every delivery with
standardwebhooks.Webhook.verify; retries, 410, Retry-After, dead letters and recovery."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import register_wallet
from webhooks import services
from webhooks.models import PushEntitlement, WebhookDelivery, WebhookSubscription
from webhooks.services import deliveries_sweep, delivery_attempt, delivery_replay, event_publish

pytestmark = pytest.mark.django_db


def test_register_list_delete_and_the_secret_shown_once(api, receiver):
    key, sub = subscribe(api, receiver)
    assert sub["secret"].startswith("whsec_") and sub["events"] == ["copy_signal"]
    listed = api.get("/api/a2a/account/webhooks", HTTP_X_API_KEY=key).json()["subscriptions"]
    assert [s["id"] for s in listed] == [sub["id"]] and "secret" not in listed[0]
    other = register_wallet().api_key
    assert api.delete(f"/api/a2a/account/webhooks/{sub['id']}", HTTP_X_API_KEY=other).status_code == 404
    assert api.delete(f"/api/a2a/account/webhooks/{sub['id']}", HTTP_X_API_KEY=key).status_code == 204
    assert (
        api.post(
            "/api/a2a/account/webhooks/register",
            {"url": receiver.url, "events": ["copy_signal"]},
            format="json",
        ).status_code
        == 401
    )


def test_private_targets_are_refused_unless_allowed(api, settings):
    key = register_wallet().api_key
    for url in (
        "http://127.0.0.1:9/x",
        "http://10.0.0.5/x",
        "http://169.254.169.254/latest",
        "http://localhost/x",
    ):
        resp = api.post(
            "/api/a2a/account/webhooks/register",
            {"url": url, "events": ["copy_signal"]},
            format="json",
            HTTP_X_API_KEY=key,
        )
        assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["body", "url"], url
    settings.WEBHOOKS_REQUIRE_HTTPS = True
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    resp = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": "http://127.0.0.1:9/x", "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    )
    assert resp.status_code == 422 and "https" in resp.json()["detail"][0]["msg"]


def test_a_test_event_is_delivered_signed(api, receiver, queued):
    key, sub = subscribe(api, receiver)
    with_commit = api.post(f"/api/a2a/account/webhooks/{sub['id']}/test", HTTP_X_API_KEY=key)
    assert with_commit.status_code == 202
    delivery = WebhookDelivery.objects.get()
    assert run_until_settled(delivery).state == "delivered"
    got = receiver.received[0]
    assert (
        got["verified"] and got["id"] == with_commit.json()["webhook_id"] and got["payload"]["type"] == "test"
    )


def test_a_receiver_down_at_first_gets_the_event_once_later_with_the_same_id(api, receiver, queued):
    subscribe(api, receiver)
    receiver.statuses = [(500, {}), (502, {})]
    event_publish(kind="copy_signal", payload={"symbol": "BTC/USDT", "side": "long"})
    delivery = run_until_settled(WebhookDelivery.objects.get())
    assert delivery.state == "delivered" and delivery.attempts == 3
    assert [r["status"] for r in receiver.received] == [500, 502, 200]
    assert len({r["id"] for r in receiver.received}) == 1 and all(r["verified"] for r in receiver.received)
    assert delivery.attempt_log.count() == 3


def test_410_disables_the_subscription(api, receiver, queued):
    subscribe(api, receiver)
    receiver.statuses = [(410, {})]
    event_publish(kind="copy_signal", payload={"n": 1})
    assert run_until_settled(WebhookDelivery.objects.get()).state == "dead"
    sub = WebhookSubscription.objects.get()
    assert sub.is_active is False and "410" in sub.disabled_reason
    event_publish(kind="copy_signal", payload={"n": 2})
    assert WebhookDelivery.objects.count() == 1  # no new delivery to a disabled subscription


def test_429_honours_retry_after(api, receiver, queued, settings):
    settings.WEBHOOK_RETRY_SCALE = 1.0
    subscribe(api, receiver)
    receiver.statuses = [(429, {"Retry-After": "120"})]
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = WebhookDelivery.objects.get()
    delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == "pending" and delivery.next_attempt_at > timezone.now() + timedelta(seconds=100)


def test_after_the_last_attempt_it_is_dead_lettered_and_staff_can_replay_it(api, receiver, queued):
    subscribe(api, receiver)
    receiver.statuses = [(500, {})] * 8
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = run_until_settled(WebhookDelivery.objects.get(), max_attempts=20)
    assert delivery.state == "dead" and delivery.attempts == 8
    delivery_replay(delivery_id=delivery.pk)
    assert run_until_settled(delivery).state == "delivered"
    assert len({r["id"] for r in receiver.received}) == 1


def test_a_claim_whose_worker_died_is_swept_and_delivered_once(api, receiver, queued):
    subscribe(api, receiver)
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = WebhookDelivery.objects.get()
    assert services.delivery_claim(delivery_id=delivery.pk) is not None  # the worker dies here
    assert delivery_attempt(delivery_id=delivery.pk) == "not_due"  # still leased: nobody else sends
    WebhookDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    queued.clear()
    assert deliveries_sweep() == 1 and queued == [delivery.pk]
    assert delivery_attempt(delivery_id=delivery.pk) == "delivered"
    assert len(receiver.received) == 1 and json.dumps(receiver.received[0]["payload"]["data"]) == '{"n": 1}'


def test_a_test_event_goes_only_to_the_chosen_subscription(api, receiver, queued):
    key, sub = subscribe(api, receiver)
    api.post(
        "/api/a2a/account/webhooks/register",
        {"url": receiver.url, "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    )
    api.post(f"/api/a2a/account/webhooks/{sub['id']}/test", HTTP_X_API_KEY=key)
    assert list(WebhookDelivery.objects.values_list("subscription_id", flat=True)) == [sub["id"]]


def test_without_a_pack_events_are_paid_from_credits_or_skipped_never_free(api, receiver, queued):
    from billing.credits import credit_add, ledger_audit
    from billing.models import Account

    subscribe(api, receiver, pack=False)
    event_publish(kind="copy_signal", payload={"n": 1})
    skipped = WebhookDelivery.objects.get()
    assert skipped.state == "skipped" and "credit" in skipped.last_error and queued == []
    account = Account.objects.get()
    credit_add(account_id=account.id, amount_atomic=15_000, kind="adjustment", reason="test")
    event_publish(kind="copy_signal", payload={"n": 2})
    paid = WebhookDelivery.objects.filter(state="pending").get()
    assert paid.charged_atomic == 10_000
    account.refresh_from_db()
    assert account.credit_balance_atomic == 5_000
    receiver.statuses = [(410, {})]
    run_until_settled(paid)
    account.refresh_from_db()
    assert account.credit_balance_atomic == 15_000 and ledger_audit() == []  # undelivered: refunded


def test_a_regime_change_pushes_a_signed_attestation(api, receiver, queued, settings):
    from eth_account import Account as EthAccount
    from eth_account.messages import encode_defunct

    from catalog.models import RegimeSnapshot

    subscribe(api, receiver, events=("regime_attestation",))
    RegimeSnapshot.objects.create(regime="risk_on", confidence=0.72)
    delivery = run_until_settled(WebhookDelivery.objects.get())
    assert delivery.state == "delivered"
    data = receiver.received[0]["payload"]["data"]
    signer = EthAccount.recover_message(encode_defunct(text=data["message"]), signature=data["signature"])
    published = api.get("/api/a2a/ai-agent.json").json()["attestation_signer"]
    assert signer == data["signer"] == published and '"regime":"risk_on"' in data["message"]


def test_the_events_catalog_documents_every_kind(api):
    body = api.get("/api/a2a/webhooks/events").json()
    kinds = {k["kind"]: k for k in body["kinds"]}
    assert {
        "copy_signal",
        "regime_attestation",
        "prediction_alert",
        "pair_arb_alert",
        "risk_exit_alert",
    } <= set(kinds)
    assert kinds["copy_signal"]["price_usdc"] == 0.01 and kinds["copy_signal"]["payload_schema"]["properties"]
    assert body["attestation_signer"].startswith("0x")


def test_a_signal_desk_pack_bought_with_credits_turns_push_on(api):
    from billing.credits import credit_add

    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    resp = api.get("/api/a2a/x402/webhooks/signal-desk-pack", HTTP_X_API_KEY=reg.api_key)
    assert resp.status_code == 200 and resp["X-Credit-Charged"] == "0.29"
    assert PushEntitlement.objects.get(account=reg.account).expires_at > timezone.now() + timedelta(days=29)
    prices = api.get("/api/a2a/x402/webhooks/outcome-pricing", HTTP_X_API_KEY=reg.api_key).json()["prices"]
    assert {"kind": "copy_signal", "price_usdc": 0.01} in prices


def test_ingested_data_raises_the_alert_events(api, receiver, queued, settings):
    from catalog.models import DeskSignal, PredictionMarket, SpreadSnapshot

    subscribe(api, receiver, events=("pair_arb_alert", "prediction_alert", "risk_exit_alert"))
    SpreadSnapshot.objects.create(
        symbol="ETH/USDT", venue_a="a", venue_b="b", spread_bps=10
    )  # below threshold
    SpreadSnapshot.objects.create(symbol="BTC/USDT", venue_a="a", venue_b="b", spread_bps=40)
    market = PredictionMarket.objects.create(
        venue="v", external_id="m1", question="Rate cut?", yes_price=0.40
    )
    market.yes_price = 0.42
    market.save()  # a small move: no alert
    market.yes_price = 0.55
    market.save()
    signal = DeskSignal.objects.create(desk="grid", symbol="SOL/USDT", side="long", entry_price=100)
    signal.exit_price, signal.pnl_pct, signal.closed_at = 95, -5, timezone.now()
    signal.save()
    kinds = sorted(WebhookDelivery.objects.values_list("event__kind", flat=True))
    assert kinds == ["pair_arb_alert", "prediction_alert", "risk_exit_alert"]
    alert = WebhookDelivery.objects.get(event__kind="prediction_alert").event.payload
    assert alert["change"] == pytest.approx(0.13) and alert["question"] == "Rate cut?"


def test_staff_replay_a_dead_letter_from_the_admin(api, receiver, queued, admin_client):
    subscribe(api, receiver)
    receiver.statuses = [(500, {})] * 8
    event_publish(kind="copy_signal", payload={"n": 1})
    delivery = run_until_settled(WebhookDelivery.objects.get(), max_attempts=20)
    assert delivery.state == "dead"
    resp = admin_client.post(
        "/admin/webhooks/webhookdelivery/", {"action": "replay", "_selected_action": [delivery.pk]}
    )
    assert resp.status_code == 302
    delivery.refresh_from_db()
    assert delivery.state == "pending" and delivery.attempts == 0
    assert run_until_settled(delivery).state == "delivered"
    assert (
        admin_client.get(f"/admin/webhooks/deliveryattempt/?delivery__id__exact={delivery.pk}").status_code
        == 200
    )
