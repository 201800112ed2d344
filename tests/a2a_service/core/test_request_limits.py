"""One request must not bring the server down: the recursion limit py_ecc raises is put back
in every entry point, JSON bodies and payment headers are bounded in size and depth before
any decoding, and a real granian server (the `make run` command) answers the attacks with a
4xx and goes on serving with the same worker."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from werkzeug.test import Client

from a2a_service.core.errors import BodyTooLarge
from a2a_service.core.parsers import BoundedJSONParser, json_depth, json_loads_bounded
from a2a_service.wsgi import application
from agents.models import A2aTask, AgentInteraction
from billing.models import Account, Payment
from catalog.models import EditorialPiece
from tests.support import ROOT

DEEP = 80_000  # the review's attack: 160 KB of brackets
BRIEF = "/api/a2a/x402/morning-brief"
REGISTER = "/api/a2a/account/register"


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def huge_payment_header() -> str:
    """The review's second attack: 213 KB of base64 around JSON nested 80,000 deep."""
    return base64.b64encode(deep_json(DEEP).encode()).decode()


# --- the recursion limit ---------------------------------------------------------------------------
def _limit_in_subprocess(code: str) -> int:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_recursion_limit_is_the_interpreters_default_in_every_entry_point():
    import eth_account  # noqa: F401  (imports py_ecc, which raises the limit on first import)
    import py_ecc  # noqa: F401

    assert sys.getrecursionlimit() == 1000
    # The WSGI entry granian loads, after a request has run through Django and the fast paths.
    wsgi = (
        "import sys; from a2a_service.wsgi import application; from werkzeug.test import Client;"
        "Client(application).get('/api/a2a/discovery/storefront');"
        "import eth_account, py_ecc, web3, x402.mechanisms.evm; print(sys.getrecursionlimit())"
    )
    assert _limit_in_subprocess(wsgi) == 1000
    # The Celery worker and beat: `celery -A a2a_service` resolves the app the same way, then
    # sets Django up and imports every task module.
    celery = (
        "import sys; from celery.app.utils import find_app; app = find_app('a2a_service');"
        "app.loader.import_default_modules(); import billing.tasks, webhooks.tasks;"
        "print(sys.getrecursionlimit())"
    )
    assert _limit_in_subprocess(celery) == 1000


# --- bounded JSON --------------------------------------------------------------------------------
def test_json_depth_counts_brackets_outside_strings_in_linear_time():
    assert json_depth(b"{}") == 1 and json_depth(b"1") == 0
    assert json_depth(b'{"a": [[1], {"b": "[[[[[["}]}') == 3
    assert json_depth(b'["\\"[[[", [[]]]') == 3  # an escaped quote does not end the string
    assert json_depth(deep_json(DEEP).encode()) == DEEP
    # Inputs that would make a backtracking string pattern quadratic: unterminated strings,
    # escaped quotes, lone backslashes; each of 1 MB is measured in one pass.
    for hostile in (b'"\\"' * 350_000, b'"' + b"\\" * 1_000_000, b'["' * 500_000):
        started = time.monotonic()
        json_depth(hostile)
        assert time.monotonic() - started < 2.0
    with pytest.raises(ValueError, match="nested 65 levels"):
        json_loads_bounded(deep_json(65), max_bytes=1000, max_depth=64)
    assert json_loads_bounded(deep_json(64), max_bytes=1000, max_depth=64) == json.loads(deep_json(64))
    with pytest.raises(ValueError, match="NaN is not a JSON value"):
        json_loads_bounded('{"a": NaN}', max_bytes=100)
    with pytest.raises(ValueError, match="larger than 10 bytes"):
        json_loads_bounded("[" + "1," * 10 + "1]", max_bytes=10)


@pytest.mark.django_db
def test_a_deeply_nested_body_is_a_422_before_decoding(api):
    resp = api.post(REGISTER, data=deep_json(DEEP), content_type="application/json")
    assert resp.status_code == 422
    (error,) = resp.json()["detail"]
    assert error["loc"] == ["body"] and error["type"] == "json_too_deep"
    assert f"nested {DEEP} levels" in error["msg"]
    # 64 levels pass the parser and are judged by the body's model as usual.
    resp = api.post(REGISTER, data=deep_json(64), content_type="application/json")
    assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "model_attributes_type"
    nested = {"message": "hi", "agent": None, "x": json.loads(deep_json(60))}
    assert api.post("/api/a2a/agenthub/chat", nested, format="json").status_code == 200
    # Brackets inside strings are text, not depth.
    assert api.post("/api/a2a/agenthub/chat", {"message": "[" * 3000}, format="json").status_code == 200


TOO_LARGE = [{"loc": ["body"], "msg": "request body larger than 1048576 bytes", "type": "body_too_large"}]


