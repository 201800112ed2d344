"""The coordination pool of a desk: its members receive each of the desk's copy signals in
staggered slots with a size allocation, so they do not all hit the same book at once.

- Slots: the active members in join order; member i's delivery of a signal is due
  i x POOL_SLOT_SECONDS after the signal was handed over (the webhook delivery's countdown and
  its next_attempt_at, so neither the queue nor the sweeper sends it earlier).
- Size: the desk publishes POOL_SIGNAL_SIZE_USDC x the signal's size fraction (its risk-based
  copy sizing). Each member asks for max_size_usdc, or share x that size; when the asks add up
  to more than the size, every allocation is scaled down pro rata (rounded down to the atomic
  unit), so a signal's allocations never add up to more than the size published.
- Webhook: the membership's own subscription when it joined with webhook_url (its secret shown
  once), else every active webhook of the account subscribed to pool_signal."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from a2a_service.core.errors import Conflict, RequestValidationError
from a2a_service.core.formats import iso
from a2a_service.core.money import atomic_from_usdc, usdc_from_atomic
from billing.models import Account
from catalog.models import DeskSignal
from webhooks.delegation.services import desk_known, signal_size_fraction
from webhooks.models import PoolDelivery, PoolMembership, WebhookSubscription
from webhooks.services import TargetRefused, event_publish, subscription_create


def allocate(size_atomic: int, requests: list[int]) -> list[int]:
    """The members' allocations of one signal: their requests (each capped at the size), scaled
    down pro rata when they add up to more than the size. sum(result) <= size_atomic."""
    asks = [max(0, min(r, size_atomic)) for r in requests]
    total = sum(asks)
    if total <= size_atomic:
        return asks
    return [a * size_atomic // total for a in asks]


def published_size_atomic(fraction: float) -> int:
    return int(atomic_from_usdc(settings.POOL_SIGNAL_SIZE_USDC) * Decimal(str(fraction)))


def requested_atomic(member: PoolMembership, size_atomic: int) -> int:
    if member.max_size_atomic is not None:
        return int(member.max_size_atomic)
    return int(size_atomic * Decimal(str(member.share or 0)))


def members_of(desk: str) -> list[PoolMembership]:
    """The active members in slot order (join order)."""
    return list(PoolMembership.objects.filter(desk=desk, left_at__isnull=True).order_by("joined_at", "id"))


def pool_join(
    *,
    account: Account,
    desk: str,
    max_size_usdc: float | None,
    share: float | None,
    webhook_url: str | None,
) -> tuple[PoolMembership, str | None]:
    """Enroll the account in the desk's pool; (membership, the new webhook's secret or None).
    422: unknown desk, no webhook to push to, a refused target; 409: already a member."""
    if not desk_known(desk):
        raise RequestValidationError.single(["body", "desk"], f"unknown desk {desk!r}", "desk_unknown")
    with transaction.atomic():
        if PoolMembership.objects.filter(account=account, desk=desk, left_at__isnull=True).exists():
            raise Conflict(f"already in the {desk} pool; leave it first (POST /api/a2a/pool/leave)")
        sub = None
        if webhook_url:
            try:
                sub = subscription_create(
                    account=account,
                    url=webhook_url,
                    events=["pool_signal"],
                    description=f"coordination pool: {desk}",
                )
            except TargetRefused as exc:
                raise RequestValidationError.single(
                    ["body", "webhook_url"], str(exc), "webhook_target"
                ) from None
        elif not any(
            "pool_signal" in (s.events or [])
            for s in WebhookSubscription.objects.filter(account=account, is_active=True)
        ):
            raise RequestValidationError.single(
                ["body", "webhook_url"],
                "no webhook to push to: give webhook_url, or register a webhook subscribed to pool_signal "
                "(POST /api/a2a/account/webhooks/register)",
                "webhook_missing",
            )
        member = PoolMembership.objects.create(
            account=account,
            desk=desk,
            max_size_atomic=atomic_from_usdc(max_size_usdc) if max_size_usdc is not None else None,
            share=share if max_size_usdc is None else None,
            subscription=sub,
        )
    return member, (sub.secret if sub is not None else None)


def pool_leave(*, account: Account, desk: str) -> PoolMembership | None:
    """Leave the desk's pool: no more deliveries; the pool's own webhook is disabled (what its
    pending deliveries were charged is refunded). None when not a member."""
    with transaction.atomic():
        member = (
            PoolMembership.objects.select_for_update()
            .filter(account=account, desk=desk, left_at__isnull=True)
            .first()
        )
        if member is None:
            return None
        member.left_at = timezone.now()
        member.save(update_fields=["left_at"])
        if member.subscription_id is not None:
            WebhookSubscription.objects.filter(pk=member.subscription_id).update(
                is_active=False, disabled_reason="left the coordination pool"
            )
    return member


def pool_dispatch(*, signal: DeskSignal) -> list[PoolDelivery]:
    """Push a new signal to its desk's pool: one PoolDelivery per member (slot, allocation),
    each a pool_signal event due in its slot. Once per signal (under the signal's row lock)."""
    with transaction.atomic():
        locked = DeskSignal.objects.select_for_update().filter(pk=signal.pk, closed_at__isnull=True).first()
        if locked is None or PoolDelivery.objects.filter(signal=locked).exists():
            return []
        # Members who joined after the signal opened get the next one.
        members = [m for m in members_of(locked.desk) if m.joined_at <= locked.opened_at]
        if not members:
            return []
        fraction = signal_size_fraction(locked)
        size = published_size_atomic(fraction)
        asks = [requested_atomic(m, size) for m in members]
        shares = allocate(size, asks)
        now = timezone.now()
        step = settings.POOL_SLOT_SECONDS
        out = []
        for slot, (member, ask, allocation) in enumerate(zip(members, asks, shares, strict=True)):
            deliver_at = now + timedelta(seconds=slot * step)
            payload = {
                "signal_id": locked.id,
                "desk": locked.desk,
                "symbol": locked.symbol,
                "side": locked.side,
                "venue": locked.venue,
                "entry_price": float(locked.entry_price),
                "stop": float(locked.stop_price) if locked.stop_price is not None else None,
                "target": float(locked.target_price) if locked.target_price is not None else None,
                "opened_at": iso(locked.opened_at) or "",
                "size_fraction": round(fraction, 6),
                "published_size_usdc": usdc_from_atomic(size),
                "requested_usdc": usdc_from_atomic(ask),
                "allocation_usdc": usdc_from_atomic(allocation),
                "slot": slot,
                "slots": len(members),
                "slot_seconds": step,
                "deliver_at": iso(deliver_at) or "",
            }
            event = event_publish(
                kind="pool_signal",
                payload=payload,
                account_id=member.account_id,
                subscription_id=member.subscription_id,
                delay_seconds=slot * step,
            )
            out.append(
                PoolDelivery.objects.create(
                    membership=member,
                    signal=locked,
                    slot=slot,
                    requested_atomic=ask,
                    allocation_atomic=allocation,
                    published_size_atomic=size,
                    deliver_at=deliver_at,
                    event=event,
                )
            )
    return out
