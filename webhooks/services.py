"""Webhook subscriptions, the outbox, and delivery (Standard Webhooks signing and retries)."""

from __future__ import annotations

import base64
import json
import logging
import random
import secrets
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlparse

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from standardwebhooks import Webhook

from a2a_service.core.errors import Conflict
from a2a_service.core.http import TargetRefused, checked_addresses, outbound_request
from a2a_service.core.observe import webhook_attempt_observe
from webhooks.events import DEFAULT_EVENT_PRICES, ENTITLED_ONLY_KINDS
from webhooks.models import (
    DeliveryAttempt,
    DeliveryTurn,
    EventPrice,
    WebhookDelivery,
    WebhookEvent,
    WebhookSubscription,
)

logger = logging.getLogger(__name__)

# Standard Webhooks' suggested schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h,
# 10 h, 10 h. WEBHOOK_RETRY_SCALE compresses it (tests, demos).
RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000]


def event_prices_seed() -> None:
    """The price of each event kind (run by catalog_seed; staff edits are kept)."""
    for kind, price in DEFAULT_EVENT_PRICES.items():
        EventPrice.objects.get_or_create(kind=kind, defaults={"price_atomic": price})


def target_check(url: str) -> None:
    """https in production; never a host that resolves to a non-public address unless allowed.
    Only a first answer to the user: every delivery checks the address again when it
    connects (a2a_service/core/http.py), since DNS can answer differently by then."""
    try:
        parsed = urlparse(url)
        port = parsed.port  # raises on a port out of range or not a number
    except ValueError:  # also a broken IPv6 literal, e.g. http://[::1/
        raise TargetRefused("the URL must be http(s)://host[:port]/...") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise TargetRefused("the URL must be http(s)://host/...")
    if settings.WEBHOOKS_REQUIRE_HTTPS and parsed.scheme != "https":
        raise TargetRefused("webhook URLs must use https")
    if settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS:
        return
    checked_addresses(parsed.hostname, port or (443 if parsed.scheme == "https" else 80), public_only=True)


class SubscriptionLimitReached(Conflict):
    code = "subscription_limit"


def _account_lock(account_id: int) -> None:
    """The account's row lock: what is counted per account (its subscriptions, its test
    events) is counted and written one request at a time, so concurrent requests cannot
    overshoot. Taken after any subscription row lock (as settling and deleting do)."""
    from billing.models import Account

    list(Account.objects.select_for_update().filter(pk=account_id).values_list("pk"))


def subscriptions_counted(*, account_id: int) -> int:
    """The account's subscriptions that count against WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: the
    active ones, except those of an expired delegation (they receive no orders any more)."""
    return (
        WebhookSubscription.objects.filter(account_id=account_id, is_active=True)
        .exclude(delegations__expires_at__lte=timezone.now())
        .count()
    )


def subscription_create(
    *, account: Any, url: str, events: list[str], description: str = ""
) -> WebhookSubscription:
    """A subscription with a fresh signing secret. 409 (SubscriptionLimitReached) when the
    account already has WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT counted subscriptions: each one
    can hold deliveries in flight, so their number per account is bounded."""
    target_check(url)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    cap = settings.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT
    with transaction.atomic():
        _account_lock(account.pk)
        if subscriptions_counted(account_id=account.pk) >= cap:
            raise SubscriptionLimitReached(
                f"this account has {cap} active webhook subscriptions, the most allowed "
                "(WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT); delete one first",
                extra={"max_subscriptions": cap},
            )
        return WebhookSubscription.objects.create(
            account=account, url=url, events=sorted(set(events)), description=description or "", secret=secret
        )


