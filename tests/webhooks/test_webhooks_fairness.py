"""One account cannot starve another's webhook deliveries: subscriptions are capped per
account, free test events are limited per account (deleting subscriptions does not renew the
allowance), and queued messages take turns between accounts (webhooks/turns.py). The real
Celery workers' version of the attack is in tests/webhooks/test_webhooks_worker.py."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.wallets import register_wallet
from webhooks import services
from webhooks.models import (
    Delegation,
    DeliveryAttempt,
    DeliveryTurn,
    WebhookDelivery,
    WebhookEvent,
    WebhookSubscription,
)
from webhooks.services import SubscriptionLimitReached, subscription_create, subscription_test_send
from webhooks.turns import delivery_turn, turn_order

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(monkeypatch):
    """The broker's queue, first in first out: (delivery id, countdown) in the order queued."""
    messages: list[tuple[int, float]] = []
    monkeypatch.setattr(
        services, "_enqueue", lambda delivery_id, countdown=0: messages.append((delivery_id, countdown))
    )
    return messages


def register(api, key: str, url: str):
    return api.post(
        "/api/a2a/account/webhooks/register",
        {"url": url, "events": ["copy_signal"]},
        format="json",
        HTTP_X_API_KEY=key,
    )


def test_subscriptions_are_capped_per_account(api, receiver, settings):
    settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = 3
    reg = register_wallet()
    answers = [register(api, reg.api_key, receiver.url) for _ in range(20)]
    assert [a.status_code for a in answers] == [201] * 3 + [409] * 17
    assert answers[3].json()["code"] == "subscription_limit" and answers[3].json()["max_subscriptions"] == 3
    assert WebhookSubscription.objects.filter(account=reg.account).count() == 3
    # Another account has its own allowance; deleting one frees a place.
    assert register(api, register_wallet().api_key, receiver.url).status_code == 201
    first = answers[0].json()["id"]
    assert api.delete(f"/api/a2a/account/webhooks/{first}", HTTP_X_API_KEY=reg.api_key).status_code == 204
    assert register(api, reg.api_key, receiver.url).status_code == 201
    assert register(api, reg.api_key, receiver.url).status_code == 409
    # A disabled subscription (410, a revoked delegation, a pool left) does not count...
    WebhookSubscription.objects.filter(pk=answers[1].json()["id"]).update(is_active=False)
    assert register(api, reg.api_key, receiver.url).status_code == 201
    assert register(api, reg.api_key, receiver.url).status_code == 409
    # ...nor one of an expired delegation (it gets no orders any more).
    Delegation.objects.create(
        account=reg.account,
        desk="trend-momentum",
        symbols=["BTC/USDT"],
        max_notional_per_signal_atomic=1,
        max_notional_total_atomic=1,
        subscription_id=answers[2].json()["id"],
        expires_at=timezone.now() - timedelta(seconds=1),
    )
    assert register(api, reg.api_key, receiver.url).status_code == 201


def test_free_test_events_are_limited_per_account_whatever_its_subscriptions(api, receiver, queue, settings):
    """Per subscription 3, per account 4: a second subscription gets only what the account has
    left, and deleting and re-creating subscriptions renews nothing."""
    settings.WEBHOOK_TEST_EVENTS_PER_WINDOW = 3
    settings.WEBHOOK_TEST_EVENTS_PER_ACCOUNT = 4
    reg = register_wallet()
    one, two = (register(api, reg.api_key, receiver.url).json()["id"] for _ in range(2))

    def test_event(sub_id: int) -> int:
        return api.post(f"/api/a2a/account/webhooks/{sub_id}/test", HTTP_X_API_KEY=reg.api_key).status_code

    assert [test_event(one) for _ in range(4)] == [202, 202, 202, 429]
    assert [test_event(two) for _ in range(2)] == [202, 429]
    limited = api.post(f"/api/a2a/account/webhooks/{two}/test", HTTP_X_API_KEY=reg.api_key)
    assert 590 <= int(limited["Retry-After"]) <= 600
    for sub_id in (one, two):
        api.delete(f"/api/a2a/account/webhooks/{sub_id}", HTTP_X_API_KEY=reg.api_key)
    three = register(api, reg.api_key, receiver.url).json()["id"]
    assert test_event(three) == 429
    assert WebhookEvent.objects.filter(kind="test", account=reg.account).count() == 4
    # Once the oldest leaves the window, one more.
    oldest = WebhookEvent.objects.filter(kind="test").order_by("created_at").first()
    WebhookEvent.objects.filter(pk=oldest.pk).update(created_at=timezone.now() - timedelta(seconds=601))
    assert test_event(three) == 202


