from __future__ import annotations

from celery import shared_task

from webhooks.dispatch import desk_signals_dispatch_due
from webhooks.services import deliveries_sweep
from webhooks.signals import morning_brief_push_due
from webhooks.turns import delivery_turn


@shared_task(ignore_result=True, acks_late=True)
def deliver(delivery_id: int) -> str:
    """Takes an id; one attempt, of the due delivery whose account's turn it is (webhooks/turns.py),
    the named one when nothing else is due; a message that finds nothing due does nothing."""
    return delivery_turn(delivery_id=delivery_id)


@shared_task(ignore_result=True)
def sweep_deliveries() -> int:
    return deliveries_sweep()


@shared_task(ignore_result=True)
def push_morning_brief() -> int:
    return morning_brief_push_due()


@shared_task(ignore_result=True)
def dispatch_desk_signals() -> int:
    return desk_signals_dispatch_due()
