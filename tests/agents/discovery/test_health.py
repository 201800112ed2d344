from __future__ import annotations

import json
import logging
import traceback
from collections import Counter
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from catalog.models import EditorialPiece, FeedState, IntelSnapshot, WorkerHeartbeat
from catalog.products.registry import products_built, specs_all
from catalog.tasks import worker_heartbeat
from tests.support.marketdata import first_data_in

pytestmark = pytest.mark.django_db


def test_health_is_warming_up_until_the_first_data_is_in_then_ok(api):
    """Issue 23 item 10: a new stack answered `degraded` for its first minute, while nothing
    was wrong. Now `warming_up`, naming what has not come yet, each step in turn; `ok` after."""
    from catalog.feeds.registry import feeds_all

    def health() -> dict:
        resp = api.get("/api/a2a/program/health")
        assert resp.status_code == 200
        return resp.json()

    body = health()
    assert body["status"] == "warming_up" and body["worker"]["status"] == "unknown"
    assert body["warming_up"] == ["worker_heartbeat", "feed_pass", "analytics_pass", "morning_brief"]
    worker_heartbeat()
    assert health()["warming_up"] == ["feed_pass", "analytics_pass", "morning_brief"]
    now = timezone.now()
    sources = [f.name for f in feeds_all()]
    ran = {"last_attempt_at": now, "last_success_at": now, "rows_written": 1}
    for name in sources[:-1]:  # all sources but one have run: the first feed pass is not over
        FeedState.objects.update_or_create(name=name, defaults=ran)
    assert health()["warming_up"] == ["feed_pass", "analytics_pass", "morning_brief"]
    FeedState.objects.update_or_create(name=sources[-1], defaults=ran)
    assert health()["warming_up"] == ["analytics_pass", "morning_brief"]
    IntelSnapshot.objects.create(regime="risk_on", as_of=now, payload={})
    # A brief composed but not yet published (staff's review delay) is not in yet.
    draft = EditorialPiece.objects.create(
        kind=EditorialPiece.Kind.MORNING_BRIEF, title="B", summary="s", body="b", published_at=None
    )
    body = health()
    assert body["status"] == "warming_up" and body["warming_up"] == ["morning_brief"]
    EditorialPiece.objects.filter(pk=draft.pk).update(published_at=now)
    body = health()
    assert body["status"] == "ok" and body["warming_up"] == []
    assert all(body[p]["latency_ms"] is not None for p in ("database", "cache", "broker"))
    assert {a["status"] for a in body["venue_adapters"]} == {"ok"}
    # Warmed up for good: an old snapshot or brief is the products' own 503, not a warm-up.
    IntelSnapshot.objects.update(computed_at=now - timedelta(days=3))
    assert health()["status"] == "ok"


def test_a_failing_part_is_degraded_even_while_warming_up(api):
    WorkerHeartbeat.objects.update_or_create(
        name="celery-worker", defaults={"beat_at": timezone.now() - timedelta(minutes=10)}
    )
    body = api.get("/api/a2a/program/health").json()
    assert body["status"] == "degraded" and "analytics_pass" in body["warming_up"]


def test_health_reports_each_part_with_latency(api):
    worker_heartbeat()  # what the beat-scheduled task does on a worker
    first_data_in()
    body = api.get("/api/a2a/program/health").json()
    for part in ("database", "cache", "broker", "worker"):
        assert body[part]["status"] == "ok", (part, body[part])
    assert body["database"]["latency_ms"] is not None
    assert body["worker"]["age_seconds"] < 60
    assert body["status"] == "ok"
    # Every spec's SKU is switched on; only those with a built product answer 402 and count as live.
    built = len(products_built())
    assert body["skus"]["live"] == built and body["skus"]["coming_soon"] == len(specs_all()) - built


def test_health_is_degraded_not_failing_when_the_worker_is_silent(api):
    WorkerHeartbeat.objects.update_or_create(
        name="celery-worker", defaults={"beat_at": timezone.now() - timedelta(minutes=10)}
    )
    resp = api.get("/api/a2a/program/health")
    assert resp.status_code == 200
    assert resp.json()["status"] == "degraded" and resp.json()["worker"]["status"] == "stale"


def test_health_is_degraded_when_the_broker_is_down(api, monkeypatch):
    worker_heartbeat()
    from a2a_service.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    body = api.get("/api/a2a/program/health").json()
    assert body["broker"]["status"] == "down" and body["status"] == "degraded"


