"""Fair turns between accounts on the delivery queue.

The broker's queue is first in, first out: one account that queues many deliveries to slow
receivers (many subscriptions, free test events) would keep every other account's deliveries
waiting behind its backlog. So a queued message does not blindly attempt the delivery it names:
it is one attempt for whoever's turn it is. The worker takes the due delivery of the account
served least recently (DeliveryTurn, moved at each claim; an account never served comes first),
the oldest of that account's first. The named delivery, if still due, gets a message of its own
again, so every due delivery keeps one and nothing waits for the sweeper.

The bound: a delivery that becomes due waits for the attempts already running (one per worker,
each cut at WEBHOOK_ATTEMPT_DEADLINE_SECONDS) and at most one attempt of each other account served
less recently. One account's backlog, however long, therefore delays another account's first
attempt by at most one of its attempts per worker."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import Count, F, OuterRef, Subquery, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from webhooks import services
from webhooks.models import DeliveryTurn, WebhookDelivery

# How many candidates a turn tries to claim before falling back to the named delivery: enough
# for the concurrent workers racing for the same ones.
CANDIDATES = 20


def turn_order(now: datetime, *, limit: int = CANDIDATES) -> list[int]:
    """The due deliveries in the order workers should take them: the oldest due of each
    subscription with room in flight, the least recently served account's first."""
    cap = settings.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION
    full = (
        WebhookDelivery.objects.filter(state=WebhookDelivery.State.DELIVERING, claimed_until__gte=now)
        .order_by()
        .values("subscription_id")
        .annotate(n=Count("id"))
        .filter(n__gte=cap)
        .values("subscription_id")
    )
    served = DeliveryTurn.objects.filter(account_id=OuterRef("subscription__account_id")).values(
        "last_claimed_at"
    )[:1]
    rows = (
        WebhookDelivery.objects.filter(services._claimable(now))
        .exclude(subscription_id__in=full)
        .annotate(
            served=Subquery(served),
            rank=Window(
                RowNumber(),
                partition_by=[F("subscription_id")],
                order_by=[F("next_attempt_at").asc(), F("id").asc()],
            ),
        )
        .filter(rank=1)
        .order_by(F("served").asc(nulls_first=True), "next_attempt_at", "id")
    )
    return list(rows.values_list("id", flat=True)[:limit])


def delivery_turn(*, delivery_id: int) -> str:
    """What one queued message does (webhooks.tasks.deliver): one attempt, of the delivery
    whose turn it is. Falls back to the named delivery (claimed or deferred as before) when no
    candidate can be claimed. Returns the attempt's resulting state, as delivery_attempt."""
    for candidate in turn_order(timezone.now()):
        delivery, _ = services._claim(candidate, defer=False)
        if delivery is None:
            continue  # another worker took it meanwhile, or its subscription filled up
        if candidate != delivery_id and WebhookDelivery.objects.filter(
            services._claimable(timezone.now()), pk=delivery_id
        ).exists():
            # This message was spent on another account's turn: the named delivery gets one again.
            services._enqueue_many([delivery_id])
        return services.delivery_send(delivery=delivery)
    return services.delivery_attempt(delivery_id=delivery_id)
