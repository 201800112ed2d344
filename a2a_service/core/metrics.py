"""Every Prometheus metric the service exports, and their exposition.

The table below is the one list of names: docs/operations/ (dashboard, alert rules) refer to
these, and tests/a2a_service/core/test_metrics.py checks that each name they use is in a scrape.

Several processes per node (granian's workers, Celery's pool): with PROMETHEUS_MULTIPROC_DIR
set in the environment before a process starts, prometheus_client writes each process's
samples to files in that directory and a scrape adds them up (its multiprocess mode). Every
process of a node shares the directory, which is emptied when the node boots (systemd-tmpfiles
`D`, or `make run` at start) and never while processes run: a process keeps its files open, and
deleting them would lose what it counts from then on.

Figures that describe the database or the broker (feed ages, deposits waiting, queue depth) are
not counted by anyone: collectors compute them when scraped (`scrape_collector_register`; the
apps register theirs when they are ready, this package imports no app)."""

from __future__ import annotations

import logging
import os
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY as PROCESS_REGISTRY
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from a2a_service.core.background import repeat_every
from a2a_service.core.ratelog import log_throttled

logger = logging.getLogger(__name__)
# No `_created` sample beside each counter and histogram: nothing here reads them, and they
# would double the exposition.
disable_created_metrics()

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Seconds; the fast paths answer in well under a millisecond, a paid call settling on chain in seconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SLOW_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
DELAY_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)

# Which layer answered a request: Django, or one of the WSGI layers in front of it (wsgi.py;
# internal: the metrics endpoint). A fast layer's answers are its hits: the free-document
# cache's and the challenge cache's hits are the request counts with their layer.
LAYERS = ("django", "free_cache", "challenge_cache", "credit_fast", "signin_fast", "voucher_fast", "internal")
# What became of a paid call (billing/paid_call.py): served (content delivered, paid),
# replayed (an Idempotency-Key's first answer again, nothing charged), refused (the payment:
# a bad or used proof, not enough credit, a used-up session), pending (paid, not delivered
# yet: a settlement not confirmed, or collected later with the same proof), refunded (a
# payment was held, then given back because the product failed or the facilitator could not
# be reached), unavailable (nothing to deliver; nothing held), error (anything else).
PAID_OUTCOMES = ("served", "replayed", "refused", "pending", "refunded", "unavailable", "error")
RAILS = ("x402", "credits", "session", "mcp_managed", "free")
# Money events (a2a_service/core/observe.py money_event), each logged once with its ids.
MONEY_EVENTS = (
    "claim",
    "settle",
    "release",
    "fail",
    "debit",
    "refund",
    "deposit",
    "adjustment",
    "reversal",
    "reward",
)
WEBHOOK_RESULTS = ("delivered", "retry", "dead", "superseded")

HTTP_REQUEST_SECONDS = Histogram(
    "a2a_http_request_duration_seconds",
    "Requests by route (URL pattern), method, status and the layer that answered them",
    ["route", "method", "status", "layer"],
    buckets=LATENCY_BUCKETS,
)
PAID_CALLS = Counter("a2a_paid_calls", "Paid calls by rail and outcome", ["rail", "outcome"])
X402_SETTLEMENT_SECONDS = Histogram(
    "a2a_x402_settlement_duration_seconds",
    "x402 settlements by outcome (settled, pending, failed, unreachable): time the facilitator took",
    ["outcome"],
    buckets=SLOW_BUCKETS,
)
MONEY_EVENT_COUNT = Counter("a2a_money_events", "Money events by kind", ["event"])
MONEY_EVENT_ATOMIC = Counter("a2a_money_events_atomic", "Atomic USDC moved by money events, by kind", ["event"])
WEBHOOK_ATTEMPTS = Counter("a2a_webhook_attempts", "Webhook delivery attempts by result", ["result"])
WEBHOOK_DEAD_LETTERS = Counter("a2a_webhook_dead_letters", "Webhook deliveries dead-lettered (refunded)")
WEBHOOK_ATTEMPT_SECONDS = Histogram(
    "a2a_webhook_attempt_duration_seconds", "One webhook attempt's HTTP exchange", buckets=SLOW_BUCKETS
)
WEBHOOK_DELIVERY_DELAY = Histogram(
    "a2a_webhook_delivery_delay_seconds",
    "From the event to its successful delivery (retries included)",
    buckets=DELAY_BUCKETS,
)
FEED_PASSES = Counter("a2a_feed_passes", "Feed passes by source and outcome (ok, failed)", ["source", "outcome"])
FEED_ROWS = Counter("a2a_feed_rows", "Rows written by successful feed passes", ["source"])
CELERY_TASK_FAILURES = Counter("a2a_celery_task_failures", "Celery tasks that raised", ["task"])
DEPOSIT_SCANS = Counter("a2a_deposit_scans", "Deposit watcher scans by outcome (ok, failed)", ["outcome"])

