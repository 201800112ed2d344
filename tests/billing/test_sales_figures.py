"""Published sales count every sale (issue 23 item 9): the same product sold by x402, by
credits, by a prepaid session and by a managed MCP pack is four sales in the storefront's
figures, the platform stats, the conversion funnel, the x402 status and the case study, each
with the money it brought in once and the rail that paid for it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from billing.models import LedgerEntry, Payment
from catalog.models import EditorialPiece, Sku
from sessions_app.services import session_create
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db
BRIEF = "/api/a2a/x402/morning-brief"
BRIEF_PRICE, SESSION_PRICE, PACK_PRICE = 80_000, 1_500_000, 500_000
X402_PAYER, SESSION_BUYER = "0x" + "a1" * 20, "0x" + "c3" * 20


def payment(sku: str, amount: int, payer: str, nonce: str, state: str = Payment.State.SETTLED) -> Payment:
    """A payment as the x402 rail records it (settled: a sale; failed: an attempt that was not)."""
    return Payment.objects.create(
        sku=Sku.objects.get(sku=sku),
        resource="http://testserver/api/a2a/x402/" + sku,
        payer=payer,
        nonce=nonce,
        amount_atomic=amount,
        network="eip155:8453",
        asset="0x" + "0" * 40,
        pay_to="0x" + "f" * 40,
        state=state,
        settled_at=timezone.now() if state == Payment.State.SETTLED else None,
    )


def mcp_call(api, name: str, key: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}
    resp = api.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
        HTTP_X_API_KEY=key,
    )
    result: dict[str, Any] = resp.json()["result"]
    assert result["isError"] is False, result
    return result


def sell_the_brief_by_every_rail(api) -> dict[str, str]:
    """One morning brief by each rail (and the packs two of them needed); the wallets."""
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )
    # x402: a settled payment (and one that failed: an attempt that did not sell).
    payment("morning_brief", BRIEF_PRICE, X402_PAYER, "0x01")
    payment("morning_brief", BRIEF_PRICE, X402_PAYER, "0x02", state=Payment.State.FAILED)
    # Credits: the brief on its own path with an API key.
    key, credit_account = funded_buyer(api, 1_000_000)
    assert api.get(BRIEF, HTTP_X_API_KEY=key).status_code == 200
    # A session: its pack bought by x402 (a sale of the pack), then one call of it.
    payment("m2m_session_desk", SESSION_PRICE, SESSION_BUYER, "0x03")
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer=SESSION_BUYER)
    resp = api.get("/api/a2a/session/call/morning_brief", HTTP_X_SESSION_TOKEN=session.token)
    assert resp.status_code == 200, resp.content
    # A managed MCP pack bought with credits (a sale of the pack), then the brief as a tool call.
    pack_key, pack_account = funded_buyer(api, 1_000_000)
    mcp_call(api, "mcp_managed_pack", pack_key)
    used = mcp_call(api, "morning_brief", pack_key)
    assert used["_meta"]["a2a/receipt"]["rail"] == "mcp_managed_pack"
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).count() == 2  # the brief, the pack
    return {"credits": credit_account.wallet_address, "pack": pack_account.wallet_address}


def test_every_published_sales_figure_counts_every_rail_with_its_money_once(api):
    sell_the_brief_by_every_rail(api)
    rails = {"x402", "credits", "session", "mcp_managed_pack"}

    # The storefront: the brief sold four times, one by each rail; the money of two of them
    # (the session's and the pack's calls were paid when the packs were bought).
    store = api.get("/api/a2a/discovery/storefront").json()
    [brief] = [x for x in store["storefront_skus"] if x["sku"] == "morning_brief"]
    assert brief["sales_30d"] == 4 and brief["sales_all_time"] == 4
    assert brief["sales_30d_by_rail"] == dict.fromkeys(rails, 1)
    assert brief["revenue_30d_usdc"] == brief["revenue_all_time_usdc"] == 0.16
    assert brief["trust_score"] == 80.0  # 4 delivered of 5 attempts (one x402 payment failed)

    # Platform stats, all time: the brief x4, the session pack (x402), the MCP pack (credits).
    stats = api.get("/api/a2a/platform/stats").json()
    assert stats["sales_all_time"] == 6
    assert stats["revenue_all_time_usdc"] == 2.16  # 0.08 + 0.08 + 1.5 + 0.5
    assert stats["paying_wallets"] == 4  # the x402 payer, two credit accounts, the session buyer
    assert stats["sales_by_rail"] == {
        "x402": {"sales": 2, "revenue_usdc": 1.58},
        "credits": {"sales": 2, "revenue_usdc": 0.58},
        "session": {"sales": 1, "revenue_usdc": 0.0},
        "mcp_managed_pack": {"sales": 1, "revenue_usdc": 0.0},
    }

    # The 30-day figures of the x402 status and the case study are the same sales.
    for figures in (
        api.get("/api/a2a/x402/status").json()["performance_30d"],
        api.get("/api/a2a/discovery/case-study").json()["metrics"],
    ):
        assert (figures["sales"], figures["revenue_usdc"], figures["paying_wallets"]) == (6, 2.16, 4)
        assert figures["by_rail"] == stats["sales_by_rail"]
        assert figures["top_skus"][0] == {"sku": "morning_brief", "sales": 4, "revenue_usdc": 0.16}
        assert {t["sku"] for t in figures["top_skus"]} == {"morning_brief", "m2m_session_desk", "mcp_managed_pack"}

    # The conversion funnel: every sale, the failed x402 attempt, every SKU that sold.
    funnel = api.get("/api/a2a/monetization/conversion").json()
    assert (funnel["sales"], funnel["payment_attempts"], funnel["skus_activated"]) == (6, 7, 3)
    assert funnel["sales_by_rail"] == stats["sales_by_rail"]
    assert funnel["revenue_usdc"] == {"24h": 2.16, "7d": 2.16, "30d": 2.16}


def test_sales_older_than_the_window_leave_the_30_day_figures_only(api):
    sell_the_brief_by_every_rail(api)
    old = timezone.now() - timedelta(days=40)
    Payment.objects.update(settled_at=old, created_at=old)
    LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).update(created_at=old)
    store = api.get("/api/a2a/discovery/storefront").json()
    [brief] = [x for x in store["storefront_skus"] if x["sku"] == "morning_brief"]
    assert (brief["sales_30d"], brief["sales_all_time"]) == (2, 4)
    assert brief["sales_30d_by_rail"] == {"session": 1, "mcp_managed_pack": 1}
    assert (brief["revenue_30d_usdc"], brief["revenue_all_time_usdc"]) == (0.0, 0.16)
    assert brief["trust_score"] == 100.0  # the failed attempt is older too
    assert api.get("/api/a2a/platform/stats").json()["sales_all_time"] == 6
    assert api.get("/api/a2a/x402/status").json()["performance_30d"]["sales"] == 2
