"""No payment is asked for nothing (issue 23 item 8): an unpaid call to a product with nothing
to deliver now (here the morning brief before any brief, or once it is withdrawn or stale) is
answered 503 with Retry-After and the reason on every surface that would otherwise show a
challenge (the REST 402 and its stored copy in front of Django, MCP, A2A, the marketplace,
chat's x402 URL) and on the credit path, before anything is debited. The stored challenges
never outlive the product becoming unavailable, nor hide it becoming available again."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from werkzeug.test import Client

from a2a_service.core.redisconn import redis_client
from a2a_service.wsgi import application
from agents.models import AgentInteraction
from billing.credits import ledger_audit
from billing.models import LedgerEntry, Payment
from billing.x402.fastpath import LOCAL, PREFIX
from catalog.models import EditorialPiece
from catalog.products.availability import AVAILABILITY_HASH, availability_refresh
from catalog.signals import product_availability_changed
from tests.support.payments import balance, funded

pytestmark = pytest.mark.django_db
BRIEF = "/api/a2a/x402/morning-brief"
NO_BRIEF = "no morning brief has been published yet"


def publish_brief(**fields: Any) -> EditorialPiece:
    return EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now(), **fields
    )


def assert_nothing_to_deliver(status: int, headers: Any, body: dict[str, Any], settings) -> None:
    retry = settings.PRODUCT_UNAVAILABLE_RETRY_SECONDS
    assert status == 503, body
    assert headers["Retry-After"] == str(retry)
    assert body["code"] == "product_unavailable" and body["charged"] is False and body["retry_after"] == retry
    assert body["sku"] == "morning_brief" and NO_BRIEF in body["detail"]
    assert "accepts" not in body and "PAYMENT-REQUIRED" not in headers


# --- REST, through the challenge fast path in front of Django ---------------------------------
@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the challenge cache needs Redis (CI sets REDIS_URL)")
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    LOCAL.ensure_started()
    assert LOCAL._listening.wait(5), "the invalidation subscriber did not subscribe"
    LOCAL.clear()
    redis_client().delete(AVAILABILITY_HASH)
    yield Client(application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
    redis_client().delete(AVAILABILITY_HASH)


@pytest.fixture
def django_calls():
    """The requests that reach Django (below the challenge fast path)."""
    calls: list[str] = []
    original = application.app
    application.app = lambda environ, start_response: calls.append(environ["PATH_INFO"]) or original(
        environ, start_response
    )
    yield calls
    application.app = original


def stored_challenges() -> list[bytes]:
    return list(redis_client().scan_iter(match=f"{PREFIX}*:*"))


def get(wsgi: Client, path: str = BRIEF) -> tuple[int, Any, dict[str, Any]]:
    resp = wsgi.get(path)
    return resp.status_code, resp.headers, json.loads(resp.data)


def test_the_unpaid_rest_call_follows_the_products_data_and_the_stored_challenge_never_lags(
    wsgi, django_calls, settings, django_capture_on_commit_callbacks
):
    # No brief yet: 503 with when to ask again and why; no challenge shown, none stored.
    for _ in range(2):
        assert_nothing_to_deliver(*get(wsgi), settings)
    assert stored_challenges() == [] and len(django_calls) == 2

    # Data arrives: the very next unpaid call is the challenge, then served without Django.
    with django_capture_on_commit_callbacks(execute=True):
        brief = publish_brief()
    status, headers, body = get(wsgi)
    assert status == 402 and body["accepts"][0]["maxAmountRequired"] == "80000"
    [key] = stored_challenges()
    # A product whose data can go stale by time alone: its challenge is kept briefly.
    assert 0 < redis_client().ttl(key) <= settings.PRODUCT_AVAILABILITY_RECHECK_SECONDS
    calls = len(django_calls)
    assert get(wsgi)[0] == 402 and get(wsgi)[0] == 402  # from Redis, then from this process's copy
    assert len(django_calls) == calls

    # The brief is withdrawn: the stored challenges go with it, the next call is 503.
    with django_capture_on_commit_callbacks(execute=True):
        brief.delete()
    assert stored_challenges() == []
    assert_nothing_to_deliver(*get(wsgi), settings)

    # Back again (402), then stale with no write that any receiver sees (a queryset update):
    # the next pass's look at availability (a feed or analytics pass end) drops the challenge.
    with django_capture_on_commit_callbacks(execute=True):
        brief = publish_brief()
    assert get(wsgi)[0] == 402 and get(wsgi)[0] == 402
    old = timezone.now() - timedelta(days=3)
    EditorialPiece.objects.filter(pk=brief.pk).update(published_at=old, composed_at=old)
    with django_capture_on_commit_callbacks(execute=True):
        assert "morning_brief" in availability_refresh()
    assert stored_challenges() == []
    status, headers, body = get(wsgi)
    assert status == 503 and headers["Retry-After"] and "older than" in body["detail"]
    assert Payment.objects.count() == 0


def test_a_stored_challenge_past_its_own_expiry_is_not_served(wsgi, django_calls, settings):
    """Data can go stale by time alone: the stored challenge carries its expiry, and neither
    Redis's copy nor a process's copy is served after it (Django asks the product again)."""
    publish_brief()
    assert get(wsgi)[0] == 402
    [key] = stored_challenges()
    sku, until_ms, rest = redis_client().get(key).split(b"\n", 2)
    assert int(until_ms) / 1000 <= timezone.now().timestamp() + settings.PRODUCT_AVAILABILITY_RECHECK_SECONDS
    redis_client().set(key, sku + b"\n" + b"1000\n" + rest, ex=30)  # as if its time had passed
    LOCAL.clear()
    calls = len(django_calls)
    EditorialPiece.objects.all().delete()  # gone, and no receiver told (test transaction)
    assert_nothing_to_deliver(*get(wsgi), settings)
    assert len(django_calls) == calls + 1


def test_a_stored_teaser_follows_its_products_availability(wsgi, django_capture_on_commit_callbacks):
    """The teasers stored in front of Django say whether their product is available: a change
    seen by a refresh (a pass's end) drops them too, though no write told the cache."""
    from a2a_service.core.fastcache import FREE_LOCAL

    FREE_LOCAL.ensure_started()
    assert FREE_LOCAL._listening.wait(5)
    FREE_LOCAL.clear()
    teaser = "/api/a2a/teaser/morning-brief"
    brief = publish_brief()
    with django_capture_on_commit_callbacks(execute=True):
        availability_refresh()
    assert json.loads(wsgi.get(teaser).data)["available"] is True
    old = timezone.now() - timedelta(days=3)
    EditorialPiece.objects.filter(pk=brief.pk).update(published_at=old, composed_at=old)  # no signal
    assert json.loads(wsgi.get(teaser).data)["available"] is True  # the stored teaser
    with django_capture_on_commit_callbacks(execute=True):
        assert "morning_brief" in availability_refresh()
    assert json.loads(wsgi.get(teaser).data)["available"] is False


def test_availability_refresh_reports_changes_only_and_drops_the_stored_challenges(
    wsgi, django_capture_on_commit_callbacks
):
    seen: list[list[str]] = []

    def listener(sender: Any, skus: list[str], **kwargs: Any) -> None:
        seen.append(skus)

    product_availability_changed.connect(listener)
    try:
        first = availability_refresh()  # the first look reports every checked product
        assert "morning_brief" in first and seen == [first]
        assert availability_refresh() == [] and len(seen) == 1  # nothing changed
        # Available, then gone again between two refreshes: the stored challenge recorded
        # that it was seen available, so the refresh after it sees the change.
        publish_brief()
        assert get(wsgi)[0] == 402 and stored_challenges()
        assert redis_client().hget(AVAILABILITY_HASH, "morning_brief") == b"1"
        EditorialPiece.objects.all().delete()
        with django_capture_on_commit_callbacks(execute=True):
            assert availability_refresh() == ["morning_brief"] and seen[-1] == ["morning_brief"]
        assert stored_challenges() == []
        stored = redis_client().hget(AVAILABILITY_HASH, "morning_brief").decode()
        assert stored.startswith("0 ") and NO_BRIEF in stored
    finally:
        product_availability_changed.disconnect(listener)


# --- the other surfaces, and the credit path ---------------------------------------------------
def test_a2a_unpaid_call_fails_with_the_reason_and_retry_after_instead_of_input_required(api, settings):
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"data": {"skill": "morning_brief"}}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    for path in ("/api/a2a/agenthub", "/api/a2a/agents/m2m-desk"):
        task = api.post(path, body, format="json").json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        status = task["status"]["message"]
        assert NO_BRIEF in status["parts"][0]["text"]
        assert status["metadata"] == {"charged": False, "retry_after": settings.PRODUCT_UNAVAILABLE_RETRY_SECONDS}
    assert set(AgentInteraction.objects.values_list("status_code", flat=True)) == {503}
    publish_brief()
    task = api.post("/api/a2a/agenthub", body, format="json").json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert Payment.objects.count() == 0


