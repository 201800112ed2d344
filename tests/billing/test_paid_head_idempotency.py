"""HEAD on a paid path is never paid or charged (405), and an Idempotency-Key replays only
the call it was first sent with: reused for another path, query or body it is refused."""

from __future__ import annotations

import pytest
import requests
from django.db import connections
from django.utils import timezone
from werkzeug.test import Client

from a2a_service.wsgi import application
from billing.credits import ledger_audit
from billing.models import IdempotentCall, LedgerEntry, Payment
from catalog.models import EditorialPiece, NewsItem, Sku
from sessions_app.services import session_create
from tests.support.payments import balance, funded

STATUS = "/api/a2a/x402/payments/dual-rail-status"  # 0.01 USDC, served by the credit fast path
BRIEF = "/api/a2a/x402/morning-brief"


def sku_calls() -> int:
    return LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).count()


def brief() -> None:
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


# --- HEAD ------------------------------------------------------------------------------------------
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_head_on_paid_paths_is_405_through_the_fast_paths_and_charges_nothing(settings):
    if not settings.REDIS_URL:
        pytest.skip("the credit fast path needs Redis; without it Django answers (covered below)")
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    brief()
    key, account = funded(1.0)
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer="0x" + "3" * 40)
    client = Client(application)
    try:
        paid = [
            (STATUS, {"X-API-Key": key}),
            (BRIEF, {"X-API-Key": key}),
            (f"/api/a2a/x402/news/unlock?news_id={item.id}", {"X-API-Key": key}),
            ("/api/a2a/sentiment", {"X-API-Key": key}),
            ("/api/a2a/signals", {"X-API-Key": key}),
            (STATUS, {"X-API-Key": key, "Idempotency-Key": "h1"}),
            ("/api/a2a/session/call/morning_brief", {"X-Session-Token": session.token}),
            (BRIEF, {}),
        ]
        for path, headers in paid:
            resp = client.open(path, method="HEAD", headers=headers)
            assert resp.status_code == 405, (path, resp.status_code)
            assert resp.headers["Allow"] == "GET, OPTIONS"
        assert sku_calls() == 0 and balance(account) == 1_000_000
        session.refresh_from_db()
        assert session.calls_used == 0
        # The same key on GET is charged, once, on the fast path: HEAD would have been.
        resp = client.get(STATUS, headers={"X-API-Key": key})
        assert resp.status_code == 200 and resp.headers["X-Credit-Charged"] == "0.01"
        assert sku_calls() == 1 and balance(account) == 990_000
        assert ledger_audit() == []
    finally:
        connections.close_all()


def test_head_with_a_valid_payment_proof_is_405_and_the_proof_is_not_settled(paid_stack):
    """A real proof signed by the official client: HEAD neither claims nor settles it, and
    the same proof then pays the GET (so HEAD would have spent the agent's money)."""
    from tests.support.payments import balances, challenge, signed_header

    brief()
    url = paid_stack.url + BRIEF
    proof = signed_header(challenge(url))
    before = balances(paid_stack)
    resp = requests.head(url, headers={"PAYMENT-SIGNATURE": proof}, timeout=30)
    assert resp.status_code == 405 and resp.headers["Allow"] == "GET, OPTIONS"
    assert Payment.objects.count() == 0 and balances(paid_stack) == before
    resp = requests.get(url, headers={"PAYMENT-SIGNATURE": proof}, timeout=30)
    assert resp.status_code == 200 and resp.json()["body"] == "full brief"
    payer, treasury = balances(paid_stack)
    assert (payer, treasury) == (before[0] - 80_000, before[1] + 80_000)
    assert Payment.objects.get().state == Payment.State.SETTLED