def event_publish(
    *,
    kind: str,
    payload: dict[str, Any],
    account_id: int | None = None,
    subscription_id: int | None = None,
    delay_seconds: float = 0,
) -> WebhookEvent:
    """Write the event and its deliveries in the caller's transaction (the outbox); the
    deliveries are queued only once it commits, and the sweeper finds any that were not.

    An account with an active pack covering the kind (a signal desk pack covers every kind) gets
    the event as part of the pack. A kind in ENTITLED_ONLY_KINDS (morning_brief) goes only to
    accounts whose entitlement names it. Any other
    account pays the kind's outcome price from its credits now; without enough credit the
    delivery is recorded as skipped and never sent.

    `delay_seconds` holds the deliveries back that long (the coordination pool's slots): they
    are due, to the queue's countdown and to the sweeper alike, only then."""
    from billing.credits import InsufficientCredit, credit_debit
    from webhooks.models import EventPrice, PushEntitlement

    with transaction.atomic():
        event = WebhookEvent.objects.create(kind=kind, payload=payload, account_id=account_id)
        targets = WebhookSubscription.objects.filter(is_active=True)
        if account_id is not None:
            targets = targets.filter(account_id=account_id)
        if subscription_id is not None:
            targets = targets.filter(pk=subscription_id)
        price = 0
        if kind != "test":
            price = EventPrice.objects.filter(kind=kind).values_list("price_atomic", flat=True).first() or 0
        # Read in Python: a JSON "contains" lookup is not portable to SQLite, and the active
        # entitlements are few.
        entitled = {
            e.account_id
            for e in PushEntitlement.objects.filter(expires_at__gt=timezone.now()).only("account_id", "kinds")
            if (kind in e.kinds if kind in ENTITLED_ONLY_KINDS else e.covers(kind))
        }
        ids = []
        for sub in targets:
            if kind != "test" and kind not in sub.events:
                continue
            if kind in ENTITLED_ONLY_KINDS and sub.account_id not in entitled:
                continue  # sold only as a product's entitlement (webhooks/events.py)
            charged, state, error = 0, WebhookDelivery.State.PENDING, ""
            if price and sub.account_id not in entitled:
                try:
                    with transaction.atomic():
                        credit_debit(
                            account_id=sub.account_id,
                            amount_atomic=price,
                            sku_id=None,
                            reference=f"webhook {kind} {event.message_id}",
                        )
                    charged = price
                except InsufficientCredit:
                    state, error = WebhookDelivery.State.SKIPPED, "no signal desk pack and not enough credit"
            delivery = WebhookDelivery.objects.create(
                event=event,
                subscription=sub,
                state=state,
                charged_atomic=charged,
                last_error=error,
                next_attempt_at=timezone.now() + timedelta(seconds=max(delay_seconds, 0)),
            )
            if state == WebhookDelivery.State.PENDING:
                ids.append(delivery.id)
        transaction.on_commit(lambda: _enqueue_many(ids, countdown=delay_seconds))
    return event


def _refund_reference(delivery: WebhookDelivery) -> str:
    return f"undelivered webhook {delivery.event.message_id}"


def _credit_back(*, account_id: int, amount_atomic: int, reference: str) -> None:
    from billing.credits import credit_add
    from billing.models import LedgerEntry

    credit_add(
        account_id=account_id, amount_atomic=amount_atomic, kind=LedgerEntry.Kind.REFUND, reference=reference
    )


class SubscriptionTestLimited(Exception):
    def __init__(self, wait_seconds: float) -> None:
        super().__init__(f"test events limited; retry in {wait_seconds:.0f} s")
        self.wait_seconds = wait_seconds


def subscription_delete(*, account_id: int, subscription_id: int) -> bool:
    """Delete a subscription, first giving back what its undelivered events were charged
    (each with its ledger row). Returns False when there is no such subscription of the account."""
    with transaction.atomic():
        # The subscription row first, as claims and 410s do: one lock order, no deadlock.
        sub = (
            WebhookSubscription.objects.select_for_update()
            .filter(pk=subscription_id, account_id=account_id)
            .first()
        )
        if sub is None:
            return False
        owed = WebhookDelivery.objects.filter(subscription=sub, charged_atomic__gt=0).exclude(
            state=WebhookDelivery.State.DELIVERED
        )
        for delivery in owed.select_related("event"):
            # Conditional on the charge still being there and undelivered: a worker that has
            # just settled it (delivered: earned; dead: already refunded) wins.
            taken = (
                WebhookDelivery.objects.filter(pk=delivery.pk, charged_atomic=delivery.charged_atomic)
                .exclude(state=WebhookDelivery.State.DELIVERED)
                .update(charged_atomic=0)
            )
            if taken:
                _credit_back(
                    account_id=sub.account_id,
                    amount_atomic=delivery.charged_atomic,
                    reference=_refund_reference(delivery),
                )
        sub.delete()
    return True


def _test_wait(recent: list[datetime], limit: int, window: timedelta, now: datetime) -> float | None:
    """The newest `limit` sends in the window, newest first: the wait until the oldest of them
    leaves it, or None when there is room."""
    if len(recent) < limit:
        return None
    return max((recent[-1] + window - now).total_seconds(), 1.0)


