"""Prepaid credits: registration and keys, atomic debits with their ledger rows, and the
shapes of 401/402/409/422."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from eth_account import Account as EthAccount

from billing.credits import credit_add, ledger_audit
from billing.models import Account, ApiKey, BillingSettings, LedgerEntry
from catalog.models import NewsItem, TelemetryNode
from tests.support.wallets import register_over_http, sign

pytestmark = pytest.mark.django_db
WALLET = EthAccount.create()


def register(api, wallet=WALLET):
    """The agent's round trip: 401 with a challenge, sign it, register."""
    return register_over_http(api, wallet)


def funded(api, usdc: str) -> tuple[str, Account]:
    key = register(api).json()["api_key"]
    account = Account.objects.get(wallet_address=WALLET.address.lower())
    credit_add(
        account_id=account.id,
        amount_atomic=int(float(usdc) * 10**6),
        kind=LedgerEntry.Kind.ADJUSTMENT,
        reason="test funds",
    )
    return key, account


def test_register_returns_a_key_once_and_stores_only_its_hash(api, settings):
    resp = register(api)
    assert resp.status_code == 201
    body = resp.json()
    assert set(body) == {"api_key", "wallet_address", "credit_balance_usdc", "treasury_address", "rotated"}
    assert body["api_key"].startswith("a2a_") and len(body["api_key"]) >= 40
    assert body["credit_balance_usdc"] == 0 and body["treasury_address"] == settings.TREASURY_ADDRESS
    stored = ApiKey.objects.get()
    assert body["api_key"] not in (stored.key_hash, stored.prefix) and len(stored.key_hash) == 64
    assert api.get("/api/a2a/account", HTTP_X_API_KEY=body["api_key"]).json()["ownership_verified"] is True


def test_malformed_wallet_is_422_and_a_registration_without_proof_is_401_with_a_challenge(api):
    # Changed with the ownership fix: an unsigned registration used to create the account (201)
    # and a second one answered 409; now every registration proves ownership first.
    resp = api.post("/api/a2a/account/register", {"wallet_address": "0x12"}, format="json")
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["body", "wallet_address"]
    unsigned = api.post("/api/a2a/account/register", {"wallet_address": WALLET.address}, format="json")
    body = unsigned.json()
    assert unsigned.status_code == 401 and body["code"] == "ownership_proof_required"
    assert body["nonce"] in body["message"] and WALLET.address.lower() in body["message"]
    assert body["message_endpoint"] == "/api/a2a/account/register/message" and body["expires_at"]
    assert not Account.objects.exists()
    assert register(api).status_code == 201
    again = register(api)
    assert again.status_code == 200 and again.json()["rotated"] is True and Account.objects.count() == 1


def test_a_signature_over_the_issued_message_rotates_the_key(api, chain, settings):
    settings.CHAIN_RPC_URL = chain.url  # a stranger's signature: the chain says the wallet is no contract
    old = register(api).json()["api_key"]
    challenge = api.get("/api/a2a/account/register/message", {"wallet_address": WALLET.address}).json()
    stranger = sign(EthAccount.create(), challenge["message"])
    refused = api.post(
        "/api/a2a/account/register",
        {"wallet_address": WALLET.address, "nonce": challenge["nonce"], "signature": stranger},
        format="json",
    )
    assert refused.status_code == 401 and refused.json()["code"] == "ownership_not_proven"
    # A refused try used the challenge up: the owner asks for a fresh one.
    challenge = api.get("/api/a2a/account/register/message", {"wallet_address": WALLET.address}).json()
    proof = {
        "wallet_address": WALLET.address,
        "nonce": challenge["nonce"],
        "signature": sign(WALLET, challenge["message"]),
    }
    rotated = api.post("/api/a2a/account/register", proof, format="json")
    assert rotated.status_code == 200 and rotated.json()["rotated"] is True
    new = rotated.json()["api_key"]
    assert api.get("/api/a2a/account", HTTP_X_API_KEY=old).status_code == 401
    assert api.get("/api/a2a/account", HTTP_X_API_KEY=new).status_code == 200
    again = api.post("/api/a2a/account/register", proof, format="json")  # a challenge proves once
    assert again.status_code == 401 and again.json()["code"] == "ownership_not_proven"


def test_401_says_how_to_register(api):
    for headers in ({}, {"HTTP_X_API_KEY": "a2a_" + "x" * 43}):
        resp = api.get("/api/a2a/account", **headers)
        assert resp.status_code == 401
        assert resp.json()["register_endpoint"] == "/api/a2a/account/register" and resp.json()["instructions"]


