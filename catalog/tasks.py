from __future__ import annotations

from celery import shared_task

from catalog.counters import counters_flush
from catalog.services import heartbeat_record


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    """Scheduled by beat, run by a worker: proves the broker, beat and a worker all move."""
    heartbeat_record(name="celery-worker")


@shared_task(ignore_result=True)
def flush_counters() -> None:
    """Move hit counts from Redis into DailyCounter rows (a no-op without Redis)."""
    counters_flush()
