"""The one paid-call service, with no HTTP: the same product sold through every rail by
calling billing.paid_call.paid_call directly (as the A2A and MCP surfaces will), and a
product that fails charges nothing on any of them."""

from __future__ import annotations

import dataclasses

import pytest
from x402.schemas import PaymentRequired as X402PaymentRequired

from a2a_service.core.errors import PaymentRequired, ProductUnavailable, RequestValidationError
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import ledger_audit
from billing.models import BillingSettings, IdempotentCall, LedgerEntry, NewsUnlock, Payment
from billing.paid_call import (
    CreditReceipt,
    FreeReceipt,
    Offer,
    ReplayReceipt,
    SessionReceipt,
    X402Receipt,
    paid_call,
    paid_offer,
)
from billing.rails.credits import CreditRail, Idempotency
from billing.rails.x402 import x402_challenge, x402_payment
from catalog.models import NewsItem, Sku
from sessions_app.models import PrepaidSession, SessionCall
from sessions_app.rail import session_payment
from sessions_app.services import session_create
from tests.support.payments import BASE, BRIEF_PRICE, balance, balances, funded, payer_client, publish_brief


def sku_calls() -> int:
    return LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).count()


def x402_rail(offer: Offer):
    """A proof signed by the official x402 client for the offer's challenge, checked."""
    url = BASE + "/api/a2a/x402/morning-brief"
    challenge = x402_challenge(offer, resource_url=url)
    required = X402PaymentRequired(x402_version=2, resource=challenge.resource, accepts=[challenge.v2])
    payload = payer_client().create_payment_payload(required)
    return x402_payment(payload=payload, offer=offer, resource_url=url)


def desk_session() -> PrepaidSession:
    return session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer="0x" + "5" * 40)


# --- the same product through each rail -----------------------------------------------------
def test_x402_rail_settles_on_chain_and_delivers_once(paid_stack):
    publish_brief()
    before = balances(paid_stack)
    offer = paid_offer(product="morning_brief", params=None, base_url=BASE)
    assert offer.price_atomic == BRIEF_PRICE
    paid = paid_call(product=offer, payment=x402_rail(offer))
    assert paid.content["body"] == "full brief"
    assert isinstance(paid.receipt, X402Receipt) and paid.receipt.settlement.success
    assert paid.receipt.version == 2
    after = balances(paid_stack)
    assert (before[0] - after[0], after[1] - before[1]) == (BRIEF_PRICE, BRIEF_PRICE)
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.delivered_at is not None
    assert payment.tx_hash == paid.receipt.settlement.transaction
    assert payment.payer == dev_account(DEMO_PAYER).address.lower()


@pytest.mark.django_db
def test_credit_rail_debits_the_price_with_its_ledger_row():
    publish_brief()
    _, account = funded(1.0)
    paid = paid_call(
        product="morning_brief",
        params=None,
        base_url=BASE,
        payment=CreditRail(account=account, reference="a2a:test"),
    )
    assert paid.content["body"] == "full brief"
    assert paid.receipt == CreditReceipt(charged_atomic=BRIEF_PRICE, balance_atomic=1_000_000 - BRIEF_PRICE)
    assert balance(account) == 1_000_000 - BRIEF_PRICE
    (row,) = LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL)
    assert (row.amount_atomic, row.sku.sku, row.reference) == (-BRIEF_PRICE, "morning_brief", "a2a:test")
    assert ledger_audit() == []


@pytest.mark.django_db
def test_session_rail_uses_one_call():
    publish_brief()
    session = desk_session()
    paid = paid_call(
        product="morning_brief",
        params=None,
        base_url=BASE,
        payment=session_payment(token=session.token, sku="morning_brief"),
    )
    assert paid.content["body"] == "full brief"
    assert paid.receipt == SessionReceipt(calls_remaining=session.calls_total - 1)
    session.refresh_from_db()
    assert session.calls_used == 1
    assert list(SessionCall.objects.values_list("sku__sku", flat=True)) == ["morning_brief"]
    assert sku_calls() == 0 and Payment.objects.count() == 0


# --- a failing product charges nothing, on every rail ---------------------------------------
def test_x402_rail_releases_the_claim_when_the_product_fails(paid_stack):
    before = balances(paid_stack)  # no brief published: the product fails
    offer = paid_offer(product="morning_brief", params=None, base_url=BASE)
    rail = x402_rail(offer)
    with pytest.raises(ProductUnavailable) as failed:
        paid_call(product=offer, payment=rail)
    assert failed.value.extra == {"sku": "morning_brief", "charged": False, "retry_after": 60}
    assert failed.value.headers == {"Retry-After": "60"}
    assert Payment.objects.count() == 0  # released: the same proof may be sent again
    assert balances(paid_stack) == before
    publish_brief()
    offer = paid_offer(product="morning_brief", params=None, base_url=BASE)
    paid = paid_call(product=offer, payment=rail)  # the same proof, now that there is content
    assert paid.content["body"] == "full brief"
    assert balances(paid_stack)[0] == before[0] - BRIEF_PRICE