def test_a_paid_call_debits_its_price_with_a_ledger_row_and_headers(api):
    key, account = funded(api, "1")
    item = NewsItem.objects.create(title="t", teaser="t", body="the full story", category="equity")
    resp = api.post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp.json()["body"] == "the full story"
    assert resp["X-Credit-Charged"] == "0.18" and resp["X-Credit-Balance"] == "0.82"
    again = api.post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)  # unlocked before: free
    assert again.status_code == 200 and again["X-Credit-Charged"] == "0"
    account.refresh_from_db()
    assert account.credit_balance_atomic == 820_000
    debit = LedgerEntry.objects.get(kind=LedgerEntry.Kind.SKU_CALL)
    assert (
        debit.amount_atomic == -180_000
        and debit.balance_after_atomic == 820_000
        and debit.sku.sku == "news_unlock"
    )
    assert ledger_audit() == []


def test_not_enough_credit_is_a_402_that_says_how_to_top_up(api):
    key, _ = funded(api, "0.1")
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="equity")
    resp = api.post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
    assert resp.status_code == 402
    body = resp.json()
    assert (
        body["code"] == "insufficient_credit" and body["balance_usdc"] == 0.1 and body["price_usdc"] == 0.18
    )
    assert body["topup"]["topup_info"] == "/api/a2a/account/topup-info" and body["x402_alternative"]
    assert Account.objects.get().credit_balance_atomic == 100_000


def test_a_failed_product_is_not_charged_and_unbuilt_ones_answer_503(api):
    key, account = funded(api, "1")
    resp = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key)  # no telemetry ingested yet
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert api.get("/api/a2a/sentiment", HTTP_X_API_KEY=key).status_code == 503  # product not built
    assert api.post(f"/api/a2a/news/{10**9}/unlock", HTTP_X_API_KEY=key).status_code == 404
    account.refresh_from_db()
    assert (
        account.credit_balance_atomic == 1_000_000
        and not LedgerEntry.objects.filter(kind="sku_call").exists()
    )


def test_credit_billing_off_needs_a_key_and_debits_nothing(api):
    billing = BillingSettings.load()
    billing.credit_billing_enabled = False
    billing.save()
    key, account = funded(api, "0")
    TelemetryNode.objects.create(node_id="n1", region="eu", country="DE", latency_ms=12.0)
    assert api.get("/api/a2a/telemetry/detail").status_code == 401
    resp = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp["X-Credit-Charged"] == "0" and resp.json()["count"] == 1
    assert api.get("/api/a2a/news/catalog").json()["credit_billing_enabled"] is False


def test_an_idempotency_key_returns_the_first_answer_without_a_second_debit(api):
    key, account = funded(api, "1")
    TelemetryNode.objects.create(node_id="n1", region="eu", country="DE", latency_ms=12.0)
    first = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="call-1")
    TelemetryNode.objects.create(node_id="n2", region="us", country="US", latency_ms=30.0)
    second = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key, HTTP_IDEMPOTENCY_KEY="call-1")
    assert first.json() == second.json() and second["X-Credit-Charged"] == "0.04"
    account.refresh_from_db()
    assert account.credit_balance_atomic == 960_000
    assert LedgerEntry.objects.filter(kind="sku_call").count() == 1


@pytest.mark.ledger_unbalanced
def test_ledger_audit_command_finds_a_balance_that_left_its_ledger(api):
    _, account = funded(api, "2")
    call_command("ledger_audit")
    Account.objects.filter(pk=account.pk).update(credit_balance_atomic=1)  # a change without a ledger row
    with pytest.raises(Exception, match="do not match"):
        call_command("ledger_audit")


def test_staff_adjustment_in_the_admin_writes_a_ledger_row(admin_client, api):
    _, account = funded(api, "0")
    resp = admin_client.post(
        "/admin/billing/creditadjustment/add/",
        {"account": account.id, "amount_usdc": "2.5", "reason": "goodwill"},
    )
    assert resp.status_code == 302
    row = LedgerEntry.objects.filter(kind="adjustment", reason="goodwill").get()
    assert row.amount_atomic == 2_500_000 and row.staff.username == "admin"
    account.refresh_from_db()
    assert account.credit_balance_atomic == 2_500_000 and ledger_audit() == []


def test_an_x402_path_is_paid_from_credits_when_an_api_key_is_sent(api):
    key, account = funded(api, "0.05")
    resp = api.get("/api/a2a/x402/payments/dual-rail-status", HTTP_X_API_KEY=key)
    assert resp.status_code == 200 and resp["X-Credit-Charged"] == "0.01"
    assert {r["name"] for r in resp.json()["routes"]} == {"x402", "credits", "sessions"}
    assert (
        api.get("/api/a2a/x402/payments/dual-rail-status", HTTP_X_API_KEY="a2a_" + "y" * 43).status_code
        == 401
    )
    broke = api.get("/api/a2a/x402/mcp/managed-pack", HTTP_X_API_KEY=key)  # 0.5 USDC
    assert broke.status_code == 402 and broke.json()["code"] == "insufficient_credit"  # before any debit
    account.refresh_from_db()
    assert account.credit_balance_atomic == 40_000