class BufferedHistogram:
    """Observations of a labelled histogram counted in this process's memory and added to it
    every FLUSH_SECONDS (in a thread), before this process answers a scrape, and at exit.

    For the request histogram: every request is observed, and prometheus_client's own observe
    takes a lock and, in multiprocess mode, writes a memory-mapped file (some microseconds: a
    third of what a fast path's whole answer costs). Here an observation is a dictionary update. A process
    killed outright loses at most its last FLUSH_SECONDS of observations; another process's
    scrape sees this one's observations within FLUSH_SECONDS."""

    FLUSH_SECONDS = 1.0

    def __init__(self, histogram: Histogram, buckets: tuple[float, ...]) -> None:
        self.histogram = histogram
        self.bounds = (*buckets, float("inf"))
        # label values -> [count in each bucket..., sum]
        self._pending: dict[tuple[str, ...], list[float]] = {}
        self._lock = threading.Lock()
        self._flushing = False
        # A forked child (a web or Celery worker) flushes its own observations, not its parent's.
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._lock = threading.Lock()
        self._pending = {}
        self._flushing = False

    def observe(self, labels: tuple[str, ...], amount: float) -> None:
        if not self._flushing:  # a flag, not a pid check per call (forks reset it: _forked)
            self._start()
        i = bisect_left(self.bounds, amount)  # the first bucket whose bound is >= amount (le)
        with self._lock:
            row = self._pending.get(labels)
            if row is None:
                row = self._pending[labels] = [0.0] * (len(self.bounds) + 1)
            row[i] += 1
            row[-1] += amount

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for labels, row in pending.items():
            child = self.histogram.labels(*labels)
            # prometheus_client's Histogram keeps one value per bucket (not cumulative) and the sum.
            for bucket, count in zip(child._buckets, row, strict=False):
                if count:
                    bucket.inc(count)
            child._sum.inc(row[-1])

    def _start(self) -> None:
        with self._lock:
            if self._flushing:
                return
            self._flushing = True
        repeat_every(self.FLUSH_SECONDS, self.flush, name="request-metrics")


REQUESTS = BufferedHistogram(HTTP_REQUEST_SECONDS, LATENCY_BUCKETS)

# Series that alerts divide or compare exist from the start (0), not from their first event.
for _rail in RAILS:
    for _outcome in PAID_OUTCOMES:
        PAID_CALLS.labels(_rail, _outcome)
for _event in MONEY_EVENTS:
    MONEY_EVENT_COUNT.labels(_event)
    MONEY_EVENT_ATOMIC.labels(_event)
for _result in WEBHOOK_RESULTS:
    WEBHOOK_ATTEMPTS.labels(_result)
for _outcome in ("ok", "failed"):
    DEPOSIT_SCANS.labels(_outcome)


# --- computed when scraped ----------------------------------------------------------------------
ScrapeCollector = Callable[[], Iterable[Metric]]
SCRAPE_COLLECTORS: dict[str, ScrapeCollector] = {}


def scrape_collector_register(name: str, collect: ScrapeCollector) -> None:
    """`collect` yields metric families computed now (from the database, the broker). One that
    fails does not fail the scrape: a2a_scrape_collector_up{collector=name} says 0."""
    SCRAPE_COLLECTORS[name] = collect


class _Computed:
    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily(
            "a2a_scrape_collector_up", "Whether a collector computed at scrape time answered", labels=["collector"]
        )
        for name, collect in SCRAPE_COLLECTORS.items():
            try:
                families = list(collect())
            except Exception:
                log_throttled(logger, f"metrics-collector-{name}", "metrics collector %s failed", name)
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            yield from families
        yield up


class _ThisProcess:
    """The metrics of this process alone (no multiprocess directory: tests, a single process)."""

    def collect(self) -> Iterable[Metric]:
        return PROCESS_REGISTRY.collect()


def metrics_text(*, multiproc_dir: str | None = None) -> bytes:
    """The exposition: every process's samples (PROMETHEUS_MULTIPROC_DIR, or `multiproc_dir`),
    else this process's, and the collectors computed now."""
    REQUESTS.flush()
    registry = CollectorRegistry()
    path = multiproc_dir or os.environ.get(MULTIPROC_ENV)
    if path:
        MultiProcessCollector(registry, path=path)
    else:
        registry.register(_ThisProcess())
    registry.register(_Computed())
    return generate_latest(registry)


# --- Celery queue depth, read from the broker ------------------------------------------------------
def celery_queues() -> list[str]:
    from django.conf import settings

    return list(dict.fromkeys(settings.METRICS_CELERY_QUEUES))


@lru_cache(maxsize=2)
def _broker_redis(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


# kombu's Redis transport keeps a queue's messages of priority p > 0 under "<queue>\x06\x16<p>".
_KOMBU_PRIORITY_SEP = "\x06\x16"
_KOMBU_PRIORITY_STEPS = (0, 3, 6, 9)


def celery_queue_depths() -> dict[str, int]:
    """Messages waiting in each queue: LLEN on a Redis broker (every priority's list), the
    message files of the local stack's filesystem broker."""
    from django.conf import settings

    url = settings.CELERY_BROKER_URL
    queues = celery_queues()
    if url.startswith(("redis://", "rediss://", "unix://")):
        pipe = _broker_redis(url).pipeline(transaction=False)
        for queue in queues:
            for step in _KOMBU_PRIORITY_STEPS:
                pipe.llen(f"{queue}{_KOMBU_PRIORITY_SEP}{step}" if step else queue)
        lengths = pipe.execute()
        n = len(_KOMBU_PRIORITY_STEPS)
        return {queue: sum(lengths[i * n : (i + 1) * n]) for i, queue in enumerate(queues)}
    if url.startswith("filesystem://"):
        folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        depths = dict.fromkeys(queues, 0)
        # kombu names each message "<ms>_<uuid>.<queue>.msg".
        for entry in os.scandir(folder) if folder.is_dir() else ():
            queue = entry.name.partition(".")[2].removesuffix(".msg")
            if queue in depths:
                depths[queue] += 1
        return depths
    return {}


def _queue_depth_collect() -> Iterable[Metric]:
    family = GaugeMetricFamily("a2a_celery_queue_depth", "Celery messages waiting in each queue", labels=["queue"])
    for queue, depth in celery_queue_depths().items():
        family.add_metric([queue], depth)
    yield family


scrape_collector_register("celery_queues", _queue_depth_collect)
