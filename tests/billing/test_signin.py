"""Sign-in-with-x through the payment front (issue 26, item 3): every 402 declares the SDK's
`sign-in-with-x` extension; a wallet that signs it with the SDK's client code spends its credits
(no API key: the same debit, ledger row and receipt as X-API-Key) or gets what it already owns
without a charge; a wallet that owns nothing, a replayed signature, a signature for another path,
an expired one and one for another domain get the 402."""

from __future__ import annotations

import base64
import dataclasses
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from eth_account import Account as EthAccount
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X, SIWxExtension

from billing.credits import credit_add, ledger_audit
from billing.models import Account, LedgerEntry, NewsUnlock, SignInNonce
from billing.x402.signin import siwx_nonce_valid
from catalog.models import NewsItem
from tests.support.concurrency import at_once
from tests.support.signin import BASE, required_of, signin_header_for, signin_headers, signin_info
from tests.support.wallets import register_wallet

pytestmark = pytest.mark.django_db
PRICE = 180_000  # an equity news item's unlock


def unlock_url(item: NewsItem) -> str:
    return f"/api/a2a/x402/news/unlock?news_id={item.id}"


def new_item() -> NewsItem:
    return NewsItem.objects.create(title="t", teaser="t", body="the full story", category="equity")


def funded_wallet(atomic: int):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)  # the wallet signed our ownership challenge: a verified account
    if atomic:
        credit_add(account_id=reg.account.id, amount_atomic=atomic, kind="adjustment", reason="test")
    return wallet, reg


def signed_in(api, wallet, url: str) -> dict[str, str]:
    """The SDK client's round trip: the unpaid call's 402, then the hook's header."""
    unpaid = api.get(url)
    assert unpaid.status_code == 402
    return signin_headers(wallet, required_of(unpaid), BASE + url)


def debits(account: Account) -> list[int]:
    rows = LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL)
    return list(rows.values_list("amount_atomic", flat=True))


def test_every_402_declares_sign_in_bound_to_our_origin_and_the_resource(api):
    item = new_item()
    required = required_of(api.get(unlock_url(item)))
    declared = SIWxExtension.model_validate((required.extensions or {})[SIGN_IN_WITH_X])  # the SDK's schema
    info = declared.info
    assert (
        info.domain == "testserver" and info.uri == BASE + unlock_url(item) and info.resources == [info.uri]
    )
    assert [c.chain_id for c in declared.supported_chains] == [settings.X402_NETWORK]
    assert declared.supported_chains[0].type == "eip191" and info.statement
    assert info.nonce is not None and siwx_nonce_valid(info.nonce)
    assert info.issued_at and info.expiration_time
    issued = datetime.fromisoformat(info.issued_at.replace("Z", "+00:00"))
    expires = datetime.fromisoformat(info.expiration_time.replace("Z", "+00:00"))
    assert expires - issued == timedelta(seconds=300)


def test_a_signed_in_wallet_spends_its_credits_like_an_api_key(api):
    wallet, reg = funded_wallet(1_000_000)
    first, second = new_item(), new_item()
    by_key = api.get(unlock_url(first), HTTP_X_API_KEY=reg.api_key)
    url = unlock_url(second)
    resp = api.get(url, **signed_in(api, wallet, url))  # no API key
    assert resp.status_code == 200 and resp.json()["body"] == "the full story"
    # The receipt of the API-key call, one price later.
    assert (by_key["X-Credit-Charged"], by_key["X-Credit-Balance"]) == ("0.18", "0.82")
    assert (resp["X-Credit-Charged"], resp["X-Credit-Balance"]) == ("0.18", "0.64")
    assert debits(reg.account) == [-PRICE, -PRICE]
    row = LedgerEntry.objects.filter(account=reg.account).latest("id")
    assert row.balance_after_atomic == 640_000 and row.reference == "/api/a2a/x402/news/unlock"
    assert NewsUnlock.objects.filter(account=reg.account, news_item=second).count() == 1
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == 1
    assert ledger_audit() == []


