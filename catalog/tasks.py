from __future__ import annotations

from celery import shared_task

from catalog.counters import counters_flush
from catalog.editorial.briefs import brief_compose
from catalog.editorial.intel import intel_compute
from catalog.feeds.registry import feed_get
from catalog.feeds.retention import feeds_prune
from catalog.feeds.runner import feed_run
from catalog.services import heartbeat_record


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    """Scheduled by beat, run by a worker: proves the broker, beat and a worker all move."""
    heartbeat_record(name="celery-worker")


@shared_task(ignore_result=True)
def flush_counters() -> None:
    """Move hit counts from Redis into DailyCounter rows (a no-op without Redis)."""
    counters_flush()


@shared_task(name="feeds.run_source", ignore_result=True)
def run_source(name: str) -> None:
    """One scheduled pass of one feed source (beat, per its PeriodicTask). Locked and backed
    off by the runner; a failure is recorded on its FeedState, never raised to Celery."""
    if feed_get(name) is None:  # a schedule row left behind by a source no longer installed
        return
    feed_run(name=name)


@shared_task(name="feeds.prune", ignore_result=True)
def prune_feeds() -> None:
    """Delete old rows of the high-volume feed tables (catalog/feeds/retention.py)."""
    feeds_prune()


@shared_task(name="analytics.compute_intel", ignore_result=True)
def compute_intel() -> None:
    """The scheduled analytics pass (catalog/editorial/intel.py): regime snapshot on a change, desk
    signals closed and published, the intel snapshot stored. Beat, every INTEL_COMPUTE_SECONDS."""
    intel_compute()


@shared_task(name="briefs.compose", ignore_result=True)
def compose_brief() -> None:
    """The morning brief (catalog/editorial/briefs.py): beat, daily at MORNING_BRIEF_HOUR_UTC."""
    brief_compose()
