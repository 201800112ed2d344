"""Webhook subscriptions, the outbox, and delivery (Standard Webhooks signing and retries)."""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import secrets
import socket
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from standardwebhooks import Webhook

from catalog.http import outbound_request
from webhooks.models import DeliveryAttempt, WebhookDelivery, WebhookEvent, WebhookSubscription

# Standard Webhooks' suggested schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h,
# 10 h, 10 h. WEBHOOK_RETRY_SCALE compresses it (tests, demos).
RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000]


class TargetRefused(Exception):
    pass


def target_check(url: str) -> None:
    """https in production; never a private, loopback or link-local address unless allowed."""
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
    try:
        infos = socket.getaddrinfo(parsed.hostname, port or 443, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, ValueError):  # UnicodeError: a host IDNA cannot encode
        raise TargetRefused(f"{parsed.hostname} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if (
            address.is_private
            or address.is_loopback
            or address.is_link_local
            or address.is_reserved
            or address.is_multicast
            or address.is_unspecified
        ):
            raise TargetRefused(f"{parsed.hostname} resolves to a non-public address ({address})")


def subscription_create(
    *, account: Any, url: str, events: list[str], description: str = ""
) -> WebhookSubscription:
    target_check(url)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    return WebhookSubscription.objects.create(
        account=account, url=url, events=sorted(set(events)), description=description or "", secret=secret
    )


def event_publish(
    *, kind: str, payload: dict[str, Any], account_id: int | None = None, subscription_id: int | None = None
) -> WebhookEvent:
    """Write the event and its deliveries in the caller's transaction (the outbox); the
    deliveries are queued only once it commits, and the sweeper finds any that were not.

    An account with an active signal desk pack gets the event as part of the pack. Any other
    account pays the kind's outcome price from its credits now; without enough credit the
    delivery is recorded as skipped and never sent."""
    from billing.credits import InsufficientCredit, credit_debit
    from webhooks.models import EventPrice, PushEntitlement

    with transaction.atomic():
        event = WebhookEvent.objects.create(kind=kind, payload=payload)
        targets = WebhookSubscription.objects.filter(is_active=True)
        if account_id is not None:
            targets = targets.filter(account_id=account_id)
        if subscription_id is not None:
            targets = targets.filter(pk=subscription_id)
        price = 0
        if kind != "test":
            price = EventPrice.objects.filter(kind=kind).values_list("price_atomic", flat=True).first() or 0
        entitled = set(
            PushEntitlement.objects.filter(expires_at__gt=timezone.now()).values_list("account_id", flat=True)
        )
        ids = []
        for sub in targets:
            if kind != "test" and kind not in sub.events:
                continue
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
                event=event, subscription=sub, state=state, charged_atomic=charged, last_error=error
            )
            if state == WebhookDelivery.State.PENDING:
                ids.append(delivery.id)
        transaction.on_commit(lambda: [_enqueue(i) for i in ids])
    return event


def _refund(delivery: WebhookDelivery) -> None:
    """A paid event that was never delivered is given back."""
    if delivery.charged_atomic:
        from billing.credits import credit_add
        from billing.models import LedgerEntry

        credit_add(
            account_id=delivery.subscription.account_id,
            amount_atomic=delivery.charged_atomic,
            kind=LedgerEntry.Kind.REFUND,
            reference=f"undelivered webhook {delivery.event.message_id}",
        )
        WebhookDelivery.objects.filter(pk=delivery.pk).update(charged_atomic=0)


def _enqueue(delivery_id: int, countdown: float = 0) -> None:
    from webhooks.tasks import deliver

    deliver.apply_async(
        args=[delivery_id], countdown=max(countdown, 0), queue=settings.WEBHOOK_DELIVERY_QUEUE
    )


def _backoff(attempts: int) -> float:
    base = RETRY_SCHEDULE_SECONDS[min(attempts - 1, len(RETRY_SCHEDULE_SECONDS) - 1)]
    return base * settings.WEBHOOK_RETRY_SCALE * random.uniform(0.9, 1.1)


def delivery_claim(*, delivery_id: int) -> WebhookDelivery | None:
    """Claim a due delivery with a conditional update; a claim whose lease ran out (its worker
    died) can be claimed again, so no event is lost."""
    now = timezone.now()
    lease = now + timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS * 3)
    claimed = WebhookDelivery.objects.filter(
        Q(state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now)
        | Q(state=WebhookDelivery.State.DELIVERING, claimed_until__lt=now),
        pk=delivery_id,
    ).update(state=WebhookDelivery.State.DELIVERING, claimed_until=lease)
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("event", "subscription").get(pk=delivery_id)


def delivery_attempt(*, delivery_id: int) -> str:
    """One attempt. Returns the resulting state."""
    delivery = delivery_claim(delivery_id=delivery_id)
    if delivery is None:
        return "not_due"
    event, sub = delivery.event, delivery.subscription
    if not sub.is_active:
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            state=WebhookDelivery.State.DEAD, last_error="subscription disabled"
        )
        _refund(delivery)
        return WebhookDelivery.State.DEAD
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
            "POST", sub.url, data=body.encode(), headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
        )
        status, excerpt = resp.status_code, resp.text[:500]
        retry_after = resp.headers.get("Retry-After")
    except Exception as exc:  # refused, timeout, TLS: an attempt that failed
        error = f"{type(exc).__name__}: {exc}"[:300]
    latency = round((time.perf_counter() - started) * 1000, 1)
    attempts = delivery.attempts + 1
    DeliveryAttempt.objects.create(
        delivery=delivery, status_code=status, latency_ms=latency, response_excerpt=excerpt, error=error
    )
    update: dict[str, Any] = {
        "attempts": attempts,
        "last_status": status,
        "last_error": error,
        "claimed_until": None,
    }
    if status is not None and 200 <= status < 300:
        update.update(state=WebhookDelivery.State.DELIVERED, delivered_at=timezone.now())
    elif status == 410:
        WebhookSubscription.objects.filter(pk=sub.pk).update(
            is_active=False, disabled_reason="receiver answered 410"
        )
        update.update(state=WebhookDelivery.State.DEAD, last_error="410 Gone: subscription disabled")
        _refund(delivery)
    elif attempts > len(RETRY_SCHEDULE_SECONDS):
        update.update(state=WebhookDelivery.State.DEAD)
        _refund(delivery)
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
        transaction.on_commit(lambda: _enqueue(delivery.pk, countdown=wait))
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**update)
    return update["state"]


def delivery_replay(*, delivery_id: int) -> None:
    """Staff replay of a dead-lettered delivery: a fresh schedule, the same webhook-id."""
    WebhookDelivery.objects.filter(pk=delivery_id, state=WebhookDelivery.State.DEAD).update(
        state=WebhookDelivery.State.PENDING, attempts=0, next_attempt_at=timezone.now(), claimed_until=None
    )
    transaction.on_commit(lambda: _enqueue(delivery_id))


def deliveries_sweep() -> int:
    """Queue what is due: pending deliveries whose time has come (including ones whose queue
    message was lost) and claims whose worker died."""
    now = timezone.now()
    due = list(
        WebhookDelivery.objects.filter(
            Q(state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now)
            | Q(state=WebhookDelivery.State.DELIVERING, claimed_until__lt=now)
        ).values_list("id", flat=True)[:500]
    )
    for delivery_id in due:
        _enqueue(delivery_id)
    return len(due)