def test_an_unlocked_item_is_fetched_again_by_sign_in_for_free(api):
    wallet, reg = funded_wallet(PRICE)  # exactly one unlock
    item = new_item()
    url = unlock_url(item)
    paid = api.get(url, **signed_in(api, wallet, url))
    assert paid.status_code == 200 and paid["X-Credit-Charged"] == "0.18" and paid["X-Credit-Balance"] == "0"
    again = api.get(url, **signed_in(api, wallet, url))  # a new 402, a new signature: its own nonce
    assert again.status_code == 200 and again.json()["body"] == "the full story"
    assert again["X-Credit-Charged"] == "0" and again["X-Credit-Balance"] == "0"
    assert debits(reg.account) == [-PRICE]  # no second ledger row
    assert ledger_audit() == []


def test_a_signed_in_wallet_that_owns_nothing_gets_the_402(api):
    wallet = EthAccount.create()  # no account
    url = unlock_url(new_item())
    resp = api.get(url, **signed_in(api, wallet, url))
    assert resp.status_code == 402 and resp.json()["error"] == "siwx_nothing_owned"
    assert wallet.address.lower() in resp.json()["detail"]
    assert SIGN_IN_WITH_X in (required_of(resp).extensions or {})  # the challenge to pay instead
    # A verified account with no credit: the API key's own refusal, nothing debited.
    wallet, reg = funded_wallet(0)
    resp = api.get(url, **signed_in(api, wallet, url))
    assert resp.status_code == 402 and resp.json()["code"] == "insufficient_credit"
    assert debits(reg.account) == [] and ledger_audit() == []


def test_a_replayed_signature_is_refused(api):
    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    header = signed_in(api, wallet, url)
    assert api.get(url, **header).status_code == 200
    replay = api.get(url, **header)
    assert replay.status_code == 402 and replay.json()["error"] == "invalid_siwx_nonce_used"
    assert debits(reg.account) == [-PRICE] and ledger_audit() == []


def test_a_call_that_fails_leaves_the_signature_unused_and_a_served_one_uses_it(api):
    """The nonce is used with the payment, in the rail's transaction: refused for want of
    credit, the same signed message goes through once the wallet has credit, then never again."""
    wallet, reg = funded_wallet(0)
    url = unlock_url(new_item())
    header = signed_in(api, wallet, url)
    refused = api.get(url, **header)
    assert refused.status_code == 402 and refused.json()["code"] == "insufficient_credit"
    assert SignInNonce.objects.count() == 0 and debits(reg.account) == []
    credit_add(account_id=reg.account.id, amount_atomic=PRICE, kind="adjustment", reason="test")
    served = api.get(url, **header)  # the same signature
    assert served.status_code == 200 and served.json()["body"] == "the full story"
    assert served["X-Credit-Charged"] == "0.18" and served["X-Credit-Balance"] == "0"
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == 1
    replay = api.get(url, **header)
    assert replay.status_code == 402 and replay.json()["error"] == "invalid_siwx_nonce_used"
    assert debits(reg.account) == [-PRICE] and ledger_audit() == []


def test_a_product_with_nothing_to_deliver_leaves_the_signature_unused(api, monkeypatch):
    """503 for a product that has nothing fresh: nothing charged, and the signed message is
    still good for the call once it has."""
    from catalog.products import registry

    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    header = signed_in(api, wallet, url)
    spec = registry.product_get("news_unlock")
    assert spec is not None

    def failing(call):
        raise registry.ProductFailed("the story could not be read; nothing was charged")

    with monkeypatch.context() as patched:
        patched.setitem(registry._SPECS, "news_unlock", dataclasses.replace(spec, run=failing))
        failed = api.get(url, **header)
    assert failed.status_code == 503 and failed.json().get("charged", False) is False
    assert SignInNonce.objects.count() == 0 and debits(reg.account) == []
    served = api.get(url, **header)
    assert served.status_code == 200 and debits(reg.account) == [-PRICE]
    assert SignInNonce.objects.count() == 1 and ledger_audit() == []