def test_facilitator_health_reports_unreachable_without_failing(api):
    body = api.get("/api/a2a/facilitator/health").json()
    assert body["reachable"] is False and body["error"]


def test_facilitator_health_reads_supported_kinds(api, monkeypatch):
    import a2a_service.core.http

    class FakeResponse:
        status_code = 200
        ok = True

        def json(self):
            return {"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:8453"}]}

    monkeypatch.setattr(a2a_service.core.http, "outbound_request", lambda *a, **k: FakeResponse())
    body = api.get("/api/a2a/facilitator/health").json()
    assert body["reachable"] is True and body["supported"][0]["scheme"] == "exact"


# --- Redis down: one traceback per interval, nothing internal in the public answer -------------
@pytest.fixture
def redis_down(settings, monkeypatch):
    """REDIS_URL, the cache and the broker all point at a port nobody listens on."""
    import socket

    import a2a_service.core.ratelog
    from a2a_service.celery import app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    settings.REDIS_URL = url
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    monkeypatch.setattr(app.conf, "broker_url", url)
    clock = [1000.0]
    monkeypatch.setattr(a2a_service.core.ratelog, "_now", lambda: clock[0])
    a2a_service.core.ratelog.log_throttled_reset()
    yield SimpleNamespace(port=port, clock=clock)
    a2a_service.core.ratelog.log_throttled_reset()
    # The challenge fast path keeps its Lua script bound to the client it was made with.
    from a2a_service.wsgi import application

    application._script = None


