"""Program health: probes the database, cache, broker and worker heartbeat, and counts the
catalogs, SKUs, agents and venues.

Status: `degraded` when a part is down or stale or a feed source is failing; else `warming_up`
while the first data of a new installation is not in yet (`warming_up` lists what: the worker's
first heartbeat, a first pass of every feed source, the first analytics pass, the first
published morning brief; `make run` says "ready" when the list is empty); else `ok`."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from a2a_service.core.formats import iso
from a2a_service.core.ratelog import log_throttled
from agents.discovery import schemas as s
from catalog.feeds.registry import feeds_all
from catalog.models import (
    CatalogAgent,
    EditorialPiece,
    ExchangeMarket,
    FeedState,
    IntelSnapshot,
    NewsItem,
    PartnerAgent,
    PredictionMarket,
    Sku,
    Teaser,
    TelemetryNode,
    WorkerHeartbeat,
)
from catalog.selectors.skus import on_sale, products_built

# Health answers anyone: it says which part is ok or down, never why. The exception (hosts,
# ports, driver messages) goes to the log, once per LOG_REPEAT_SECONDS per part.
health_logger = logging.getLogger("catalog.health")


def _timed(part: str, check) -> s.ComponentHealth:
    started = time.perf_counter()
    try:
        check()
    except Exception:  # a failing part is reported as down; the endpoint still answers
        log_throttled(health_logger, f"health-{part}", "health check: %s is down", part)
        return s.ComponentHealth(status="down")
    return s.ComponentHealth(status="ok", latency_ms=round((time.perf_counter() - started) * 1000, 2))


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_cache() -> None:
    key = "health:probe"
    cache.set(key, "1", 10)
    if cache.get(key) != "1":
        raise RuntimeError("cache did not return the value it was given")


def _check_broker() -> None:
    from a2a_service.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def _failed_feeds(state: FeedState) -> list[s.FailedFeedHealth]:
    # Written by the runner in public words (catalog/feeds/registry.py public_reason): a feed's
    # URL without credentials or query, what it answered, never a driver's message.
    return [
        s.FailedFeedHealth(feed=str(f.get("feed", ""))[:300], reason=str(f.get("reason", ""))[:200])
        for f in state.last_failed_feeds or []
        if isinstance(f, dict)
    ]


def feed_adapters() -> list[s.FeedAdapterHealth]:
    """Every registered feed source, from its FeedState. A failed pass's error by its kind only
    (the exception's name): the reason may name internal hosts, and health answers anyone. The
    feeds that failed within a pass are listed with the public reasons the runner recorded."""
    now = timezone.now()
    states = {st.name: st for st in FeedState.objects.all()}
    out = []
    for source in feeds_all():
        st = states.get(source.name)
        if st is None or st.last_attempt_at is None:
            out.append(
                s.FeedAdapterHealth(
                    name=source.name,
                    status="never_run",
                    last_attempt_at=None,
                    last_success_at=None,
                    last_error="",
                    rows=0,
                    replay=False,
                    lag_seconds=None,
                    consecutive_failures=0,
                    next_attempt_at=None,
                )
            )
            continue
        out.append(
            s.FeedAdapterHealth(
                name=source.name,
                status="failing" if st.failing else "degraded" if st.degraded else "ok",
                last_attempt_at=iso(st.last_attempt_at),
                last_success_at=iso(st.last_success_at),
                last_error=st.last_error.split(":", 1)[0][:80] if st.last_error else "",
                rows=st.rows_written,
                replay=st.last_replay,
                lag_seconds=round((now - st.last_success_at).total_seconds(), 1)
                if st.last_success_at
                else None,
                consecutive_failures=st.consecutive_failures,
                next_attempt_at=iso(st.next_attempt_at),
                failed_feeds=_failed_feeds(st),
                oddities=st.last_oddities,
            )
        )
    return out


def warming_up(worker: s.WorkerHealth, adapters: list[s.FeedAdapterHealth]) -> list[s.WarmupStep]:
    """What a new installation has not had yet (empty once it has had each, for good: a later
    failure or stale data is `degraded` or the product's own 503, not a warm-up)."""
    pending: list[s.WarmupStep] = []
    if worker.status == "unknown":
        pending.append("worker_heartbeat")
    if not adapters or any(a.status == "never_run" for a in adapters):
        pending.append("feed_pass")
    try:
        if not IntelSnapshot.objects.exists():
            pending.append("analytics_pass")
        if not EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.MORNING_BRIEF).exists():
            pending.append("morning_brief")
    except Exception:
        log_throttled(health_logger, "health-warmup", "health check: first data unreadable")
    return pending


def program_health(base: str) -> s.ProgramHealthOut:
    database = _timed("database", _check_database)
    cache_h = _timed("cache", _check_cache)
    broker = _timed("broker", _check_broker)
    worker: s.WorkerHealth
    try:
        beat = WorkerHeartbeat.objects.filter(name="celery-worker").first()
        if beat is None:
            worker = s.WorkerHealth(status="unknown", detail="no heartbeat recorded yet")
        else:
            age = (timezone.now() - beat.beat_at).total_seconds()
            stale = age > 3 * settings.WORKER_HEARTBEAT_SECONDS
            # No hostname: the worker's machine name is internal.
            worker = s.WorkerHealth(
                status="stale" if stale else "ok", last_beat_at=iso(beat.beat_at), age_seconds=round(age, 1)
            )
    except Exception:
        log_throttled(health_logger, "health-worker", "health check: worker heartbeat unreadable")
        worker = s.WorkerHealth(status="down")
    try:
        catalogs = {
            "news_items": NewsItem.objects.count(),
            "prediction_markets": PredictionMarket.objects.count(),
            "exchange_markets": ExchangeMarket.objects.count(),
            "telemetry_nodes": TelemetryNode.objects.count(),
            "teasers": Teaser.objects.count(),
        }
        built = products_built()
        skus = {
            "live": on_sale().count(),
            "disabled": Sku.objects.exclude(status=Sku.Status.LIVE).count(),
            "products_built": Sku.objects.filter(sku__in=built).count(),
            "coming_soon": Sku.objects.live().exclude(sku__in=built).count(),
        }
        agents = {
            "catalog": CatalogAgent.objects.filter(enabled=True).count(),
            "partners": PartnerAgent.objects.filter(enabled=True).count(),
        }
    except Exception:
        log_throttled(health_logger, "health-catalogs", "health check: catalog counts unreadable")
        catalogs, skus, agents = {}, {}, {}
    try:
        adapters = feed_adapters()
    except Exception:
        log_throttled(health_logger, "health-feeds", "health check: feed states unreadable")
        adapters = []
    pending = warming_up(worker, adapters)
    # A worker without a first heartbeat is still starting (warming_up), not failing.
    parts_ok = all(c.status == "ok" for c in (database, cache_h, broker)) and worker.status in ("ok", "unknown")
    feeds_ok = all(a.status not in ("failing", "degraded") for a in adapters)
    status: s.HealthStatus = "degraded" if not (parts_ok and feeds_ok) else "warming_up" if pending else "ok"
    return s.ProgramHealthOut(
        status=status,
        warming_up=pending,
        checked_at=iso(timezone.now()) or "",
        database=database,
        cache=cache_h,
        broker=broker,
        worker=worker,
        catalogs=catalogs,
        skus=skus,
        agents=agents,
        venue_adapters=adapters,
    )