@pytest.mark.django_db
def test_a_body_over_the_cap_is_a_413_and_is_not_read_past_it(api, settings):
    settings.API_MAX_BODY_BYTES = 2_000
    body = json.dumps({"message": "x" * 1_950})
    assert len(body) < 2_000
    assert api.post("/api/a2a/agenthub/chat", data=body, content_type="application/json").status_code == 200
    resp = api.post(
        "/api/a2a/agenthub/chat", data=json.dumps({"message": "x" * 2_000}), content_type="application/json"
    )
    assert resp.status_code == 413
    assert resp.json()["detail"] == [
        {"loc": ["body"], "msg": "request body larger than 2000 bytes", "type": "body_too_large"}
    ]
    # The parser itself reads one byte past the cap at most, whatever the declared length.
    stream = io.BytesIO(b"x" * 10_000)
    with pytest.raises(BodyTooLarge):
        BoundedJSONParser().parse(stream)
    assert stream.tell() == 2_001


@pytest.mark.django_db
def test_a_body_over_the_cap_is_a_413_json_on_every_route_in_its_protocols_form(api):
    """The review's attack: 1.1 MB bodies (over the default 1 MiB cap) on /mcp and the chat got
    Django's RequestDataTooBig 400. Every route answers 413 with JSON: the REST shape, or a
    JSON-RPC error (-32600) where the route speaks JSON-RPC; nothing runs, nothing is stored."""
    chat = json.dumps({"message": "x" * 1_100_000}).encode()
    jsonrpc = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"text": "x" * 1_100_000}}}
    ).encode()
    mcp = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x" * 1_100_000}}
    ).encode()
    rest_routes = {
        REGISTER: chat,
        "/api/a2a/agenthub/chat": chat,
        "/api/a2a/agents/news/chat": chat,
        "/api/a2a/agenthub": chat,  # chat on the JSON-RPC endpoints
        "/api/a2a/agents/news": chat,
        "/api/a2a/account/delegation/report-fill": chat,
    }
    for path, body in rest_routes.items():
        resp = api.generic("POST", path, body, content_type="application/json")
        assert resp.status_code == 413 and resp["Content-Type"] == "application/json", path
        assert resp.json() == {"detail": TOO_LARGE}, path
    for path in ("/api/a2a/agenthub", "/api/a2a/agenthub/", "/api/a2a/agents/news", "/mcp"):
        body = mcp if path == "/mcp" else jsonrpc
        resp = api.generic(
            "POST", path, body, content_type="application/json", HTTP_ACCEPT="application/json, text/event-stream"
        )
        assert resp.status_code == 413 and resp["Content-Type"] == "application/json", path
        answer = resp.json()
        assert answer["jsonrpc"] == "2.0" and answer["id"] is None, path
        assert answer["error"]["code"] == -32600, path
        assert "larger than 1048576 bytes" in answer["error"]["message"], path
    # A route outside the API views (the admin's login form) answers the same JSON.
    resp = api.generic(
        "POST", "/admin/login/", b"username=a&password=" + b"x" * 1_100_000,
        content_type="application/x-www-form-urlencoded",
    )
    assert resp.status_code == 413 and resp.json() == {"detail": TOO_LARGE}
    # Recorded like every agent answer; nothing else happened.
    statuses = AgentInteraction.objects.values_list("surface", "status_code")
    assert sorted(statuses) == sorted([("chat", 413)] * 4 + [("jsonrpc", 413)] * 3)
    assert not A2aTask.objects.exists() and not Account.objects.exists()


@pytest.mark.django_db
def test_nul_and_lone_surrogates_in_body_text_are_a_422_with_their_location(api):
    for raw, loc in (
        ('{"message": "a\\u0000b"}', ["body", "message"]),
        ('{"message": "hi", "agent": "\\ud800"}', ["body", "agent"]),
        ('{"message": "hi", "x": [1, {"y": ["ok", "\\u0000"]}]}', ["body", "x", 1, "y", 1]),
        ('{"message": "hi", "\\u0000": 1}', ["body", "\\x00"]),
    ):
        resp = api.post("/api/a2a/agenthub/chat", data=raw, content_type="application/json")
        assert resp.status_code == 422, raw
        assert (
            resp.json()["detail"][0]["loc"] == loc and resp.json()["detail"][0]["type"] == "string_unstorable"
        )
    # A surrogate pair is one ordinary character.
    resp = api.post(
        "/api/a2a/agenthub/chat", data='{"message": "\\ud83d\\ude00"}', content_type="application/json"
    )
    assert resp.status_code == 200


