"""The x402 SDK's own HTTP client (httpx transport, unmodified) against the running service: a
client that could pay with `exact` and also carries the SDK's sign-in extension signs in instead
(the SDK prefers it when the 402 declares it), and the wallet's credits pay: no payment proof is
made, the debit is a ledger row like an API key's."""

from __future__ import annotations

import asyncio

import pytest
from eth_account import Account as EthAccount
from x402 import x402Client
from x402.extensions.sign_in_with_x import CreateSIWxClientExtensionOptions, create_siwx_client_extension
from x402.http.clients import wrapHttpxWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add, ledger_audit
from billing.models import LedgerEntry, Payment
from tests.support.payments import BRIEF, BRIEF_PRICE, publish_brief
from tests.support.wallets import register_wallet

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def shop(live_server):
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    publish_brief()
    return live_server.url


def test_the_sdk_http_client_signs_in_rather_than_pays(shop):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    client = register_exact_evm_client(x402Client(), dev_account(DEMO_PAYER))  # it could pay...
    client.register_extension(
        create_siwx_client_extension(CreateSIWxClientExtensionOptions(signers=[wallet]))
    )

    async def fetch() -> tuple[int, str, str]:
        async with wrapHttpxWithPayment(client, timeout=20) as http:
            resp = await http.get(shop + BRIEF)
            return resp.status_code, resp.headers.get("X-Credit-Charged", ""), resp.json().get("body", "")

    status, charged, body = asyncio.run(fetch())
    assert (status, charged, body) == (200, "0.08", "full brief")
    assert Payment.objects.count() == 0  # ...but signed in: no x402 payment
    rows = LedgerEntry.objects.filter(account=reg.account, kind=LedgerEntry.Kind.SKU_CALL)
    assert list(rows.values_list("amount_atomic", flat=True)) == [-BRIEF_PRICE]
    assert ledger_audit() == []