@pytest.fixture
def wsgi_client():
    """The whole served application (fast paths in front of Django), as a server runs it."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    from werkzeug.test import Client

    from a2a_service.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _tracebacks(caplog) -> Counter:
    return Counter((r.name, r.getMessage().split(" (and ")[0]) for r in caplog.records if r.exc_info)


def test_redis_down_logs_one_traceback_per_interval_and_health_tells_no_internals(
    wsgi_client, redis_down, caplog, settings
):
    caplog.set_level(logging.INFO)
    for _ in range(5):
        assert wsgi_client.get("/api/a2a/discovery/storefront").status_code == 200
        # (a product that always has content: an unpaid call is its challenge)
        assert wsgi_client.get("/api/a2a/x402/payments/dual-rail-status").status_code == 402
        resp = wsgi_client.get("/api/a2a/program/health")
        assert resp.status_code == 200
    body = resp.json
    assert body["status"] == "degraded"
    assert body["cache"] == {"status": "down", "latency_ms": None, "detail": None}
    assert body["broker"] == {"status": "down", "latency_ms": None, "detail": None}
    assert body["database"]["status"] == "ok"
    text = resp.get_data(as_text=True)
    for internal in ("127.0.0.1", str(redis_down.port), "Error", "refused", "redis://"):
        assert internal not in text, internal

    first = _tracebacks(caplog)
    expected = {
        ("a2a_service.core.throttling", "rate limit not applied: the cache is unreachable"),
        ("catalog.counters", "could not count a hit in Redis; hits are lost meanwhile"),
        ("billing.x402.fastpath", "could not store the 402 challenge in Redis"),
        ("catalog.health", "health check: cache is down"),
        ("catalog.health", "health check: broker is down"),
    }
    assert expected <= set(first), first
    assert all(n == 1 for n in first.values()), first  # 5 rounds of requests, one record each
    cache_record = next(r for r in caplog.records if r.getMessage() == "health check: cache is down")
    assert str(redis_down.port) in "".join(traceback.format_exception(*cache_record.exc_info))

    # Within the interval: nothing more. After it: one record each, counting the ones left out.
    caplog.clear()
    wsgi_client.get("/api/a2a/program/health")
    assert not _tracebacks(caplog)
    redis_down.clock[0] += settings.LOG_REPEAT_SECONDS + 1
    wsgi_client.get("/api/a2a/program/health")
    messages = [r.getMessage() for r in caplog.records if r.name == "catalog.health" and r.exc_info]
    assert messages == [
        "health check: cache is down (and 5 more like it since the last report)",
        "health check: broker is down (and 5 more like it since the last report)",
    ]


def test_facilitator_health_says_unreachable_without_the_exception(api, settings, caplog):
    """The exception (host, port, errno) goes to the log; the answer names the kind only."""
    from a2a_service.core.ratelog import log_throttled_reset

    log_throttled_reset()
    settings.FACILITATOR_URL = "http://127.0.0.1:9/facilitator"
    body = api.get("/api/a2a/facilitator/health").json()
    assert body["reachable"] is False and body["error"] == "unreachable"
    [record] = [r for r in caplog.records if r.name == "catalog.health"]
    assert "refused" in "".join(traceback.format_exception(*record.exc_info)).lower()


# --- a source some of whose feeds fail --------------------------------------------------------------
def test_health_names_each_failed_news_feed_and_why_while_the_others_are_written(api, settings):
    """One news feed answers 500, another malformed XML, a third is fine: the pass succeeds with
    the third's items, and health shows news degraded with both failing URLs and their reasons
    (not "ok"); the URL's query (a token, maybe) is not shown. A clean pass clears them."""
    from catalog.feeds.runner import feed_run
    from catalog.models import FeedState, NewsItem
    from tests.support.feedserver import Answer, FeedServer

    worker_heartbeat()
    good = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>g</title>'
        b"<item><title>Bitcoin rises</title><link>https://example.com/1</link><guid>g-1</guid>"
        b"<pubDate>Mon, 23 Nov 2026 09:00:00 GMT</pubDate></item>"
        b"<item><title>Ether falls</title><link>https://example.com/2</link><guid>g-2</guid>"
        b"<pubDate>Mon, 23 Nov 2026 09:05:00 GMT</pubDate></item></channel></rss>"
    )
    rss = {"Content-Type": "application/rss+xml"}
    server = FeedServer()
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        server.routes["/good.xml"] = Answer(body=good, headers=rss)
        server.routes["/down.xml"] = Answer(status=500, body=b"Internal Server Error")
        server.routes["/broken.xml"] = Answer(
            body=b'<?xml version="1.0"?><rss version="2.0"><channel><item><title>a</ti', headers=rss
        )
        settings.NEWS_FEEDS = ",".join(
            [
                f"crypto|{server.url}/good.xml|good",
                f"crypto|{server.url}/down.xml?token=s3cret|down",
                f"general|{server.url}/broken.xml|broken",
            ]
        )
        state = feed_run(name="news", mode="live")
        assert state.outcome == "ok" and state.rows_written == 2 == NewsItem.objects.count()

        body = api.get("/api/a2a/program/health").json()
        news = next(a for a in body["venue_adapters"] if a["name"] == "news")
        assert news["status"] == "degraded" and body["status"] == "degraded"
        assert news["consecutive_failures"] == 0 and news["rows"] == 2
        failed = {f["feed"]: f["reason"] for f in news["failed_feeds"]}
        assert set(failed) == {f"{server.url}/down.xml", f"{server.url}/broken.xml"}
        assert failed[f"{server.url}/down.xml"] == "answered 500"
        assert failed[f"{server.url}/broken.xml"].startswith("malformed feed (")
        assert "s3cret" not in json.dumps(body)

        # The feeds recover: the next pass clears them.
        server.routes["/down.xml"] = Answer(body=good.replace(b"g-", b"d-"), headers=rss)
        server.routes["/broken.xml"] = Answer(body=good.replace(b"g-", b"b-"), headers=rss)
        feed_run(name="news", mode="live")
    finally:
        server.close()
    assert FeedState.objects.get(name="news").last_failed_feeds == []
    body = api.get("/api/a2a/program/health").json()
    news = next(a for a in body["venue_adapters"] if a["name"] == "news")
    assert (news["status"], news["failed_feeds"]) == ("ok", [])


def test_health_lists_the_failed_feeds_of_a_source_whose_every_feed_failed(api, settings):
    """Every feed failed: the pass fails (kind only in last_error), and the feeds are listed."""
    from catalog.feeds.runner import feed_run
    from tests.support.feedserver import Answer, FeedServer, closed_port

    server = FeedServer()
    try:
        settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
        server.routes["/down.xml"] = Answer(status=503)
        dead = f"http://127.0.0.1:{closed_port()}/feed.xml"
        settings.NEWS_FEEDS = f"crypto|{server.url}/down.xml|down,crypto|{dead}|dead"
        assert feed_run(name="news", mode="live").outcome == "failed"
    finally:
        server.close()
    news = next(
        a for a in api.get("/api/a2a/program/health").json()["venue_adapters"] if a["name"] == "news"
    )
    assert news["status"] == "failing" and news["last_error"] == "FeedError"
    assert news["failed_feeds"] == [
        {"feed": f"{server.url}/down.xml", "reason": "answered 503"},
        {"feed": dead, "reason": "unreachable"},
    ]