@pytest.mark.django_db(transaction=True)
def test_one_signature_sent_by_many_callers_at_once_is_used_once():
    """Six requests with the same signed message at once (threads, each its own connection):
    the nonce's unique row, written in each call's transaction, lets one be served and charged;
    the others wait for it and are refused as a replay."""
    from django.db import connection
    from rest_framework.test import APIClient

    if connection.vendor != "postgresql":
        pytest.skip("concurrent transactions need PostgreSQL")
    from catalog.services import catalog_seed

    catalog_seed()
    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    header = signed_in(APIClient(), wallet, url)
    callers = 6

    def call() -> tuple[int, dict]:
        resp = APIClient().get(url, **header)
        return resp.status_code, resp.json()

    answers = at_once(callers, call)
    served = [body for status, body in answers if status == 200]
    refused = [body for status, body in answers if status != 200]
    assert len(served) == 1 and served[0]["body"] == "the full story"
    assert [body["error"] for body in refused] == ["invalid_siwx_nonce_used"] * (callers - 1)
    assert debits(reg.account) == [-PRICE] and SignInNonce.objects.count() == 1
    assert ledger_audit() == []


def test_a_signature_for_another_path_is_refused(api):
    wallet, reg = funded_wallet(1_000_000)
    signed_for, other = unlock_url(new_item()), unlock_url(new_item())
    header = signed_in(api, wallet, signed_for)
    resp = api.get(other, **header)  # another item: the same path, another query
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_uri_mismatch"
    brief = api.get("/api/a2a/x402/morning-brief", **header)  # another path
    assert brief.status_code in (402, 503) and brief.json().get("error", "invalid_siwx_uri_mismatch") in (
        "invalid_siwx_uri_mismatch"
    )
    assert debits(reg.account) == [] and ledger_audit() == []
    assert api.get(signed_for, **header).status_code == 200  # refused elsewhere, still good here


def test_an_expired_signature_is_refused(api):
    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    info = signin_info(required_of(api.get(url)))
    now = datetime.now(UTC)
    info["issuedAt"] = (now - timedelta(seconds=120)).isoformat().replace("+00:00", "Z")
    info["expirationTime"] = (now - timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
    resp = api.get(url, **signin_header_for(wallet, info, BASE + url))
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_expired"
    info["issuedAt"] = (now - timedelta(seconds=400)).isoformat().replace("+00:00", "Z")  # too old
    info.pop("expirationTime")
    resp = api.get(url, **signin_header_for(wallet, info, BASE + url))
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_issued_at_too_old"
    assert debits(reg.account) == [] and ledger_audit() == []


def test_a_message_for_another_domain_is_refused(api):
    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    info = signin_info(required_of(api.get(url)))
    elsewhere = "https://elsewhere.example" + url
    info.update(domain="elsewhere.example", uri=elsewhere, resources=[elsewhere])
    resp = api.get(url, **signin_header_for(wallet, info, elsewhere))
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_domain_mismatch"
    assert debits(reg.account) == [] and ledger_audit() == []


def test_a_forged_signature_or_a_nonce_of_our_making_is_refused(api):
    wallet, reg = funded_wallet(1_000_000)
    url = unlock_url(new_item())
    info = signin_info(required_of(api.get(url)))
    made_up = {**info, "nonce": "siwx" + "0" * 48}
    resp = api.get(url, **signin_header_for(wallet, made_up, BASE + url))
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_nonce"
    resp = api.get(url, HTTP_SIGN_IN_WITH_X="not base64 at all!")
    assert resp.status_code == 402 and resp.json()["error"] == "invalid_siwx_payload"
    # Well-formed JSON the SIWE message refuses, or the SDK's validation trips on: 402, never 500.
    good = json.loads(base64.b64decode(signin_header_for(wallet, info, BASE + url)["HTTP_SIGN_IN_WITH_X"]))
    for broken in ({"address": "0x1234"}, {"uri": "http://[::1/x"}, {"issuedAt": "yesterday"}):
        header = base64.b64encode(json.dumps({**good, **broken}).encode()).decode()
        resp = api.get(url, HTTP_SIGN_IN_WITH_X=header)
        assert resp.status_code == 402 and resp.json()["error"].startswith("invalid_siwx"), resp.json()
    deep = base64.b64encode(("[" * 5000 + "]" * 5000).encode()).decode()
    assert api.get(url, HTTP_SIGN_IN_WITH_X=deep).json()["error"] == "invalid_siwx_payload"
    assert debits(reg.account) == [] and ledger_audit() == []


def test_the_x402_discovery_document_names_the_sign_in_header(api):
    assert api.get("/.well-known/x402").json()["payment_headers"]["sign_in"] == "SIGN-IN-WITH-X"
