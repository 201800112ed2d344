"""A product is one spec: a throwaway spec registered in a test appears priced in the OpenAPI
document, /.well-known/x402, the storefront, the MCP catalog and the agent card (with its
output model), and is sold by x402, by credits and through a prepaid session, with no other
edit."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from django.urls import clear_url_caches
from eth_account import Account as EthAccount
from pydantic import BaseModel, Field
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add
from billing.models import Account, LedgerEntry, Payment
from catalog.models import Sku
from catalog.products.registry import ProductCall, ProductSpec, TeaserSpec, registered, specs_all
from catalog.services import catalog_seed
from tests.support.wallets import register_over_http

PATH = "/api/a2a/x402/test/throwaway-probe"


class ProbeOut(BaseModel):
    greeting: str
    skus_listed: int = Field(description="SKU rows in the catalog")


def probe_run(call: ProductCall) -> dict[str, Any]:
    return {"greeting": "hello from a throwaway product", "skus_listed": Sku.objects.count()}


PROBE = ProductSpec(
    sku="throwaway_probe",
    path="/test/throwaway-probe",
    headline="Throwaway probe: a product defined in a test",
    price="0.02",
    family="test",
    tier="C",
    hero=True,  # the storefront features hero SKUs (others are listed by tier and family)
    session_callable=True,
    teaser="throwaway-probe",
    teasers=(TeaserSpec(name="throwaway-probe", title="Throwaway probe", summary="A test product."),),
    output=ProbeOut,
    run=probe_run,
    pure=True,
)


def urls_reload() -> None:
    """The URL tables are read from the specs when they are imported (at startup)."""
    import a2a_service.urls
    import billing.api.urls

    importlib.reload(billing.api.urls)
    importlib.reload(a2a_service.urls)
    clear_url_caches()


@pytest.fixture
def probe() -> Iterator[ProductSpec]:
    with registered(PROBE):
        urls_reload()
        try:
            yield PROBE
        finally:
            pass
    urls_reload()


@pytest.mark.django_db
def test_a_spec_is_listed_priced_everywhere(probe, api):
    catalog_seed()
    assert [s.sku for s in specs_all()][-1] == "throwaway_probe"
    row = Sku.objects.get(sku="throwaway_probe")
    assert (row.path, row.price_atomic, row.free_teaser) == (PATH, 20_000, "/api/a2a/teaser/throwaway-probe")

    doc = api.get("/api/a2a/openapi.json").json()
    op = doc["paths"][PATH]["get"]
    assert op["summary"] == probe.headline
    ok = op["responses"]["200"]["content"]["application/json"]["schema"]
    ref = ok["$ref"].rsplit("/", 1)[-1]
    assert set(doc["components"]["schemas"][ref]["properties"]) == {"greeting", "skus_listed"}

    well_known = api.get("/.well-known/x402").json()
    resource = [r for r in well_known["resources"] if r["resource"].endswith(PATH)]
    assert len(resource) == 1 and resource[0]["price_usdc"] == 0.02
    assert set(resource[0]["outputSchema"]["properties"]) == {"greeting", "skus_listed"}

    store = api.get("/api/a2a/discovery/storefront").json()
    listed = [s for s in store["storefront_skus"] if s["sku"] == "throwaway_probe"]
    assert listed and listed[0]["status"] == "live_x402" and listed[0]["price_usdc"] == 0.02

    mcp = api.get("/api/a2a/mcp/catalog").json()
    tool = [t for t in mcp["tools"] if t["name"] == "throwaway_probe"]
    assert tool and tool[0]["paid"] and tool[0]["price_usdc"] == 0.02
    assert tool[0]["outputSchema"] == ProbeOut.model_json_schema()

    card = api.get("/.well-known/agent.json").json()
    skill = [s for s in card["skills"] if s["id"] == "throwaway_probe"]
    assert skill and "0.02 USDC" in skill[0]["description"] and "test" in skill[0]["tags"]

    teaser = api.get("/api/a2a/teaser/throwaway-probe").json()
    assert teaser["title"] == "Throwaway probe"

    unpaid = api.get(PATH)
    assert unpaid.status_code == 402
    assert unpaid.json()["accepts"][0]["maxAmountRequired"] == "20000"


@pytest.mark.django_db
def test_a_spec_is_sold_by_credits_and_through_a_session(probe, api):
    catalog_seed()
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(
        account_id=account.id, amount_atomic=2_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )

    paid = api.get(PATH, HTTP_X_API_KEY=key)
    assert paid.status_code == 200, paid.content
    body = ProbeOut.model_validate(paid.json())
    assert body.skus_listed == Sku.objects.count()
    account.refresh_from_db()
    assert account.credit_balance_atomic == 2_000_000 - 20_000
    debit = LedgerEntry.objects.get(account=account, sku__sku="throwaway_probe")
    assert debit.amount_atomic == -20_000 and debit.balance_after_atomic == 1_980_000

    # A desk pack bought with the same credits covers the new session-callable product.
    pack = api.get("/api/a2a/x402/session/desk-pack", HTTP_X_API_KEY=key)
    assert pack.status_code == 200, pack.content
    assert "throwaway_probe" in pack.json()["skus"]
    token = pack.json()["token"]
    call = api.get("/api/a2a/session/call/throwaway_probe", HTTP_X_SESSION_TOKEN=token)
    assert call.status_code == 200, call.content
    ProbeOut.model_validate(call.json())
    assert call["X-Session-Calls-Remaining"] == "39"
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_980_000 - 1_500_000  # the pack; the session call is not a debit


def test_a_spec_is_sold_by_x402(probe, paid_stack):
    catalog_seed()
    client = register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))
    with wrapRequestsWithPayment(requests.Session(), client) as session:
        resp = session.get(paid_stack.url + PATH, timeout=30)
    assert resp.status_code == 200, resp.text
    ProbeOut.model_validate(resp.json())
    payment = Payment.objects.get(sku__sku="throwaway_probe")
    assert payment.state == Payment.State.SETTLED and payment.amount_atomic == 20_000
    assert payment.delivered_at is not None