def subscription_test_send(*, subscription_id: int) -> tuple[WebhookEvent, int]:
    """A free test event, at most WEBHOOK_TEST_EVENTS_PER_WINDOW per subscription and
    WEBHOOK_TEST_EVENTS_PER_ACCOUNT per account per window (counted from the deliveries and the
    account's test events, under the subscription's and then the account's row lock, so
    concurrent requests cannot overshoot). Raises SubscriptionTestLimited with the wait."""
    window = timedelta(seconds=settings.WEBHOOK_TEST_EVENTS_WINDOW_SECONDS)
    per_sub, per_account = settings.WEBHOOK_TEST_EVENTS_PER_WINDOW, settings.WEBHOOK_TEST_EVENTS_PER_ACCOUNT
    with transaction.atomic():
        sub = WebhookSubscription.objects.select_for_update().get(pk=subscription_id)
        _account_lock(sub.account_id)
        now = timezone.now()
        recent = list(
            WebhookDelivery.objects.filter(subscription=sub, event__kind="test", created_at__gt=now - window)
            .order_by("-created_at")
            .values_list("created_at", flat=True)[:per_sub]
        )
        # The account's own test events: kept when a subscription is deleted, so deleting and
        # re-creating subscriptions does not renew the account's allowance.
        account_recent = list(
            WebhookEvent.objects.filter(account_id=sub.account_id, kind="test", created_at__gt=now - window)
            .order_by("-created_at")
            .values_list("created_at", flat=True)[:per_account]
        )
        waits = [
            w
            for w in (
                _test_wait(recent, per_sub, window, now),
                _test_wait(account_recent, per_account, window, now),
            )
            if w is not None
        ]
        if waits:
            raise SubscriptionTestLimited(max(waits))
        event = event_publish(
            kind="test",
            payload={"message": "test event", "subscription_id": sub.id, "sent_at": now.isoformat()},
            account_id=sub.account_id,
            subscription_id=sub.id,
        )
        return event, event.deliveries.filter(subscription=sub).count()


class DeliveryTask(Protocol):
    """What queues one delivery attempt: the Celery task webhooks.tasks.deliver."""

    def apply_async(self, *, args: list[int], countdown: float, queue: str) -> object: ...


# The delivery task is defined above this module (webhooks.tasks runs the deliveries queued
# here), so it is handed down at start (WebhooksConfig.ready) instead of imported.
_DELIVERY_TASK: list[DeliveryTask] = []


def delivery_task_register(task: DeliveryTask) -> None:
    _DELIVERY_TASK[:] = [task]


def _enqueue(delivery_id: int, countdown: float = 0) -> None:
    if not _DELIVERY_TASK:
        raise RuntimeError("no webhook delivery task registered (WebhooksConfig.ready registers it)")
    _DELIVERY_TASK[0].apply_async(
        args=[delivery_id], countdown=max(countdown, 0), queue=settings.WEBHOOK_DELIVERY_QUEUE
    )


def _enqueue_many(delivery_ids: list[int], countdown: float = 0) -> None:
    """Queue deliveries after a commit. The rows are already committed as pending, so a broker
    that is down loses nothing: the sweeper queues them later. One log line, not one per id,
    and the caller (an HTTP request that has committed) never fails for it."""
    for n, delivery_id in enumerate(delivery_ids):
        try:
            _enqueue(delivery_id, countdown)
        except Exception:
            logger.warning(
                "broker unavailable: %d webhook deliveries stay pending for the sweeper",
                len(delivery_ids) - n,
                exc_info=True,
            )
            return


def _backoff(attempts: int) -> float:
    base = RETRY_SCHEDULE_SECONDS[min(attempts - 1, len(RETRY_SCHEDULE_SECONDS) - 1)]
    return base * settings.WEBHOOK_RETRY_SCALE * random.uniform(0.9, 1.1)


def lease_seconds() -> float:
    """How long a claim is held: longer than an attempt can last (its deadline) plus the writes
    after it, so a delivery is claimed again only when its worker really is gone."""
    return settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS * 2 + 5


def _claimable(now: datetime) -> Q:
    return Q(state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now) | Q(
        state=WebhookDelivery.State.DELIVERING, claimed_until__lt=now
    )