@pytest.fixture
def wsgi(db) -> Client:
    """The whole WSGI stack (challenge and credit fast paths in front of Django), inside the
    test transaction: like Django's test client, keep the request cycle from closing it."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    brief_publish()
    yield Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.parametrize("header", ["PAYMENT-SIGNATURE", "X-PAYMENT"])
def test_an_oversized_or_deep_payment_header_is_a_402_invalid_payload_through_the_fast_paths(header, wsgi):
    client = wsgi
    cases = {
        huge_payment_header(): "longer than 16384 bytes",  # 213 KB
        base64.b64encode(deep_json(2_000).encode()).decode(): "nested 2000 levels",  # 5 KB
    }
    for value, message in cases.items():
        resp = client.get(BRIEF, headers={header: value})
        assert resp.status_code == 402, resp.data[:300]
        body = json.loads(resp.data)
        assert body["error"] == "invalid_payload" and message in body["detail"]
    assert Payment.objects.count() == 0
    # The next call is served as usual: an unpaid challenge.
    resp = client.get(BRIEF)
    assert resp.status_code == 402 and json.loads(resp.data)["error"] == "payment_required"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_odd_api_keys_are_left_to_django_by_the_credit_fast_path(settings, caplog):
    """A NUL or a huge X-API-Key (granian refuses the NUL itself; other servers may not) never
    reaches the fast path's key lookup, which would fail in the driver and drop its connection."""
    if not settings.REDIS_URL:
        pytest.skip("the credit fast path needs Redis")
    from django.db import connections

    from catalog.services import catalog_seed

    catalog_seed()
    client = Client(application)
    try:
        status = "/api/a2a/x402/payments/dual-rail-status"
        resp = client.get(status, headers={"X-API-Key": "a2a_x\x00" + "x" * 40})
        assert resp.status_code == 422 and json.loads(resp.data)["detail"][0]["loc"] == [
            "header",
            "X-API-Key",
        ]
        resp = client.get(status, headers={"X-API-Key": "a2a_" + "x" * 100_000})
        assert resp.status_code == 401
        assert "credit fast path failed" not in caplog.text
    finally:
        connections.close_all()


# --- a real granian server -----------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def brief_publish() -> None:
    """This morning's brief: the brief is sold (402) only when it has something to deliver."""
    from django.utils import timezone

    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


def _wait_ok(url: str, timeout: float = 90.0) -> requests.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            resp = requests.get(url, timeout=5)
            if resp.status_code == 200:
                return resp
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer 200 within {timeout} s")
        time.sleep(0.3)


@pytest.fixture
def granian(transactional_db, settings):
    """`make run`'s web command (a2a_service/scripts/devstack.py) on a free port, on the test
    database."""
    from django.db import connection

    from a2a_service.scripts.devstack import _commands
    from billing.chain.localchain import free_port
    from catalog.services import catalog_seed

    catalog_seed()  # committed: the server is another process
    brief_publish()
    db = connection.settings_dict
    port = str(free_port())
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "GRANIAN_RESPAWN_INTERVAL": "0.5",
    }
    proc = subprocess.Popen(
        _commands(port)["web"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ok(base + "/api/a2a/discovery/storefront")
        yield proc, base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
@pytest.mark.postgres
def test_granian_answers_the_attacks_with_4xx_keeps_its_worker_and_respawns_a_dead_one(granian):
    proc, base = granian
    (worker,) = _children(proc.pid)

    resp = requests.post(
        base + REGISTER, data=deep_json(DEEP), headers={"Content-Type": "application/json"}, timeout=30
    )
    assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "json_too_deep"
    for header in ("PAYMENT-SIGNATURE", "X-PAYMENT"):
        resp = requests.get(base + BRIEF, headers={header: huge_payment_header()}, timeout=30)
        assert resp.status_code == 402 and resp.json()["error"] == "invalid_payload"
    resp = requests.get(base + "/api/a2a/news/catalog", params={"category": "a\x00b"}, timeout=30)
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["query", "category"]

    # Still serving, from the same worker process: nothing crashed and was replaced.
    assert requests.get(base + "/api/a2a/discovery/storefront", timeout=30).status_code == 200
    assert requests.get(base + BRIEF, timeout=30).status_code == 402
    assert proc.poll() is None and _children(proc.pid) == [worker]

    # A worker that dies anyway (here: killed) is replaced; the server does not shut down.
    os.kill(worker, signal.SIGKILL)
    _wait_ok(base + "/api/a2a/discovery/storefront", timeout=60)
    assert proc.poll() is None
    (respawned,) = _children(proc.pid)
    assert respawned != worker


@pytest.mark.slow
@pytest.mark.postgres
def test_granian_answers_oversized_bodies_413_json_without_a_reset(granian):
    """Over a real connection: 5 MB bodies (five times the cap) get their 413 JSON, not a reset,
    and the worker goes on serving."""
    proc, base = granian
    (worker,) = _children(proc.pid)
    filler = "x" * 5_000_000
    bodies = {
        "/api/a2a/agenthub/chat": ({"message": filler}, "detail"),
        REGISTER: ({"wallet_address": filler}, "detail"),
        "/api/a2a/agenthub": ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": filler}}, "error"),
        "/mcp": ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": filler}}, "error"),
    }
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for path, (body, member) in bodies.items():
        resp = requests.post(base + path, data=json.dumps(body), headers=headers, timeout=60)
        assert resp.status_code == 413 and resp.headers["Content-Type"] == "application/json", path
        answer = resp.json()
        assert member in answer, path
        if member == "error":
            assert answer["error"]["code"] == -32600
        else:
            assert answer["detail"][0]["type"] == "body_too_large"
    assert requests.get(base + "/api/a2a/discovery/storefront", timeout=30).status_code == 200
    assert proc.poll() is None and _children(proc.pid) == [worker]
