"""Prepaid sessions: packs bought like any SKU, quota-safe calls, and the error answers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests
from django.db import connections
from django.utils import timezone
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.models import Payment
from catalog.models import EditorialPiece, Sku
from sessions_app.models import PrepaidSession, SessionPack
from sessions_app.services import SessionUnavailable, session_run
from tests.support.payments import new_session


def brief() -> None:
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


def test_buying_a_desk_pack_by_x402_returns_a_session(paid_stack):
    # The client caps a payment at $1 by default; this agent agrees to pay up to $5 for a pack.
    client = register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))
    client.set_spend_controls({"max_amount_per_payment": "$5"})
    with wrapRequestsWithPayment(requests.Session(), client) as session:
        resp = session.get(paid_stack.url + "/api/a2a/x402/session/desk-pack", timeout=30)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert len(body["token"]) >= 32 and body["calls_total"] == 40 and body["window_hours"] == 24
    assert {"morning_brief", "grid_range_desk", "risk_exit_alerts", "risk_decision_pack"} <= set(body["skus"])
    assert Payment.objects.get(sku__sku="m2m_session_desk").state == Payment.State.SETTLED
    store = requests.get(paid_stack.url + "/api/a2a/discovery/storefront", timeout=30).json()
    desk = [s for s in store["storefront_skus"] if s["sku"] == "m2m_session_desk"][0]
    assert desk["sales_30d"] == 1 and desk["revenue_30d_usdc"] == 1.5
    status = requests.get(paid_stack.url + "/api/a2a/session/status", params={"token": body["token"]}).json()
    assert status["calls_remaining"] == 40 and status["pack"] == "m2m_session_desk"


@pytest.mark.django_db
def test_session_calls_debit_one_call_each_until_used_up(api):
    brief()
    session = new_session(calls=2)
    for remaining in ("1", "0"):
        resp = api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN=session.token)
        assert resp.status_code == 200 and resp.json()["body"] == "full brief"
        assert resp["X-Session-Calls-Remaining"] == remaining
    resp = api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN=session.token)
    assert resp.status_code == 402 and resp.json()["code"] == "session_used_up" and resp.json()["buy"]
    status = api.get("/api/a2a/session/status", {"token": session.token}).json()
    assert status["calls_used"] == 2 and status["usage_by_sku"] == {"morning_brief": 2}


@pytest.mark.django_db
def test_session_call_errors_use_no_call(api):
    session = new_session()
    token = {"HTTP_X_SESSION_TOKEN": session.token}
    assert api.get("/api/a2a/session/call/nope", **token).status_code == 404
    assert api.get("/api/a2a/session/call/morning_brief").status_code == 401
    assert api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN="x" * 40).status_code == 404
    assert api.get("/api/a2a/session/call/news_unlock", **token).status_code == 403  # not covered
    assert api.get("/api/a2a/session/call/grid_range_desk", **token).status_code == 503  # not built yet
    assert api.get("/api/a2a/session/call/morning_brief", **token).status_code == 503  # no brief published
    session.refresh_from_db()
    assert session.calls_used == 0
    PrepaidSession.objects.filter(pk=session.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    brief()
    resp = api.get("/api/a2a/session/call/morning_brief", **token)
    assert resp.status_code == 402 and resp.json()["code"] == "session_expired"


@pytest.mark.django_db
def test_a_session_token_in_the_call_url_is_refused_and_uses_no_call(api):
    """A token in the URL reaches access logs; the call route takes it only as a header."""
    brief()
    session = new_session(calls=3)
    for query in ({"token": session.token}, {"token": ""}):
        for headers in ({}, {"HTTP_X_SESSION_TOKEN": session.token}):
            resp = api.get("/api/a2a/session/call/morning_brief", query, **headers)
            assert resp.status_code == 422
            (error,) = resp.json()["detail"]
            assert error["loc"] == ["query", "token"] and error["type"] == "token_in_query"
            assert "X-Session-Token" in error["msg"]
    session.refresh_from_db()
    assert session.calls_used == 0 and session.calls.count() == 0
    resp = api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN=session.token)
    assert resp.status_code == 200 and resp["X-Session-Calls-Remaining"] == "2"
    assert api.get("/api/a2a/session/call/morning_brief").json()["detail"].endswith("X-Session-Token header")
    # The status route keeps the query token (the interface requires it there).
    status = api.get("/api/a2a/session/status", {"token": session.token})
    assert status.status_code == 200 and status.json()["calls_used"] == 1
    # The call operation documents the header only; the status operation documents the risk.
    doc = api.get("/api/a2a/openapi.json").json()["paths"]
    call = doc["/api/a2a/session/call/{sku}"]["get"]
    assert {(p["in"], p["name"]) for p in call["parameters"]} == {
        ("path", "sku"),
        ("header", "X-Session-Token"),
    }
    assert "access logs" in doc["/api/a2a/session/status"]["get"]["description"]


@pytest.mark.django_db
def test_session_status_validation(api):
    assert api.get("/api/a2a/session/status", {"token": "short"}).status_code == 422
    assert api.get("/api/a2a/session/status", {"token": "x" * 40}).status_code == 404


@pytest.mark.django_db
def test_pack_sizes_are_editable(api):
    pack = SessionPack.objects.get(sku__sku="m2m_session_enterprise")
    assert (pack.calls_total, pack.window_hours) == (200, 168)
    pack.calls_total = 250
    pack.save()
    assert new_session("m2m_session_enterprise").calls_total == 250


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_100_parallel_calls_on_a_40_call_session_succeed_exactly_40_times():
    from catalog.services import catalog_seed

    catalog_seed()
    session = new_session()
    sku = Sku.objects.get(sku="morning_brief")

    def call(_: int) -> bool:
        try:
            session_run(session=session, sku=sku, run=lambda: {"ok": True})
            return True
        except SessionUnavailable:
            return False
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(call, range(100)))
    assert results.count(True) == 40
    session.refresh_from_db()
    assert session.calls_used == 40 and session.calls.count() == 40