def test_mcp_unpaid_call_is_a_503_tool_error_without_requirements(api, settings):
    from tests.support.mcp_rpc import call

    result = call(api, "morning_brief")
    assert result["isError"] is True
    answer = result["structuredContent"]
    assert answer["status"] == 503 and answer["retry_after"] == settings.PRODUCT_UNAVAILABLE_RETRY_SECONDS
    assert NO_BRIEF in answer["detail"] and "accepts" not in answer
    publish_brief()
    assert call(api, "morning_brief")["structuredContent"]["status"] == 402


def test_marketplace_chat_and_a_refused_proof_show_no_challenge_for_nothing(api, settings):
    resp = api.post("/api/a2a/marketplace/execute", {"capability": "sentiment"}, format="json")
    assert resp.status_code == 503 and resp["Retry-After"] and "accepts" not in resp.json()
    # Chat says so, and its x402 URL answers the same 503.
    chat = api.post("/api/a2a/agents/m2m-desk/chat", {"message": "the morning brief"}, format="json").json()
    assert chat["next_call"]["available"] is False and chat["next_call"]["unavailable_reason"] == NO_BRIEF
    url = chat["next_call"]["x402"]["url"].removeprefix("http://testserver")
    resp = api.get(url)
    assert_nothing_to_deliver(resp.status_code, resp, resp.json(), settings)
    # A proof that is refused is not answered with the requirements to sign again.
    resp = api.get(BRIEF, HTTP_PAYMENT_SIGNATURE="not-base64!")
    assert_nothing_to_deliver(resp.status_code, resp, resp.json(), settings)


