"""The feed runner (catalog/feeds/runner.py): the lock, one transaction per pass, failures
recorded with their reason and backed off, the modes (auto falls back to replay), the
ingest_feeds command, the replay server's rules, retention, schedules and health."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.utils import timezone

from a2a_service.settings.refusals import production_refusals
from catalog.feeds import registry
from catalog.feeds.registry import FeedError, FeedPass, FeedSource
from catalog.feeds.replay import SAMPLES, content_type, replay_start, sample_path
from catalog.feeds.retention import feeds_prune
from catalog.feeds.runner import feed_run, feeds_due
from catalog.feeds.schedule import feeds_schedule_sync, periodic_task_name
from catalog.models import FeedState, NewsItem, RpcEndpoint, RpcProbe, SpreadSnapshot
from tests.support.feedserver import Answer, FeedServer, closed_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def source():
    """Register a test source whose behaviour the test sets (run: FeedPass -> int)."""
    made: list[str] = []

    def register(name: str, run) -> FeedSource:
        made.append(name)
        return registry.feed_register(FeedSource(name=name, run=run, interval_seconds=60))

    yield register
    for name in made:
        registry._SOURCES.pop(name, None)


@pytest.fixture
def replay(settings):
    """The replay server on a free port, serving the shipped samples."""
    server = replay_start(port=0)
    settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def feed_server(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    server = FeedServer()
    yield server
    server.close()


def _item(title: str, n: int = 0) -> NewsItem:
    return NewsItem.objects.create(title=title, teaser=title, body=title, external_id=f"x-{title}-{n}")


# --- the pass -------------------------------------------------------------------------------------
def test_a_pass_records_success_rows_and_duration(source):
    source("t-ok", lambda fp: len([_item("a"), _item("b")]))
    state = feed_run(name="t-ok", mode="live")
    assert state.outcome == "ok" and state.rows_written == 2 and state.last_error == ""
    assert state.last_success_at is not None and state.last_attempt_at is not None
    assert state.last_duration_ms is not None and state.running_since is None
    assert state.consecutive_failures == 0 and state.next_attempt_at is None and state.last_replay is False


def test_a_failure_is_recorded_with_its_reason_and_nothing_is_written(source, settings):
    settings.FEEDS_BACKOFF_BASE_SECONDS = 60

    def half_then_fail(fp: FeedPass) -> int:
        _item("half-written")
        raise FeedError("the venue answered garbage")

    source("t-fail", half_then_fail)
    state = feed_run(name="t-fail", mode="live")
    assert state.outcome == "failed"
    assert state.last_error == "FeedError: the venue answered garbage"
    assert not NewsItem.objects.filter(title="half-written").exists()  # rolled back
    assert state.consecutive_failures == 1 and state.running_since is None
    assert timedelta(seconds=55) < state.next_attempt_at - timezone.now() <= timedelta(seconds=60)
    assert state.last_success_at is None


def test_backoff_skips_scheduled_passes_doubles_and_is_cleared_by_a_success(source, settings):
    settings.FEEDS_BACKOFF_BASE_SECONDS = 60
    settings.FEEDS_BACKOFF_MAX_SECONDS = 100
    calls = []
    fail = [True]

    def run(fp: FeedPass) -> int:
        calls.append(1)
        if fail[0]:
            raise FeedError("down")
        return 1

    source("t-backoff", run)
    feed_run(name="t-backoff")
    assert feed_run(name="t-backoff").outcome == "backoff" and len(calls) == 1  # skipped
    assert "t-backoff" not in feeds_due()
    state = feed_run(name="t-backoff", force=True)  # an operator's pass runs anyway
    assert state.consecutive_failures == 2 and len(calls) == 2
    # 60 * 2 = 120, capped at 100
    assert state.next_attempt_at - timezone.now() <= timedelta(seconds=100)
    fail[0] = False
    FeedState.objects.filter(name="t-backoff").update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    state = feed_run(name="t-backoff")
    assert state.outcome == "ok" and state.consecutive_failures == 0 and state.next_attempt_at is None
    assert state.last_error == ""


def test_a_second_pass_of_the_same_source_is_skipped_while_one_runs(source):
    inner = {}

    def run(fp: FeedPass) -> int:
        inner["state"] = feed_run(name="t-lock", mode="live")  # a second pass, while this one runs
        return 1

    source("t-lock", run)
    outer = feed_run(name="t-lock", mode="live")
    assert inner["state"].outcome == "running"
    assert outer.outcome == "ok" and outer.running_since is None


def test_a_lock_held_by_a_dead_process_is_taken_over_once_stale(source, settings):
    settings.FEEDS_LOCK_STALE_SECONDS = 600
    source("t-stale", lambda fp: 3)
    FeedState.objects.create(name="t-stale", running_since=timezone.now() - timedelta(seconds=30))
    assert feed_run(name="t-stale").outcome == "running"
    FeedState.objects.filter(name="t-stale").update(running_since=timezone.now() - timedelta(seconds=601))
    assert feed_run(name="t-stale").outcome == "ok"


def test_a_failing_source_does_not_stop_the_others(source):
    source("t-a", lambda fp: (_ for _ in ()).throw(RuntimeError("boom")))
    source("t-b", lambda fp: 5)
    out = io.StringIO()
    call_command(
        "ingest_feeds",
        "--source",
        "t-a",
        "--source",
        "t-b",
        "--mode",
        "live",
        stdout=out,
        stderr=io.StringIO(),
    )
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("t-a: FAILED") and "RuntimeError: boom" in lines[0]
    assert lines[1] == "t-b: rows=5 replay=False"


def test_ingest_feeds_refuses_an_unknown_source():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown source"):
        call_command("ingest_feeds", "--source", "nope")


# --- modes ----------------------------------------------------------------------------------------
def _fetching_source(source, settings):
    """A source that fetches <base>/ping.json from its live URL or the replay."""
    settings.T_FEED_URL = f"http://127.0.0.1:{closed_port()}"

    def run(fp: FeedPass) -> int:
        data = fp.fetch(f"{fp.base('T_FEED_URL')}/ping").json()
        _item(f"{data['pong']}-{fp.replay}")
        return 1

    return source("t-fetch", run)


def test_auto_falls_back_to_replay_when_the_live_source_refuses_connections(source, settings, tmp_path):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    _fetching_source(source, settings)
    (tmp_path / "t_feed_url").mkdir()
    (tmp_path / "t_feed_url" / "ping.json").write_text(json.dumps({"pong": "recorded"}))
    server = replay_start(port=0, root=tmp_path)
    settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        state = feed_run(name="t-fetch", mode="auto")
    finally:
        server.shutdown()
        server.server_close()
    assert state.outcome == "ok" and state.last_replay is True
    assert "live unreachable" in state.last_note and "ConnectionError" in state.last_note
    assert NewsItem.objects.filter(title="recorded-True").exists()
    assert not NewsItem.objects.filter(title="recorded-False").exists()


def test_live_mode_records_the_refused_connection_as_a_failure(source, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    _fetching_source(source, settings)
    state = feed_run(name="t-fetch", mode="live")
    assert state.outcome == "failed" and state.last_error.startswith("ConnectionError")


def test_auto_does_not_replay_a_bad_answer_from_a_reachable_source(source, settings, feed_server):
    _fetching_source(source, settings)
    settings.T_FEED_URL = feed_server.url
    feed_server.routes["/ping"] = Answer(status=500, body=b"oops")
    state = feed_run(name="t-fetch", mode="auto")
    assert state.outcome == "failed" and "answered 500" in state.last_error and not state.last_replay


def test_production_refuses_replay_and_auto_feeds():
    base = dict(
        secret_key="k" * 30 + "abcdefghijklmnopqrstuvwxyz",
        treasury_address="0x" + "12" * 20,
        redis_url="redis://r:6379/0",
        database_engine="django.db.backends.postgresql",
        allowed_hosts=["api.example.com"],
        facilitator_private_key="",
        attestation_private_key="",
        ingest_token="",
        facilitator_url="https://facilitator.example.net",
    )
    assert production_refusals(**base) == []
    assert production_refusals(**base, feeds_mode="live") == []
    for mode in ("replay", "auto"):
        assert any("FEEDS_MODE" in p for p in production_refusals(**base, feeds_mode=mode))


# --- the replay server ----------------------------------------------------------------------------
@pytest.fixture
def samples(tmp_path: Path) -> Path:
    key = tmp_path / "src_url"
    (key / "dir").mkdir(parents=True)
    (key / "dirx").mkdir()
    (key / "markets.json").write_text('{"a": 1}')
    (key / "dir" / "index.json").write_text('{"index": true}')
    (key / "dirx" / "index.xml").write_text('<rss version="2.0"><channel><title>i</title></channel></rss>')
    (key / "rss.xml").write_text('<?xml version="1.0"?><rss version="2.0"><channel></channel></rss>')
    (key / "atom.xml").write_text('<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"></feed>')
    (key / "cal.ics").write_text("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
    (tmp_path / "secret.txt").write_text("outside")
    return tmp_path


def test_replay_server_rules(samples):
    server = replay_start(port=0, root=samples)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        r = requests.get(f"{base}/src_url/markets.json?limit=5&offset=0")  # query ignored
        assert (
            r.status_code == 200 and r.json() == {"a": 1} and r.headers["Content-Type"] == "application/json"
        )
        assert requests.get(f"{base}/src_url/markets").json() == {"a": 1}  # <path>.json
        assert requests.get(f"{base}/src_url/dir").json() == {"index": True}  # directory: index.json
        r = requests.get(f"{base}/src_url/dirx")  # directory: index.xml
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/rss+xml")
        r = requests.get(f"{base}/src_url/rss")  # <path>.xml
        assert r.headers["Content-Type"].startswith("application/rss+xml")
        assert (
            requests.get(f"{base}/src_url/atom.xml")
            .headers["Content-Type"]
            .startswith("application/atom+xml")
        )
        r = requests.get(f"{base}/src_url/cal.ics")
        assert r.headers["Content-Type"].startswith("text/calendar") and r.text.startswith("BEGIN:VCALENDAR")
        assert requests.get(f"{base}/src_url/missing").status_code == 404
        assert requests.get(f"{base}/src_url/%2e%2e/secret.txt").status_code == 404
        assert requests.get(f"{base}/").status_code == 404
    finally:
        server.shutdown()
        server.server_close()
    assert sample_path("/src_url/../secret.txt", samples) is None
    assert content_type(Path("x.bin"), b"") == "application/octet-stream"


def test_every_default_news_feed_has_a_replay_sample(settings):
    from catalog.feeds.news.parse import feeds_setting, parse_feed

    feeds = feeds_setting(settings.NEWS_FEEDS)
    assert len(feeds) >= 4
    for n in range(len(feeds)):
        path = sample_path(f"/news_feeds/{n}")
        assert path is not None and parse_feed(path.read_bytes()).entries


def test_a_pass_in_replay_mode_marks_its_rows_replay(replay):
    state = feed_run(name="news", mode="replay")
    assert state.outcome == "ok" and state.last_replay is True and state.rows_written > 10
    assert NewsItem.objects.filter(replay=True).count() == state.rows_written
    assert not NewsItem.objects.filter(replay=False).exclude(external_id="").exists()


def test_ingest_feeds_ingests_what_a_local_server_serves(settings, feed_server):
    sample = (SAMPLES / "news_feeds" / "2.xml").read_bytes()
    feed_server.routes["/mw.xml"] = Answer(body=sample, headers={"Content-Type": "application/rss+xml"})
    settings.NEWS_FEEDS = f"equity|{feed_server.url}/mw.xml|MarketWatch"
    out = io.StringIO()
    call_command("ingest_feeds", "--source", "news", "--mode", "live", stdout=out)
    assert out.getvalue().strip() == "news: rows=8 replay=False"
    assert NewsItem.objects.filter(source="MarketWatch", category="equity", replay=False).count() == 8
    assert FeedState.objects.get(name="news").rows_written == 8


# --- schedule, tasks, retention, health, admin --------------------------------------------------------
def test_every_source_has_an_editable_periodic_task_that_a_sync_keeps():
    from django_celery_beat.models import PeriodicTask

    feeds_schedule_sync()
    task = PeriodicTask.objects.get(name=periodic_task_name("news"))
    assert task.task == "feeds.run_source" and json.loads(task.args) == ["news"]
    assert task.interval.every == 600
    task.enabled = False
    task.save()
    assert feeds_schedule_sync() == 0
    assert PeriodicTask.objects.get(name=periodic_task_name("news")).enabled is False
    assert FeedState.objects.filter(name="news").exists()


def test_the_celery_task_runs_a_pass_and_respects_backoff(source):
    from catalog.tasks import run_source

    calls = []
    source("t-task", lambda fp: calls.append(1) or 1)
    run_source("t-task")
    assert len(calls) == 1
    FeedState.objects.filter(name="t-task").update(next_attempt_at=timezone.now() + timedelta(minutes=5))
    run_source("t-task")
    assert len(calls) == 1
    run_source("not-installed")  # a schedule row left behind: nothing happens


def test_retention_prunes_old_probes_and_spreads_and_never_news(settings):
    settings.FEEDS_RETENTION_PROBES_DAYS = 7
    settings.FEEDS_RETENTION_SPREADS_DAYS = 30
    old, recent = timezone.now() - timedelta(days=40), timezone.now() - timedelta(days=1)
    ep = RpcEndpoint.objects.create(name="t-rpc", url="https://rpc.example.com")
    RpcProbe.objects.create(endpoint=ep, ok=True, probed_at=old)
    RpcProbe.objects.create(endpoint=ep, ok=True, probed_at=timezone.now() - timedelta(days=8))
    keep_probe = RpcProbe.objects.create(endpoint=ep, ok=True, probed_at=recent)
    SpreadSnapshot.objects.create(symbol="BTC", venue_a="a", venue_b="b", spread_bps=1, captured_at=old)
    keep_spread = SpreadSnapshot.objects.create(
        symbol="BTC", venue_a="a", venue_b="b", spread_bps=1, captured_at=timezone.now() - timedelta(days=29)
    )
    news = NewsItem.objects.create(
        title="old news", teaser="t", body="b", ingested_at=old - timedelta(days=900)
    )
    deleted = feeds_prune()
    assert deleted["catalog.RpcProbe"] == 2 and deleted["catalog.SpreadSnapshot"] == 1
    assert list(RpcProbe.objects.filter(endpoint=ep)) == [keep_probe]
    assert keep_spread.id in set(SpreadSnapshot.objects.values_list("id", flat=True))
    assert NewsItem.objects.filter(pk=news.pk).exists()


def test_health_reports_every_adapter_and_is_degraded_while_one_fails(api, source):
    body = api.get("/api/a2a/program/health").json()
    news = [a for a in body["venue_adapters"] if a["name"] == "news"][0]
    assert news["status"] == "never_run" and news["last_success_at"] is None
    source("t-health", lambda fp: (_ for _ in ()).throw(FeedError("http://10.1.2.3/ answered 500")))
    feed_run(name="t-health")
    body = api.get("/api/a2a/program/health").json()
    failing = [a for a in body["venue_adapters"] if a["name"] == "t-health"][0]
    assert failing["status"] == "failing" and failing["consecutive_failures"] == 1
    assert failing["last_error"] == "FeedError"  # the kind only: the reason may name internal hosts
    assert body["status"] == "degraded"


def test_a_failed_feed_is_named_and_explained_in_public_words_only(api, source):
    """Per-feed failures reach health as the runner records them: a URL without credentials or
    query, our own FeedError's text without URLs, a network failure by its kind, anything else
    (a driver's message could name hosts) by its class name; at most FAILED_FEEDS_MAX a pass."""
    from catalog.feeds.registry import public_reason, public_url
    from catalog.feeds.runner import FAILED_FEEDS_MAX

    assert public_url("https://u:pw@feeds.example.com:8443/rss.xml?key=s3cret#x") == (
        "https://feeds.example.com:8443/rss.xml"
    )
    assert public_url("binance BTC/USDT order book") == "binance BTC/USDT order book"
    assert public_reason(FeedError("http://10.1.2.3:9000/x.xml answered 502")) == "answered 502"
    assert public_reason(requests.exceptions.ReadTimeout("10.1.2.3 read timed out")) == "timed out"
    assert public_reason(requests.exceptions.ConnectionError("10.1.2.3 refused")) == "unreachable"
    assert public_reason(RuntimeError("password authentication failed for db.internal")) == "RuntimeError"

    def run(fp: FeedPass) -> int:
        fp.feed_failed(feed="https://a.example.com/feed?token=s3cret", error=FeedError("x answered 500"))
        fp.feed_failed(feed="venue-b", error=RuntimeError("db.internal:5432 is down"))
        for i in range(FAILED_FEEDS_MAX + 10):
            fp.feed_failed(feed=f"https://many.example.com/{i}", error=FeedError("empty body"))
        return 3

    source("t-partial", run)
    state = feed_run(name="t-partial")
    assert state.outcome == "ok" and state.degraded and not state.failing
    adapter = next(
        a for a in api.get("/api/a2a/program/health").json()["venue_adapters"] if a["name"] == "t-partial"
    )
    assert adapter["status"] == "degraded" and len(adapter["failed_feeds"]) == FAILED_FEEDS_MAX
    assert adapter["failed_feeds"][:2] == [
        {"feed": "https://a.example.com/feed", "reason": "x answered 500"},
        {"feed": "venue-b", "reason": "RuntimeError"},
    ]
    assert adapter["failed_feeds"][-1] == {"feed": "13 more", "reason": "in the admin's note"}
    text = json.dumps(adapter)
    assert "s3cret" not in text and "db.internal" not in text
    assert "db.internal:5432 is down" in state.last_note  # the full reason stays with staff


def test_health_lists_a_successful_adapter_with_rows_replay_and_lag(api, replay):
    feed_run(name="news", mode="replay")
    news = [a for a in api.get("/api/a2a/program/health").json()["venue_adapters"] if a["name"] == "news"][0]
    assert news["status"] == "ok" and news["replay"] is True and news["rows"] > 10
    assert news["lag_seconds"] is not None and news["lag_seconds"] < 60 and news["last_error"] == ""


def test_admin_lists_feed_states_and_run_now_needs_the_change_permission(admin_client, source, client):
    from django.contrib.auth.models import Permission, User

    source("t-admin", lambda fp: 7)
    FeedState.objects.create(name="t-admin")
    state = FeedState.objects.get(name="t-admin")
    assert admin_client.get("/admin/catalog/feedstate/").status_code == 200
    assert admin_client.get(f"/admin/catalog/feedstate/{state.pk}/change/").status_code == 200
    resp = admin_client.post(
        "/admin/catalog/feedstate/", {"action": "run_now", "_selected_action": [state.pk]}, follow=True
    )
    assert resp.status_code == 200 and "7 row(s) written" in resp.content.decode()
    assert FeedState.objects.get(name="t-admin").rows_written == 7
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_feedstate"))
    client.force_login(viewer)
    page = client.get("/admin/catalog/feedstate/")
    assert page.status_code == 200 and "run_now" not in page.content.decode()


# --- the local stack ----------------------------------------------------------------------------
def test_make_run_starts_the_replay_server_and_beat_reads_schedules_from_the_database():
    import subprocess
    import sys
    import time

    from a2a_service.scripts import devstack

    beat = devstack._commands("8000")["beat"]
    assert beat[beat.index("--scheduler") + 1] == "django_celery_beat.schedulers:DatabaseScheduler"
    port = closed_port()
    cmd = devstack.replay_command({"FEEDS_REPLAY_URL": f"http://127.0.0.1:{port}"})
    assert cmd[-4:] == ["--host", "127.0.0.1", "--port", str(port)]
    # The replay server is a plain process: no Django settings needed.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(devstack.ROOT)}
    proc = subprocess.Popen(
        cmd, cwd=devstack.ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(50):
            try:
                resp = requests.get(f"http://127.0.0.1:{port}/news_feeds/0", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("application/rss+xml")
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    assert sys.executable == cmd[0]
