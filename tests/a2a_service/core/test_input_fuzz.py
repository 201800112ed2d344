"""NUL bytes and odd Unicode never give a 500. Every operation of the served OpenAPI document
(checked against tests/support/spec_operations.py) gets NUL, invalid UTF-8 and digits that are not
ASCII in each of its path segments and query parameters, an unknown query parameter, and each
header it documents; a funded API key and a live session token let the calls reach the code
behind authentication. Then the review's cases, one by one, with their answers."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.test import Client
from django.utils import timezone

from billing.credits import credit_add, ledger_audit
from catalog.models import NewsItem, Sku, Teaser
from sessions_app.services import session_create
from tests.support.spec_operations import ADDED_OPERATIONS, SPEC_OPERATIONS
from tests.support.wallets import register_wallet
from webhooks.models import WebhookDelivery, WebhookSubscription

pytestmark = pytest.mark.django_db

# Already percent-encoded: NUL, NUL inside text, long enough for min-length fields (tokens),
# invalid UTF-8 (an encoded surrogate, an overlong NUL, a lone byte), and text that looks
# like digits to str.isdigit() but is not ASCII (superscript two, Arabic-Indic, fullwidth,
# mathematical), a right-to-left override and a byte order mark.
BAD_URL_TEXT = [
    "%00",
    "a%00b",
    "abcdefgh%00ijklmnop",
    "%ED%A0%80",
    "%C0%80",
    "%FF",
    quote("²"),
    quote("١٢"),
    quote("１２"),
    quote("𝟙"),
    quote("\u202e"),
    quote("\ufeff1"),
]
BAD_HEADER_TEXT = ["\x00", "abcdefgh\x00ijklmnop", "\ud800abcdefgh", "²²²²²²²²²", "１２３４５６７８９"]
GUARDED = ("X-API-Key", "X-Session-Token", "Idempotency-Key", "PAYMENT-SIGNATURE", "X-PAYMENT")


def not_a_server_error(resp) -> bool:
    if resp.status_code < 500:
        return True
    body = json.loads(resp.content or b"{}")
    return (
        resp.status_code == 503 and body.get("code") == "product_unavailable" and body.get("charged") is False
    )


@pytest.fixture
def world():
    """A funded account with a webhook subscription, a session, a news item."""
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=10_000 * 10**6, kind="adjustment", reason="fuzz")
    sub = WebhookSubscription.objects.create(
        account=reg.account, url="https://example.com/hook", events=["test"], secret="whsec_x"
    )
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer="0x" + "7" * 40)
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")
    defaults = {
        "slug": "news",
        "pack_id": "langchain",
        "name": Teaser.objects.values_list("name", flat=True).first(),
        "sku": "morning_brief",
        "subscription_id": str(sub.id),
        "news_id": str(item.id),
        "token": session.token,
        "wallet_address": reg.account.wallet_address,
    }
    headers = {"HTTP_X_API_KEY": reg.api_key, "HTTP_X_SESSION_TOKEN": session.token}
    return defaults, headers


def _call(client: Client, method: str, url: str, headers: dict) -> object:
    if method == "post":
        return client.post(url, data="{}", content_type="application/json", **headers)
    return client.generic(method.upper(), url, **headers)


def test_no_operation_answers_500_to_nul_or_odd_unicode_anywhere(world):
    defaults, good_headers = world
    client = Client(raise_request_exception=False)  # collect every 500, not just the first
    doc = client.get("/api/a2a/openapi.json").json()
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert (SPEC_OPERATIONS | ADDED_OPERATIONS) <= documented  # the fuzz covers the interface

    failures, calls = [], 0
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if method not in ("get", "head", "delete", "post"):
                continue
            params = op.get("parameters", [])
            path_names = [p["name"] for p in params if p["in"] == "path"]
            query_names = [p["name"] for p in params if p["in"] == "query"]
            header_names = [p["name"] for p in params if p["in"] == "header" and p["name"] in GUARDED]

            def url_with(
                bad_name: str | None = None, bad: str = "", path=path, names=path_names, query=query_names
            ):
                u = path
                for n in names:
                    u = u.replace(
                        "{" + n + "}", bad if n == bad_name else quote(defaults.get(n, "x"), safe="")
                    )
                pairs = [
                    f"{n}={bad if n == bad_name else quote(defaults.get(n, '1'), safe='')}" for n in query
                ]
                if bad_name == "zz_unknown":
                    pairs.append(f"zz_unknown={bad}")
                return u + ("?" + "&".join(pairs) if pairs else "")

            cases = [
                (url_with(n, bad), good_headers) for n in [*path_names, *query_names] for bad in BAD_URL_TEXT
            ]
            cases += [(url_with("zz_unknown", bad), good_headers) for bad in BAD_URL_TEXT[:3]]
            for name in header_names + (["Idempotency-Key"] if "X-API-Key" in header_names else []):
                meta = "HTTP_" + name.upper().replace("-", "_")
                cases += [(url_with(), {**good_headers, meta: bad}) for bad in BAD_HEADER_TEXT]
            for url, headers in cases:
                calls += 1
                resp = _call(client, method, url, headers)
                if not not_a_server_error(resp):
                    failures.append((method.upper(), url, resp.status_code, resp.content[:200]))
    assert calls > 1000
    assert failures == []
    assert ledger_audit() == []


def test_the_reviews_cases_answer_422_or_404(api, world):
    defaults, headers = world
    key = headers["HTTP_X_API_KEY"]

    resp = api.get("/api/a2a/teaser/a%00b")
    assert resp.status_code == 404 and resp.json()["code"] == "not_found"
    resp = api.get("/api/a2a/news/catalog?category=%00&limit=5")
    assert resp.status_code == 422
    assert resp.json()["detail"] == [
        {
            "loc": ["query", "category"],
            "msg": "text must not contain NUL characters or lone surrogates",
            "type": "string_unstorable",
        }
    ]
    resp = api.get("/api/a2a/session/status?token=abcdefgh%00ijk")
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["query", "token"]
    resp = api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN="abcdefgh\x00ijk")
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["header", "X-Session-Token"]
    resp = api.post("/api/a2a/agenthub/chat", {"message": "hi", "agent": "news\x00"}, format="json")
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["body", "agent"]
    resp = api.get("/api/a2a/x402/morning-brief", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="k\x00")
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["header", "Idempotency-Key"]

    for url in ("http://[::1/", "http://[::1", "https://example.com:99999/hook", "https://example.com:x/"):
        resp = api.post(
            "/api/a2a/account/webhooks/register",
            {"url": url, "events": ["test"]},
            format="json",
            HTTP_X_API_KEY=key,
        )
        assert resp.status_code == 422, url
        assert resp.json()["detail"][0]["loc"] == ["body", "url"]
        assert resp.json()["detail"][0]["type"] == "webhook_target"

    subscriptions = WebhookSubscription.objects.count()
    for segment in ("²", "١٢", "１"):
        assert (
            api.delete(f"/api/a2a/account/webhooks/{quote(segment)}", HTTP_X_API_KEY=key).status_code == 404
        )
        assert (
            api.post(f"/api/a2a/account/webhooks/{quote(segment)}/test", HTTP_X_API_KEY=key).status_code
            == 404
        )
    assert WebhookSubscription.objects.count() == subscriptions


def test_a_receivers_retry_after_in_odd_digits_is_ignored_not_a_crash(api, settings, monkeypatch):
    """'²'.isdigit() is True: a receiver answering 429 with `Retry-After: ²` (a latin-1
    header) or a 400-digit delay used to fail the delivery task."""
    from tests.support.receivers import Receiver, subscribe
    from webhooks import services
    from webhooks.services import delivery_attempt, event_publish

    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_RETRY_SCALE = 1.0
    monkeypatch.setattr(services, "_enqueue", lambda delivery_id, countdown=0: None)
    receiver = Receiver()
    try:
        subscribe(api, receiver)
        receiver.statuses = [(429, {"Retry-After": "²"}), (503, {"Retry-After": "9" * 400})]
        event_publish(kind="copy_signal", payload={"n": 1})
        delivery = WebhookDelivery.objects.get()
        for _ in range(2):
            WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
            assert delivery_attempt(delivery_id=delivery.pk) == "pending"
            delivery.refresh_from_db()
            # The ordinary backoff (5 s, then 5 min), not the receiver's broken delay.
            assert delivery.next_attempt_at < timezone.now() + timedelta(minutes=6)
    finally:
        receiver.close()
    assert [r["status"] for r in receiver.received] == [429, 503]
