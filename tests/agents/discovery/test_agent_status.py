"""Agent status is measured: a catalog agent's and the hub's status come from the answers their
surfaces recorded (AgentInteraction) in the status window — counts, error rate, median latency,
last answer — by the documented rules; a partner's from the federation feed's last read of its
signals. HEAD answers with GET's status code and no body."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

import catalog.feeds.federation as federation
from agents.models import AgentInteraction
from agents.services import agent_interaction_record
from catalog.feeds.runner import feed_run
from catalog.models import CatalogAgent, FeedState, NewsItem, PartnerAgent
from tests.support.federation import doc, sig
from tests.support.sample_server import Answer, SampleServer

pytestmark = pytest.mark.django_db


def record(agent: str, n: int, *, status: int = 200, latency: int = 100, surface: str = "chat", ago=None):
    for _ in range(n):
        row = agent_interaction_record(agent=agent, surface=surface, status_code=status, latency_ms=latency)
        if ago is not None:
            AgentInteraction.objects.filter(pk=row.pk).update(at=timezone.now() - ago)


def test_an_agent_without_answers_is_idle_and_a_disabled_one_disabled(api):
    body = api.get("/api/a2a/agents/news/status").json()
    assert body["status"] == "idle" and body["reason"] == "no answer in the last 60 min"
    activity = body["activity"]
    assert (activity["answers"], activity["errors"], activity["error_rate"]) == (0, 0, 0.0)
    assert activity["median_latency_ms"] is None and activity["last_answer_at"] is None
    CatalogAgent.objects.filter(slug="news").update(enabled=False)
    record("news", 3)
    assert api.get("/api/a2a/agents/news/status").json()["status"] == "disabled"
    assert api.get("/api/a2a/agents/news").json()["status"] == "disabled"


def test_counts_error_rate_and_median_decide_online_or_degraded(api):
    # 9 answers (100..900 ms), 1 failure, 2 payment challenges: error rate 1/12 -> online.
    for i in range(1, 10):
        record("news", 1, latency=i * 100, surface="chat" if i % 2 else "jsonrpc")
    record("news", 1, status=500, latency=1000)
    record("news", 2, status=402, latency=50, surface="marketplace")  # asked to pay: not an error
    record("news", 5, status=500, ago=timedelta(hours=3))  # outside the window, inside 24 h
    record("news", 4, ago=timedelta(days=2))  # outside both
    body = api.get("/api/a2a/agents/news/status").json()
    a = body["activity"]
    assert (a["answers"], a["errors"], a["error_rate"]) == (12, 1, round(1 / 12, 4))
    # latencies 50, 50, 100, ..., 900, 1000: the median of 12 is (400 + 500) / 2
    assert a["median_latency_ms"] == 450.0
    assert a["by_surface"] == {"chat": 6, "jsonrpc": 4, "marketplace": 2}
    assert (a["answers_24h"], a["errors_24h"]) == (17, 6)
    assert body["status"] == "online" and body["reason"] == "12 answers, error rate 8%"
    newest_ok = AgentInteraction.objects.filter(agent="news", status_code__lt=500).order_by("-at").first()
    assert a["last_answer_at"] == newest_ok.at.isoformat().replace("+00:00", "Z")

    # Two more failures: 3 / 14 = 21 % >= 20 % -> degraded.
    record("news", 2, status=503)
    body = api.get("/api/a2a/agents/news/status").json()
    assert (body["activity"]["answers"], body["activity"]["errors"]) == (14, 3)
    assert body["activity"]["error_rate"] == round(3 / 14, 4)
    assert body["status"] == "degraded" and body["reason"].startswith("error rate 21% >= 20%")


def test_slow_answers_degrade_and_the_window_is_a_setting(api, settings):
    record("prediction", 3, latency=6000)
    record("prediction", 2, latency=100)
    body = api.get("/api/a2a/agents/prediction/status").json()
    assert body["activity"]["median_latency_ms"] == 6000.0 and body["status"] == "degraded"
    assert body["reason"] == "median latency 6000 ms >= 5000 ms"
    settings.AGENT_STATUS_DEGRADED_LATENCY_MS = 10_000
    assert api.get("/api/a2a/agents/prediction/status").json()["status"] == "online"
    AgentInteraction.objects.update(at=timezone.now() - timedelta(minutes=90))
    assert api.get("/api/a2a/agents/prediction/status").json()["status"] == "idle"
    settings.AGENT_STATUS_WINDOW_MINUTES = 120
    body = api.get("/api/a2a/agents/prediction/status").json()
    assert body["status"] == "online" and body["activity"]["window_minutes"] == 120


def test_hub_status_counts_marketplace_executes_and_every_agent(api):
    resp = api.post("/api/a2a/marketplace/execute", {"capability": "telemetry_status"}, format="json")
    assert resp.status_code == 200
    # News naming an asset: sentiment has something to deliver, so unpaid it is a challenge.
    NewsItem.objects.create(title="Bitcoin rallies", teaser="t", body="b", category="crypto", tickers=["BTC"])
    resp = api.post("/api/a2a/marketplace/execute", {"capability": "sentiment"}, format="json")
    assert resp.status_code == 402
    resp = api.post("/api/a2a/marketplace/execute", {"capability": "nope"}, format="json")
    assert resp.status_code == 422
    rows = list(AgentInteraction.objects.filter(agent="agenthub").order_by("id"))
    assert [(r.surface, r.skill, r.status_code) for r in rows] == [
        ("marketplace", "telemetry_status", 200),
        ("marketplace", "sentiment", 402),
        ("marketplace", "", 422),
    ]
    record("news", 4)
    record("m2m-desk", 1, status=500)
    CatalogAgent.objects.filter(slug="grant-scout").update(enabled=False)
    body = api.get("/api/a2a/agenthub/status").json()
    assert body["status"] == "online" and body["activity"]["answers"] == 3
    assert body["activity"]["by_surface"] == {"marketplace": 3}
    statuses = {a["slug"]: a["status"] for a in body["agent_statuses"]}
    assert statuses == {
        "news": "online",
        "m2m-desk": "degraded",
        "grant-scout": "disabled",
        "equity-news": "idle",
        "prediction": "idle",
    }
    assert "grant-scout" not in body["agents"] and "news" in body["agents"]
    assert body["counts"] == {"online": 1, "degraded": 1, "idle": 2, "disabled": 1}
    assert api.get("/api/a2a/agenthub").json()["counts"] == body["counts"]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/api/a2a/agenthub/status", 200),
        ("/api/a2a/agenthub", 200),
        ("/api/a2a/agenthub/chat", 200),
        ("/api/a2a/agenthub/", 200),
        ("/api/a2a/agents/news/status", 200),
        ("/api/a2a/agents/nobody/status", 404),
        ("/api/a2a/agents/news", 200),
        ("/api/a2a/agents/nobody", 404),
    ],
)
def test_head_has_gets_status_and_no_body(api, path, code):
    resp = api.head(path)
    assert resp.status_code == code and resp.content == b""
    if not path.endswith(("/chat", "agenthub/")):
        assert api.get(path).status_code == code


@pytest.fixture
def partner_server(settings):
    server = SampleServer()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.5
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 3.0
    settings.FEEDS_REPLAY_URL = server.url
    yield server
    server.close()


def partner(slug: str, signals_url: str = "", **extra) -> PartnerAgent:
    return PartnerAgent.objects.create(
        slug=slug,
        name=slug.title(),
        description="d",
        url=f"https://{slug}.example/",
        signals_url=signals_url,
        **extra,
    )


def test_partner_status_comes_from_the_federation_feeds_last_read(api, partner_server):
    server = partner_server
    partner("alpha", f"{server.url}/alpha")
    partner("beta", f"{server.url}/beta")
    partner("gamma")  # publishes no signals
    partner("delta", f"{server.url}/delta", enabled=False)
    body = api.get("/api/a2a/partner/catalog").json()
    assert {p["slug"]: p["health"]["status"] for p in body["partners"]} == {
        "alpha": "idle",
        "beta": "idle",
        "gamma": "idle",
    }  # the feed never ran; the disabled partner is not listed
    server.routes["/alpha"] = Answer(body=doc(sig("a1"), sig("a2", side="sell")))
    server.routes["/beta"] = Answer(body=b"<html>not json</html>")
    assert feed_run(name=federation.SOURCE, mode="live", force=True).outcome == "ok"
    health = {p["slug"]: p["health"] for p in api.get("/api/a2a/partner/catalog").json()["partners"]}
    assert health["alpha"]["status"] == "online" and health["alpha"]["last_fetch"] == "ok"
    assert health["alpha"]["signals_24h"] == 2 and health["alpha"]["last_signal_at"]
    assert health["beta"]["status"] == "degraded" and health["beta"]["last_fetch"] == "failed"
    assert health["beta"]["last_fetch_error"] and health["beta"]["signals_24h"] == 0
    assert health["gamma"]["status"] == "idle" and health["gamma"]["last_fetch"] == "not_fetched"
    federated = api.get("/api/a2a/agents/federated").json()
    assert {p["slug"]: p["health"]["status"] for p in federated["partner_agents"]} == {
        "alpha": "online",
        "beta": "degraded",
        "gamma": "idle",
    }
    assert {a["slug"]: a["health"]["status"] for a in federated["local_agents"]}["news"] == "idle"
    hub = api.get("/api/a2a/agenthub/status").json()
    assert {p["slug"]: p["health"]["status"] for p in hub["partners"]}["delta"] == "disabled"
    # Every partner failing fails the pass: both degraded. A pass long ago: idle.
    server.routes["/alpha"] = Answer(status=500, body=b"{}")
    assert feed_run(name=federation.SOURCE, mode="live", force=True).outcome == "failed"
    health = {p["slug"]: p["health"] for p in api.get("/api/a2a/partner/catalog").json()["partners"]}
    assert (health["alpha"]["status"], health["beta"]["status"]) == ("degraded", "degraded")
    FeedState.objects.filter(name="federation").update(last_attempt_at=timezone.now() - timedelta(hours=1))
    health = {p["slug"]: p["health"] for p in api.get("/api/a2a/partner/catalog").json()["partners"]}
    assert health["alpha"]["status"] == "idle" and health["alpha"]["reason"].endswith("is stale")