def test_credits_are_not_debited_and_not_enough_credit_is_not_asked_to_top_up(api, settings):
    key, account = funded(1.0)
    resp = api.get(BRIEF, HTTP_X_API_KEY=key)
    assert_nothing_to_deliver(resp.status_code, resp, resp.json(), settings)
    assert balance(account) == 1_000_000
    poor_key, poor = funded(0.01)  # less than the brief's 0.08: no top-up asked for nothing
    resp = api.get(BRIEF, HTTP_X_API_KEY=poor_key)
    assert_nothing_to_deliver(resp.status_code, resp, resp.json(), settings)
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"data": {"skill": "morning_brief"}}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    task = api.post("/api/a2a/agenthub", body, format="json", HTTP_X_API_KEY=poor_key).json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"  # not input-required
    assert balance(poor) == 10_000
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).exists() and ledger_audit() == []
    publish_brief()
    paid = api.get(BRIEF, HTTP_X_API_KEY=key)
    assert paid.status_code == 200 and balance(account) == 1_000_000 - 80_000


def test_a_route_with_a_free_tier_serves_it_to_a_key_short_of_credit_as_before(api):
    """copy-trade's free tier (delayed, masked) is what a caller who does not pay gets; a key
    without enough credit still gets it while the paid content has nothing to deliver."""
    poor_key, poor = funded(0.01)  # copy_signals costs 0.15
    resp = api.get("/api/a2a/signals/copy-trade", HTTP_X_API_KEY=poor_key)
    assert resp.status_code == 200 and resp["X-Tier"] == "free" and resp.json()["orders"] == []
    assert balance(poor) == 10_000
    key, account = funded(1.0)  # enough credit: the paid content, which has nothing (503, uncharged)
    resp = api.get("/api/a2a/signals/copy-trade", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and resp["Retry-After"] and balance(account) == 1_000_000