def test_one_accounts_backlog_does_not_delay_anothers_first_attempt(
    receiver, queue, settings, django_capture_on_commit_callbacks
):
    """The attack: a free account tries 20 subscriptions and 5 test events on each, all queued
    before another customer's one event. The queue is run as a solo worker would (first in,
    first out): the other customer's delivery is the second attempt made, not the last."""
    settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = 5
    settings.WEBHOOK_TEST_EVENTS_PER_ACCOUNT = 10
    attacker = register_wallet().account
    subs = []
    for _ in range(20):
        try:
            subs.append(subscription_create(account=attacker, url=receiver.url, events=["copy_signal"]))
        except SubscriptionLimitReached:
            pass
    assert len(subs) == 5
    sent = 0
    for sub in subs:
        for _ in range(5):
            try:
                with django_capture_on_commit_callbacks(execute=True):
                    subscription_test_send(subscription_id=sub.id)
                sent += 1
            except services.SubscriptionTestLimited:
                pass
    assert sent == 10
    customer = register_wallet().account
    theirs = subscription_create(account=customer, url=receiver.url, events=["copy_signal"])
    with django_capture_on_commit_callbacks(execute=True):
        event, _ = subscription_test_send(subscription_id=theirs.id)
    assert [WebhookDelivery.objects.get(pk=i).subscription_id for i, _ in queue][-1] == theirs.id  # last in

    handled = 0
    while queue:
        delivery_id, _ = queue.pop(0)
        delivery_turn(delivery_id=delivery_id)
        handled += 1
        assert handled < 50, "the queue does not drain"
    order = [r["id"] for r in receiver.received]
    assert order.index(event.message_id) == 1  # one attempt of the backlog before it, not ten
    # Everything delivered, each once, and every message spent (the re-queued ones included).
    assert len(order) == len(set(order)) == 11
    assert set(WebhookDelivery.objects.values_list("state", flat=True)) == {"delivered"}
    assert DeliveryAttempt.objects.count() == 11
    assert DeliveryTurn.objects.count() == 2


def test_the_turn_order_alternates_accounts_and_skips_full_subscriptions(settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION = 1
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = 5
    a, b = register_wallet().account, register_wallet().account
    a1, a2 = (subscription_create(account=a, url="http://127.0.0.1:9/a", events=["test"]) for _ in range(2))
    b1 = subscription_create(account=b, url="http://127.0.0.1:9/b", events=["test"])
    for sub in (a1, a1, a2, b1):
        services.event_publish(kind="test", payload={}, subscription_id=sub.id)
    d = {(x.subscription_id, n): x.id for n, x in enumerate(WebhookDelivery.objects.order_by("id"))}
    a1_first, a1_second, a2_first, b1_first = d[(a1.id, 0)], d[(a1.id, 1)], d[(a2.id, 2)], d[(b1.id, 3)]
    now = timezone.now()
    # Neither account served yet: the oldest due of each subscription, oldest first.
    assert turn_order(now) == [a1_first, a2_first, b1_first]
    DeliveryTurn.objects.create(account=a, last_claimed_at=now)
    assert turn_order(now) == [b1_first, a1_first, a2_first]
    # a1's one place in flight is taken: its next delivery waits, a2's does not.
    WebhookDelivery.objects.filter(pk=a1_first).update(
        state="delivering", claimed_until=now + timedelta(seconds=30)
    )
    assert turn_order(now) == [b1_first, a2_first]
    assert a1_second not in turn_order(now)


@pytest.mark.postgres
def test_concurrent_subscriptions_and_test_events_never_pass_the_account_caps(
    transactional_db, settings, monkeypatch
):
    """Eight requests at once for each: the account's row lock lets exactly the cap through."""
    from django.db import connection

    settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = 3
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_TEST_EVENTS_PER_WINDOW = 5
    settings.WEBHOOK_TEST_EVENTS_PER_ACCOUNT = 4
    account = register_wallet().account
    results: list[str] = []

    def race(fn, n: int = 8) -> None:
        barrier = threading.Barrier(n)

        def one(i: int) -> None:
            barrier.wait()
            try:
                fn(i)
                results.append("ok")
            except Exception as exc:
                results.append(type(exc).__name__)
            finally:
                connection.close()

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)

    race(lambda i: subscription_create(account=account, url="http://127.0.0.1:9/h", events=["test"]))
    assert sorted(results) == ["SubscriptionLimitReached"] * 5 + ["ok"] * 3
    assert WebhookSubscription.objects.filter(account=account).count() == 3
    subs = list(WebhookSubscription.objects.filter(account=account).values_list("id", flat=True))
    results.clear()
    monkeypatch.setattr(services, "_enqueue", lambda delivery_id, countdown=0: None)  # no broker here
    race(lambda i: subscription_test_send(subscription_id=subs[i % 3]))
    assert sorted(results) == ["SubscriptionTestLimited"] * 4 + ["ok"] * 4
    assert WebhookEvent.objects.filter(kind="test", account=account).count() == 4
