"""Feed schedules in django-celery-beat's tables: one PeriodicTask per registered source,
running `feeds.run_source` at the source's interval. Created when missing (after migrate and
before an ingest_feeds run), never overwritten: staff edit intervals and enable/disable
sources in the admin (Periodic tasks), and those edits stay."""

from __future__ import annotations

import json

from django_celery_beat.models import IntervalSchedule, PeriodicTask

from catalog.feeds.registry import feeds_all
from catalog.models import FeedState

TASK = "feeds.run_source"


def periodic_task_name(source: str) -> str:
    return f"feed: {source}"


def feeds_schedule_sync() -> int:
    """Create the missing PeriodicTasks (and FeedState rows); returns how many tasks were created."""
    created = 0
    for source in feeds_all():
        FeedState.objects.get_or_create(name=source.name)  # listed in the admin before its first pass
        name = periodic_task_name(source.name)
        if PeriodicTask.objects.filter(name=name).exists():
            continue
        interval, _ = IntervalSchedule.objects.get_or_create(
            every=source.interval_seconds, period=IntervalSchedule.SECONDS
        )
        PeriodicTask.objects.create(
            name=name,
            task=TASK,
            interval=interval,
            args=json.dumps([source.name]),
            description=source.description or f"one pass of the {source.name} feed",
        )
        created += 1
    return created
