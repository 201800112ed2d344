from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from catalog.models import WorkerHeartbeat
from catalog.tasks import worker_heartbeat

pytestmark = pytest.mark.django_db


def test_health_reports_each_part_with_latency(api):
    worker_heartbeat()  # what the beat-scheduled task does on a worker
    body = api.get("/api/a2a/program/health").json()
    for part in ("database", "cache", "broker", "worker"):
        assert body[part]["status"] == "ok", (part, body[part])
    assert body["database"]["latency_ms"] is not None
    assert body["worker"]["age_seconds"] < 60
    assert body["status"] == "ok"
    assert body["skus"]["live"] == 44


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
    import catalog.http

    class FakeResponse:
        status_code = 200
        ok = True

        def json(self):
            return {"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:8453"}]}

    monkeypatch.setattr(catalog.http, "outbound_request", lambda *a, **k: FakeResponse())
    body = api.get("/api/a2a/facilitator/health").json()
    assert body["reachable"] is True and body["supported"][0]["scheme"] == "exact"