# --- Idempotency-Key -------------------------------------------------------------------------------
@pytest.mark.django_db
def test_an_idempotency_key_reused_on_another_path_is_422_and_serves_nothing(api):
    key, account = funded(1.0)
    brief()
    first = api.get(STATUS, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 200 and first["X-Credit-Charged"] == "0.01"
    # The attack: the cheap call's key on the dearer path used to replay the cheap content
    # there; it must neither replay nor charge nor serve the brief.
    resp = api.get(BRIEF, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="k-1")
    assert resp.status_code == 422
    (error,) = resp.json()["detail"]
    assert error["loc"] == ["header", "Idempotency-Key"] and error["type"] == "idempotency_key_reused"
    assert STATUS in error["msg"]
    assert sku_calls() == 1 and balance(account) == 990_000
    # The same call with the same key is still replayed, free.
    again = api.get(STATUS, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="k-1")
    assert again.status_code == 200 and again.json() == first.json()
    assert sku_calls() == 1 and balance(account) == 990_000
    # The brief with a key of its own is served and charged.
    resp = api.get(BRIEF, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="k-2")
    assert resp.status_code == 200 and resp.json()["body"] == "full brief"
    assert sku_calls() == 2 and balance(account) == 990_000 - 80_000
    assert ledger_audit() == []


@pytest.mark.django_db
def test_an_idempotency_key_is_scoped_to_the_query_and_method(api):
    key, account = funded(1.0)
    a = NewsItem.objects.create(title="a", teaser="a", body="body a", category="crypto")
    b = NewsItem.objects.create(title="b", teaser="b", body="body b", category="crypto")
    url = "/api/a2a/x402/news/unlock"
    first = api.get(f"{url}?news_id={a.id}&ref=x", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="n")
    assert first.status_code == 200 and sku_calls() == 1
    # The same parameters in another order are the same call: replayed.
    same = api.get(f"{url}?ref=x&news_id={a.id}", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="n")
    assert same.status_code == 200 and same.json() == first.json()
    for other in (f"{url}?news_id={b.id}&ref=x", f"{url}?news_id={a.id}", f"{url}?news_id={a.id}&ref=y"):
        resp = api.get(other, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="n")
        assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "idempotency_key_reused"
    # Another method and path on the same item (the credit route's POST).
    resp = api.post(f"/api/a2a/news/{a.id}/unlock", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="n")
    assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "idempotency_key_reused"
    assert sku_calls() == 1 and balance(account) == 900_000
    stored = IdempotentCall.objects.get()
    assert len(stored.fingerprint) == 64 and stored.path == url
    # A key longer than the stored column is refused, not cut to a prefix another key shares.
    resp = api.get(f"{url}?news_id={b.id}", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="n" * 201)
    assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "string_too_long"
    assert sku_calls() == 1 and ledger_audit() == []


@pytest.mark.django_db
def test_a_concurrent_first_use_of_the_key_on_another_call_is_refused_too(api, monkeypatch):
    """The unique (account, key) row written by a concurrent request on another call: the
    IntegrityError path checks the fingerprint as well, and this call's debit rolls back."""
    key, account = funded(1.0)
    original_filter = IdempotentCall.objects.filter

    class NotYetVisible:
        """The first lookup misses (the other request has not committed yet)."""

        calls = 0

        def __call__(self, *args, **kwargs):
            NotYetVisible.calls += 1
            if NotYetVisible.calls == 1:
                IdempotentCall.objects.create(
                    account=account,
                    key="race",
                    path=BRIEF,
                    status_code=200,
                    body={"x": 1},
                    fingerprint="f" * 64,
                )
                return IdempotentCall.objects.none()
            return original_filter(*args, **kwargs)

    monkeypatch.setattr(IdempotentCall.objects, "filter", NotYetVisible())
    resp = api.get(STATUS, HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="race")
    assert resp.status_code == 422 and resp.json()["detail"][0]["type"] == "idempotency_key_reused"
    assert sku_calls() == 0 and balance(account) == 1_000_000 and ledger_audit() == []
    assert IdempotentCall.objects.get(key="race").body == {"x": 1}  # the other call's row stands
