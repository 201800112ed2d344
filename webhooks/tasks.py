from __future__ import annotations

from celery import shared_task

from webhooks.services import deliveries_sweep, delivery_attempt


@shared_task(ignore_result=True, acks_late=True)
def deliver(delivery_id: int) -> str:
    """Takes an id; a duplicate or early message finds nothing due and does nothing."""
    return delivery_attempt(delivery_id=delivery_id)


@shared_task(ignore_result=True)
def sweep_deliveries() -> int:
    return deliveries_sweep()


@shared_task(ignore_result=True)
def push_morning_brief() -> int:
    from webhooks.signals import morning_brief_push_due

    return morning_brief_push_due()


@shared_task(ignore_result=True)
def dispatch_desk_signals() -> int:
    from webhooks.dispatch import desk_signals_dispatch_due

    return desk_signals_dispatch_due()