def _claim(delivery_id: int, *, defer: bool = True) -> tuple[WebhookDelivery | None, str]:
    """Claim one delivery if it is due and its subscription has room in flight; over the cap it
    is deferred (`defer`) or left as it is (a turn trying the next candidate). A claim moves its
    account's turn (DeliveryTurn) to now, in the same transaction."""
    now = timezone.now()
    row = WebhookDelivery.objects.filter(pk=delivery_id).values_list("subscription_id", "subscription__account_id")
    found = row.first()
    if found is None:
        return None, "not_due"
    subscription_id, account_id = found
    with transaction.atomic():
        # Claims of one subscription are counted and taken one at a time, under its row lock.
        if not list(
            WebhookSubscription.objects.select_for_update().filter(pk=subscription_id).values_list("pk")
        ):
            return None, "not_due"
        in_flight = (
            WebhookDelivery.objects.filter(
                subscription_id=subscription_id,
                state=WebhookDelivery.State.DELIVERING,
                claimed_until__gte=now,
            )
            .exclude(pk=delivery_id)
            .count()
        )
        due = WebhookDelivery.objects.filter(_claimable(now), pk=delivery_id)
        if in_flight >= settings.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION and not defer:
            return None, "busy"
        if in_flight >= settings.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION:
            # Over the cap: put back for later (the sweeper would find it too), not an attempt.
            wait = settings.WEBHOOK_DEFER_SECONDS
            deferred = due.update(
                state=WebhookDelivery.State.PENDING,
                next_attempt_at=now + timedelta(seconds=wait),
                claimed_until=None,
                claim_token=None,
            )
            if not deferred:
                return None, "not_due"
            transaction.on_commit(lambda: _enqueue_many([delivery_id], countdown=wait))
            return None, "deferred"
        token = uuid.uuid4()
        claimed = due.update(
            state=WebhookDelivery.State.DELIVERING,
            claimed_until=now + timedelta(seconds=lease_seconds()),
            claim_token=token,
        )
        if claimed:
            # An upsert: the account's first claim creates its row, concurrent ones do not collide.
            DeliveryTurn.objects.bulk_create(
                [DeliveryTurn(account_id=account_id, last_claimed_at=now)],
                update_conflicts=True,
                unique_fields=["account"],
                update_fields=["last_claimed_at"],
            )
    if not claimed:
        return None, "not_due"
    return WebhookDelivery.objects.select_related("event", "subscription").get(pk=delivery_id), "claimed"


def delivery_claim(*, delivery_id: int) -> WebhookDelivery | None:
    """Claim a due delivery with a conditional update and a fresh claim token; a claim whose
    lease ran out (its worker died) can be claimed again, so no event is lost. None when it is
    not due, already claimed, or deferred because its subscription has enough in flight."""
    return _claim(delivery_id)[0]


def _settle(
    delivery: WebhookDelivery, update: dict[str, Any], *, refund: bool = False, disable: str = ""
) -> bool:
    """The end of an attempt, only while it still holds its claim: one conditional UPDATE on
    the claim token (and, when giving the charge back, on the charge still being there), the
    refund's ledger row and a 410's disabling in the same transaction. An attempt that
    outlived its lease changes nothing: the new claimant settles."""
    amount = delivery.charged_atomic if refund else 0
    with transaction.atomic():
        if disable:  # the subscription row first, as claims and deletes lock it
            list(
                WebhookSubscription.objects.select_for_update()
                .filter(pk=delivery.subscription_id)
                .values_list("pk")
            )
        held = WebhookDelivery.objects.filter(
            pk=delivery.pk, state=WebhookDelivery.State.DELIVERING, claim_token=delivery.claim_token
        )
        if amount:
            held = held.filter(charged_atomic=amount)
            update = {**update, "charged_atomic": 0}
        if not held.update(**update, claimed_until=None, claim_token=None):
            return False
        if amount:
            _credit_back(
                account_id=delivery.subscription.account_id,
                amount_atomic=amount,
                reference=_refund_reference(delivery),
            )
        if disable:
            WebhookSubscription.objects.filter(pk=delivery.subscription_id).update(
                is_active=False, disabled_reason=disable
            )
    return True


def delivery_attempt(*, delivery_id: int) -> str:
    """One attempt. Returns the resulting state ("not_due", "deferred" or "superseded" when
    it did not settle anything)."""
    delivery, outcome = _claim(delivery_id)
    if delivery is None:
        return outcome
    return delivery_send(delivery=delivery)


