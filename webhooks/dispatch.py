"""Desk signals to execution delegations and coordination pools: catalog sends
`desk_signal_published` once the signal's transaction committed (entry orders, pooled
deliveries); a signal's close (its save) brings the exit orders once committed; the sweep (beat,
dispatch-desk-signals) hands over what a process that died in between did not. Both are
idempotent: one order per delegation and signal, one pool dispatch per signal."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models.signals import pre_save
from django.dispatch import receiver
from django.utils import timezone

from catalog.models import DeskSignal
from catalog.signals import desk_signal_published
from webhooks.delegation.services import delegations_dispatch, exits_dispatch, order_create, order_exit_create
from webhooks.models import DelegatedOrder, Delegation, PoolDelivery, PoolMembership
from webhooks.pool.services import pool_dispatch

logger = logging.getLogger(__name__)

# The sweep looks this far back: a signal older than this is no longer handed over late.
SWEEP_LOOKBACK = timedelta(hours=1)


def signal_dispatch(*, signal_id: int) -> tuple[int, int]:
    """(orders created, pool deliveries created) for one open signal."""
    signal = DeskSignal.objects.filter(pk=signal_id, closed_at__isnull=True).first()
    if signal is None:
        return 0, 0
    return len(delegations_dispatch(signal=signal)), len(pool_dispatch(signal=signal))


@receiver(desk_signal_published)
def desk_signal_handed_over(sender: type, signal_id: int, **kwargs: Any) -> None:
    # After the publisher's commit: a failure here must not fail the publisher (the analytics
    # pass); the sweep hands the signal over later.
    try:
        signal_dispatch(signal_id=signal_id)
    except Exception:
        logger.exception("desk signal %s: delegation/pool dispatch failed; the sweep will retry", signal_id)


def _exits(signal_id: int) -> None:
    try:
        exits_dispatch(signal_id=signal_id)
    except Exception:
        logger.exception("desk signal %s: exit orders failed; the sweep will retry", signal_id)


@receiver(pre_save, sender=DeskSignal)
def desk_signal_closing(sender: type, instance: DeskSignal, **kwargs: Any) -> None:
    """A signal being closed (catalog/editorial/track_record.py desk_signal_close): once that commits,
    each delegation holding a fill of its entry order gets the exit order."""
    if instance.pk is None or instance.closed_at is None:
        return
    if DeskSignal.objects.filter(pk=instance.pk, closed_at__isnull=False).exists():
        return  # already closed before this save
    signal_id = instance.pk
    transaction.on_commit(lambda: _exits(signal_id))


def desk_signals_dispatch_due() -> int:
    """Open signals of the last SWEEP_LOOKBACK that an active delegation or pool of their desk
    has not received; returns how many signals were handed over."""
    now = timezone.now()
    desks = set(
        Delegation.objects.filter(revoked_at__isnull=True, expires_at__gt=now).values_list("desk", flat=True)
    ) | set(PoolMembership.objects.filter(left_at__isnull=True).values_list("desk", flat=True))
    if not desks:
        return 0
    n = 0
    for signal in DeskSignal.objects.filter(
        desk__in=desks, closed_at__isnull=True, opened_at__gte=now - SWEEP_LOOKBACK
    ).order_by("opened_at", "id"):
        pooled = PoolDelivery.objects.filter(signal=signal).exists()
        active = Delegation.objects.filter(
            desk=signal.desk, revoked_at__isnull=True, expires_at__gt=now, created_at__lte=signal.opened_at
        ).exclude(orders__signal=signal)
        if pooled and not active.exists():
            continue
        orders = 0
        for d in active:
            orders += order_create(delegation=d, signal=signal) is not None
        deliveries = 0 if pooled else len(pool_dispatch(signal=signal))
        n += bool(orders or deliveries)
    # Exits of the signals closed meanwhile whose close was not handed over.
    pending = DelegatedOrder.objects.filter(
        kind=DelegatedOrder.Kind.ENTRY,
        signal__closed_at__gte=now - SWEEP_LOOKBACK,
        delegation__revoked_at__isnull=True,
        delegation__expires_at__gt=now,
        fills__isnull=False,
    ).exclude(exits__isnull=False)
    for entry in pending.select_related("signal").distinct():
        if entry.signal is not None and order_exit_create(entry=entry, signal=entry.signal) is not None:
            n += 1
    return n
