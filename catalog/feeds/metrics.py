"""The feeds' figures computed when /internal/metrics is scraped (a2a_service/core/metrics.py):
how long ago each source last passed, the interval it is scheduled at, and how many passes in
a row have failed. A source is stale when its last success is several intervals old."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from prometheus_client.core import GaugeMetricFamily, Metric

from catalog.feeds.registry import feeds_all
from catalog.feeds.schedule import TASK
from catalog.models import FeedState


def _scheduled_intervals() -> dict[str, float | None]:
    """Each scheduled source's interval as staff set it in beat's table (None: disabled, or not
    on an interval)."""
    intervals: dict[str, float | None] = {}
    for task in PeriodicTask.objects.filter(task=TASK).select_related("interval"):
        try:
            (source,) = json.loads(task.args or "[]")
        except (ValueError, TypeError):
            continue
        every = task.interval.schedule.run_every.total_seconds() if task.interval is not None else None
        intervals[str(source)] = every if task.enabled else None
    return intervals


def feed_metrics() -> Iterable[Metric]:
    now = timezone.now()
    registered = {source.name: source for source in feeds_all()}
    states = {state.name: state for state in FeedState.objects.filter(name__in=registered)}
    scheduled = _scheduled_intervals()
    age = GaugeMetricFamily(
        "a2a_feed_last_success_age_seconds",
        "Seconds since the source's last successful pass (+Inf: never)",
        labels=["source"],
    )
    interval = GaugeMetricFamily(
        "a2a_feed_interval_seconds",
        "The interval the source is scheduled at (absent: its schedule is disabled)",
        labels=["source"],
    )
    failures = GaugeMetricFamily(
        "a2a_feed_consecutive_failures", "Failed passes in a row, by source", labels=["source"]
    )
    for name, source in sorted(registered.items()):
        state = states.get(name)
        last = state.last_success_at if state is not None else None
        age.add_metric([name], (now - last).total_seconds() if last is not None else math.inf)
        failures.add_metric([name], state.consecutive_failures if state is not None else 0)
        every = scheduled[name] if name in scheduled else float(source.interval_seconds)  # unscheduled: default
        if every is not None:
            interval.add_metric([name], every)
    yield from (age, interval, failures)
