"""Sign-in gets what the wallet already owns, wherever it was bought (the checks the apps register
in billing/front/signin.py): a session pack's call, a push entitlement's brief, a managed MCP
pack's call; and an MCP tool call and an A2A task paid by sign-in (HTTP header, MCP _meta, A2A
message metadata). No USDC is charged for what is owned: no ledger row."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from eth_account import Account as EthAccount
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.schemas import PaymentRequired

from agents.a2a.extension import REQUIRED
from agents.mcp.services import mcp_allowance_grant
from billing.credits import credit_add, ledger_audit
from billing.models import LedgerEntry
from catalog.models import Sku
from sessions_app.models import PrepaidSession
from sessions_app.services import session_create
from tests.support import a2a_rpc as a2a
from tests.support.mcp_rpc import ACCEPT, STATUS_SKU
from tests.support.payments import BRIEF, publish_brief
from tests.support.signin import BASE, required_of, signin_headers
from tests.support.wallets import register_wallet
from webhooks.models import PushEntitlement

pytestmark = pytest.mark.django_db
STATUS_PRICE = 10_000  # payments_dual_rail_status: 0.01 USDC


def wallet_with_account(credit: int = 0):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)
    if credit:
        credit_add(account_id=reg.account.id, amount_atomic=credit, kind="adjustment", reason="test")
    return wallet, reg


def sku_calls(account) -> int:
    return LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).count()


def signed_in_get(api, wallet, url: str):
    unpaid = api.get(url)
    assert unpaid.status_code == 402, unpaid.content
    return api.get(url, **signin_headers(wallet, required_of(unpaid), BASE + url))


def test_a_session_pack_bought_by_the_wallet_pays_without_its_token(api):
    publish_brief()
    wallet = EthAccount.create()  # no credit account at all: the pack was bought by x402
    pack = Sku.objects.get(sku="m2m_session_desk")
    session = session_create(pack_sku=pack, buyer=wallet.address)
    assert session.pack.covered_skus.filter(sku="morning_brief").exists()
    resp = signed_in_get(api, wallet, BRIEF)
    assert resp.status_code == 200 and resp["X-Session-Calls-Remaining"] == str(session.calls_total - 1)
    session.refresh_from_db()
    assert session.calls_used == 1
    # Someone else's pack is not the wallet's.
    PrepaidSession.objects.filter(pk=session.pk).update(buyer="0x" + "5" * 40)
    refused = signed_in_get(api, wallet, BRIEF)
    assert refused.status_code == 402 and refused.json()["error"] == "siwx_nothing_owned"
    assert ledger_audit() == []


def test_a_push_entitlement_owns_the_brief_it_pushes(api):
    publish_brief()
    wallet, reg = wallet_with_account()  # no credit: the brief must come free
    PushEntitlement.objects.create(
        account=reg.account, expires_at=timezone.now() + timedelta(days=7), kinds=["morning_brief"]
    )
    resp = signed_in_get(api, wallet, BRIEF)
    assert resp.status_code == 200 and resp.json()["body"] == "full brief"
    assert sku_calls(reg.account) == 0
    PushEntitlement.objects.filter(account=reg.account).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    expired = signed_in_get(api, wallet, BRIEF)  # the entitlement ran out: credits (none)
    assert expired.status_code == 402 and expired.json()["code"] == "insufficient_credit"
    assert ledger_audit() == []


# --- MCP ---------------------------------------------------------------------------------------------
def mcp(api, name: str, *, meta=None, **headers):
    params = {"name": name, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    resp = api.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_ACCEPT=ACCEPT,
        HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
        **headers,
    )
    assert resp.status_code == 200, resp.content
    return resp.json()["result"]


def mcp_required(result):
    required = extract_payment_required_from_result(
        MCPToolResult(
            content=result["content"], is_error=True, structured_content=result["structuredContent"]
        )
    )
    assert required is not None and SIGN_IN_WITH_X in (required.extensions or {})
    return required


def test_an_mcp_call_signed_in_spends_credits_then_a_managed_pack(api, settings):
    settings.PUBLIC_BASE_URL = BASE  # an MCP tool's resource (mcp://tool/...) is signed on our origin
    wallet, reg = wallet_with_account(1_000_000)
    required = mcp_required(mcp(api, STATUS_SKU))
    info = required.extensions[SIGN_IN_WITH_X]["info"]
    assert info["domain"] == "testserver" and info["uri"] == f"{BASE}/{STATUS_SKU}"
    paid = mcp(api, STATUS_SKU, **signin_headers(wallet, required, BASE + "/mcp"))
    assert paid["isError"] is False, paid
    receipt = paid["_meta"]["a2a/receipt"]
    assert (
        receipt["rail"] == "credits" and receipt["charged_usdc"] == 0.01 and receipt["balance_usdc"] == 0.99
    )
    rows = LedgerEntry.objects.filter(account=reg.account, kind=LedgerEntry.Kind.SKU_CALL)
    assert list(rows.values_list("amount_atomic", "reference")) == [(-STATUS_PRICE, f"/mcp {STATUS_SKU}")]
    # The same sign-in in _meta (clients without headers), after the wallet bought a managed pack:
    # its allowance pays, no debit.
    mcp_allowance_grant(account=reg.account, calls=5, days=30)
    required = mcp_required(mcp(api, STATUS_SKU))
    header = signin_headers(wallet, required, BASE + "/mcp")["HTTP_SIGN_IN_WITH_X"]
    by_pack = mcp(api, STATUS_SKU, meta={SIGN_IN_WITH_X: header})
    assert by_pack["isError"] is False and by_pack["_meta"]["a2a/receipt"]["calls_remaining"] == 4
    assert rows.count() == 1 and ledger_audit() == []
    replay = mcp(api, STATUS_SKU, meta={SIGN_IN_WITH_X: header})
    assert replay["isError"] is True and mcp_required(replay).error == "invalid_siwx_nonce_used"


# --- A2A -----------------------------------------------------------------------------------------------
def test_an_a2a_task_is_paid_by_signing_in_on_the_task(api):
    publish_brief()
    wallet, reg = wallet_with_account(1_000_000)
    task = a2a.send(api, a2a.BRIEF_SKU)  # unpaid: input-required with the x402 requirements
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    required = PaymentRequired.model_validate(a2a.status_meta(task)[REQUIRED])
    header = signin_headers(wallet, required, BASE + BRIEF)["HTTP_SIGN_IN_WITH_X"]
    message = {
        "messageId": "signed",
        "role": "ROLE_USER",
        "taskId": task["id"],
        "parts": [{"text": "signed in"}],
        "metadata": {SIGN_IN_WITH_X: header},
    }
    done = a2a.rpc(api, "SendMessage", {"message": message}).json()["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert sku_calls(reg.account) == 1 and ledger_audit() == []
