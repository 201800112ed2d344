"""The unpaid 402 challenge served from Redis in front of Django: same answer, counted,
and never stale after a price change, nor after its product has nothing left to deliver."""

from __future__ import annotations

import base64
import json
import time

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from werkzeug.test import Client

from a2a_service.core.redisconn import channel, redis_client
from a2a_service.wsgi import application
from billing.x402.fastpath import CHANNEL, LOCAL
from billing.x402.signin import siwx_nonce_valid
from catalog.counters import counters_pending
from catalog.models import EditorialPiece, NewsItem, Sku
from tests.support.signin import required_but_nonce

pytestmark = pytest.mark.django_db
BRIEF = "/api/a2a/x402/morning-brief"


@pytest.fixture(autouse=True)
def brief() -> EditorialPiece:
    """This morning's brief: the product has something to deliver, so it is sold (402)."""
    return EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip(
            "the challenge cache needs Redis (CI sets REDIS_URL); without it Django answers every time"
        )
    # Keep the request cycle from closing the test transaction's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    LOCAL.ensure_started()
    assert LOCAL._listening.wait(5), "the invalidation subscriber did not subscribe"
    LOCAL.clear()
    yield Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def required_amount(resp) -> str:
    return json.loads(base64.b64decode(resp.headers["PAYMENT-REQUIRED"]))["accepts"][0]["amount"]


def test_second_unpaid_call_is_served_from_redis_with_the_same_answer(wsgi):
    first = wsgi.get(BRIEF)
    assert first.status_code == 402

    calls = []
    original_app = application.app
    application.app = lambda environ, start_response: calls.append(1) or original_app(environ, start_response)
    try:
        second = wsgi.get(BRIEF)
    finally:
        application.app = original_app
    assert calls == [], "Django was called for a stored challenge"
    assert second.status_code == 402
    # The same challenge, each with a sign-in nonce of its own (billing/x402/signin.py).
    (one, nonce1), (two, nonce2) = (
        required_but_nonce(r.headers["PAYMENT-REQUIRED"]) for r in (first, second)
    )
    assert two == one and nonce2 != nonce1 and siwx_nonce_valid(nonce2)
    assert json.loads(second.data) == json.loads(first.data)
    third = wsgi.get(BRIEF)  # from this process's copy: no Redis round trip
    three, nonce3 = required_but_nonce(third.headers["PAYMENT-REQUIRED"])
    assert three == one and nonce3 not in (nonce1, nonce2) and siwx_nonce_valid(nonce3)
    LOCAL.flush_counts()
    assert counters_pending(since=timezone.now().date())["challenge"] == 3


def test_an_invalidation_from_another_process_clears_this_processs_copy(wsgi):
    wsgi.get(BRIEF)
    wsgi.get(BRIEF)
    key = next(k for k in LOCAL._data)
    generation = LOCAL.generation()
    redis_client().publish(channel(CHANNEL), b"forget")  # what another process's challenges_forget() sends
    deadline = time.monotonic() + 5
    while LOCAL.generation() == generation and time.monotonic() < deadline:
        time.sleep(0.01)
    assert LOCAL.generation() > generation and key not in LOCAL._data


def test_a_value_fetched_before_an_invalidation_is_not_kept(wsgi):
    generation = LOCAL.generation()
    LOCAL.clear()  # an invalidation arrives while a request was fetching from Redis
    LOCAL.put("k", ("sku", b"{}", []), generation)
    assert LOCAL.get("k") is None


def test_a_price_change_is_asked_on_the_very_next_request(wsgi, django_capture_on_commit_callbacks):
    assert required_amount(wsgi.get(BRIEF)) == "80000"
    assert required_amount(wsgi.get(BRIEF)) == "80000"  # stored
    with django_capture_on_commit_callbacks(execute=True):
        sku = Sku.objects.get(sku="morning_brief")
        sku.price_atomic = 95_000
        sku.save()
    assert required_amount(wsgi.get(BRIEF)) == "95000"


def test_news_price_change_and_bulk_disable_drop_stored_challenges(wsgi, django_capture_on_commit_callbacks):
    from catalog.services import sku_set_status

    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")
    url = f"/api/a2a/x402/news/unlock?news_id={item.id}"
    assert required_amount(wsgi.get(url)) == "100000"
    with django_capture_on_commit_callbacks(execute=True):
        item.price_atomic = 150_000
        item.save()
    assert required_amount(wsgi.get(url)) == "150000"
    assert wsgi.get(BRIEF).status_code == 402
    with django_capture_on_commit_callbacks(execute=True):
        sku_set_status(sku_ids=[Sku.objects.get(sku="morning_brief").id], status=Sku.Status.DISABLED)
    assert wsgi.get(BRIEF).status_code == 404


def test_proofs_origins_and_made_up_queries_go_to_django(wsgi):
    wsgi.get(BRIEF + "?junk=1")
    assert not list(redis_client().scan_iter(match="a2a:x402ch:*:*"))
    cors = wsgi.get(BRIEF, headers={"Origin": "https://agent.example"})
    assert "payment-required" in cors.headers["Access-Control-Expose-Headers"].lower()
    assert not list(redis_client().scan_iter(match="a2a:x402ch:*:*"))
    wsgi.get(BRIEF)
    refused = wsgi.get(BRIEF, headers={"PAYMENT-SIGNATURE": "not-base64!"})
    assert refused.status_code == 402 and json.loads(refused.data)["error"] == "invalid_payload"