def delivery_send(*, delivery: WebhookDelivery) -> str:
    """Send a delivery this worker has claimed (`delivery.claim_token`) and settle it if the
    claim still holds."""
    event, sub = delivery.event, delivery.subscription
    if not sub.is_active:
        settled = _settle(
            delivery,
            {"state": WebhookDelivery.State.DEAD, "last_error": "subscription disabled"},
            refund=True,
        )
        result = WebhookDelivery.State.DEAD if settled else "superseded"
        webhook_attempt_observe(result=result, seconds=None)
        return result
    body = json.dumps(
        {
            "type": event.kind,
            "id": event.message_id,
            "created_at": event.created_at.isoformat(),
            "data": event.payload,
        },
        separators=(",", ":"),
    )
    sent_at = datetime.now(tz=UTC)
    headers = {
        "content-type": "application/json",
        "webhook-id": event.message_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(sub.secret).sign(event.message_id, sent_at, body),
    }
    started = time.perf_counter()
    status, excerpt, error, retry_after = None, "", "", None
    try:
        resp = outbound_request(
            "POST",
            sub.url,
            data=body.encode(),
            headers=headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            # The address is checked (and pinned) now, not only when the subscription was made.
            public_only=not settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
            deadline=settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS,
            max_body_bytes=2048,  # only an excerpt is kept
        )
        status, excerpt = resp.status_code, resp.text[:500]
        retry_after = resp.headers.get("Retry-After")
    except Exception as exc:  # refused, deadline, timeout, TLS: an attempt that failed
        error = f"{type(exc).__name__}: {exc}"[:300]
    latency = round((time.perf_counter() - started) * 1000, 1)
    attempts = delivery.attempts + 1
    # The attempt happened whatever becomes of the claim: it is always in the log, unless the
    # delivery itself is gone (its subscription was deleted, and refunded, meanwhile).
    with transaction.atomic():
        # Locked, so the delivery cannot be deleted before the log row referencing it commits.
        if not WebhookDelivery.objects.select_for_update().filter(pk=delivery.pk).exists():
            return "superseded"
        DeliveryAttempt.objects.create(
            delivery=delivery, status_code=status, latency_ms=latency, response_excerpt=excerpt, error=error
        )
    update: dict[str, Any] = {"attempts": attempts, "last_status": status, "last_error": error}
    refund, disable, wait = False, "", None
    if status is not None and 200 <= status < 300:
        update.update(state=WebhookDelivery.State.DELIVERED, delivered_at=timezone.now())
    elif status == 410:
        update.update(state=WebhookDelivery.State.DEAD, last_error="410 Gone: subscription disabled")
        refund, disable = True, "receiver answered 410"
    elif attempts > len(RETRY_SCHEDULE_SECONDS):
        update.update(state=WebhookDelivery.State.DEAD)
        refund = True
    else:
        wait = _backoff(attempts)
        # isascii: '²'.isdigit() is True but float('²') fails; 9 digits: a sane delay, never inf.
        if (
            status in (429, 503)
            and retry_after
            and retry_after.isascii()
            and retry_after.isdigit()
            and len(retry_after) <= 9
        ):
            wait = max(wait, float(retry_after) * settings.WEBHOOK_RETRY_SCALE)
        update.update(
            state=WebhookDelivery.State.PENDING, next_attempt_at=timezone.now() + timedelta(seconds=wait)
        )
    if not _settle(delivery, update, refund=refund, disable=disable):
        webhook_attempt_observe(result="superseded", seconds=latency / 1000)
        return "superseded"
    state = update["state"]
    webhook_attempt_observe(
        result="retry" if state == WebhookDelivery.State.PENDING else state,
        seconds=latency / 1000,
        delivered_after=(
            (update["delivered_at"] - event.created_at).total_seconds()
            if state == WebhookDelivery.State.DELIVERED
            else None
        ),
    )
    if wait is not None:
        countdown = wait
        transaction.on_commit(lambda: _enqueue_many([delivery.pk], countdown=countdown))
    return update["state"]


def delivery_replay(*, delivery_id: int) -> None:
    """Staff replay of a dead-lettered delivery: a fresh schedule, the same webhook-id."""
    WebhookDelivery.objects.filter(pk=delivery_id, state=WebhookDelivery.State.DEAD).update(
        state=WebhookDelivery.State.PENDING,
        attempts=0,
        next_attempt_at=timezone.now(),
        claimed_until=None,
        claim_token=None,
    )
    transaction.on_commit(lambda: _enqueue_many([delivery_id]))


def deliveries_sweep() -> int:
    """Queue what is due: pending deliveries whose time has come (including ones whose queue
    message was lost, or that were never queued because the broker was down) and claims whose
    worker died."""
    due = list(WebhookDelivery.objects.filter(_claimable(timezone.now())).values_list("id", flat=True)[:500])
    _enqueue_many(due)
    return len(due)
