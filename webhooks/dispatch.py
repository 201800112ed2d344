"""Desk signals to execution delegations and coordination pools: catalog sends
`desk_signal_published` once the signal's transaction committed; the sweep (beat,
dispatch-desk-signals) hands over what a process that died in between did not. Both are
idempotent: one order per delegation and signal, one pool dispatch per signal."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.dispatch import receiver
from django.utils import timezone

from catalog.models import DeskSignal
from catalog.signals import desk_signal_published
from webhooks.delegation.services import delegations_dispatch, order_create
from webhooks.models import Delegation, PoolDelivery, PoolMembership
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
    return n