@pytest.mark.django_db
def test_credit_rail_charges_nothing_when_the_product_fails():
    _, account = funded(1.0)
    with pytest.raises(ProductUnavailable) as failed:
        paid_call(
            product="morning_brief",
            params=None,
            base_url=BASE,
            payment=CreditRail(
                account=account, reference="a2a:test", idempotency=Idempotency("k", "f" * 64, "a2a")
            ),
        )
    assert failed.value.extra["charged"] is False
    assert balance(account) == 1_000_000 and sku_calls() == 0
    assert IdempotentCall.objects.count() == 0 and ledger_audit() == []


@pytest.mark.django_db
def test_session_rail_uses_no_call_when_the_product_fails():
    session = desk_session()
    with pytest.raises(ProductUnavailable):
        paid_call(
            product="morning_brief",
            params=None,
            base_url=BASE,
            payment=session_payment(token=session.token, sku="morning_brief"),
        )
    session.refresh_from_db()
    assert session.calls_used == 0 and SessionCall.objects.count() == 0


@pytest.mark.django_db
def test_no_payment_is_free_only_while_billing_is_off():
    publish_brief()
    with pytest.raises(PaymentRequired):
        paid_call(product="morning_brief", params=None, base_url=BASE, payment=None)
    BillingSettings.objects.filter(pk=1).update(credit_billing_enabled=False)
    paid = paid_call(product="morning_brief", params=None, base_url=BASE, payment=None)
    assert paid.content["body"] == "full brief" and paid.receipt == FreeReceipt()


# --- credit-rail specifics, without HTTP ----------------------------------------------------
@pytest.mark.django_db
def test_credit_rail_replays_an_idempotency_key_and_frees_an_unlocked_item_again():
    _, account = funded(1.0)
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")

    def unlock(key: str, fingerprint: str):
        return paid_call(
            product="news_unlock",
            params={"news_id": str(item.id)},  # a mapping is validated with the product's params
            base_url=BASE,
            payment=CreditRail(
                account=account, reference="a2a", idempotency=Idempotency(key, fingerprint, "p")
            ),
        )

    first = unlock("k1", "a" * 64)
    assert first.content["body"] == "b" and isinstance(first.receipt, CreditReceipt)
    charged = first.receipt.charged_atomic
    assert charged == item.price_atomic > 0
    again = unlock("k1", "a" * 64)
    assert again.content == first.content and isinstance(again.receipt, ReplayReceipt)
    with pytest.raises(RequestValidationError):
        unlock("k1", "b" * 64)  # the key on another call
    free = unlock("k2", "c" * 64)
    assert free.receipt == CreditReceipt(charged_atomic=0, balance_atomic=1_000_000 - charged)
    assert NewsUnlock.objects.filter(account=account, news_item=item).count() == 1
    assert balance(account) == 1_000_000 - charged and sku_calls() == 1


@pytest.mark.django_db
def test_credit_rail_refuses_without_enough_credit_and_params_are_validated_before_anything():
    publish_brief()
    _, account = funded(0.01)
    rail = CreditRail(account=account, reference="a2a")
    with pytest.raises(PaymentRequired) as refused:
        paid_call(product="morning_brief", params=None, base_url=BASE, payment=rail)
    assert refused.value.extra["code"] == "insufficient_credit" and refused.value.extra["topup"]
    with pytest.raises(RequestValidationError) as invalid:
        paid_call(product="news_unlock", params={"news_id": "0"}, base_url=BASE, payment=rail)
    assert invalid.value.errors[0]["loc"] == ["query", "news_id"]
    assert balance(account) == 10_000 and sku_calls() == 0


@pytest.mark.django_db
def test_a_pack_bought_with_credits_creates_its_session_in_the_debits_transaction():
    _, account = funded(2.0)
    paid = paid_call(
        product="m2m_session_desk",
        params=None,
        base_url=BASE,
        payment=CreditRail(account=account, reference="a"),
    )
    assert isinstance(paid.receipt, CreditReceipt) and paid.receipt.charged_atomic == 1_500_000
    session = PrepaidSession.objects.get(token=paid.content["token"])
    assert session.buyer == account.wallet_address and balance(account) == 500_000


def test_a_route_documents_its_200_with_the_products_output_model(monkeypatch):
    from pydantic import BaseModel

    from billing.api.views import content_response
    from catalog.products import registry

    class BriefOut(BaseModel):
        body: str

    product = registry.product_get("morning_brief")
    assert product is not None
    undocumented = dataclasses.replace(product, sku="throwaway", path="/test/throwaway", output=None)
    monkeypatch.setitem(registry._SPECS, "throwaway", undocumented)
    assert content_response("throwaway").response == {"type": "object"}
    monkeypatch.setitem(registry._SPECS, "throwaway", dataclasses.replace(undocumented, output=BriefOut))
    assert content_response("throwaway").response is BriefOut
    assert content_response(None).response == {"type": "object"}
