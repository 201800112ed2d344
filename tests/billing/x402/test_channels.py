"""Payment channels (x402 `batch-settlement`) sold through the payment front, paid by the SDK's
unmodified channel client over HTTP against the live service on anvil: one deposit opens the
channel, every later call is a voucher checked without a transaction, each voucher-paid call
is a sale like any other, and the claim task collects them all in one transaction. A replayed
or lowered voucher is refused with the corrective 402 the client resyncs from; a payer's timed
withdrawal is raced by the withdrawal watcher's claim; MCP `_meta` pays the same way."""

from __future__ import annotations

from typing import Any

import requests
from django.db.models import Sum
from x402.http import x402HTTPClientSync
from x402.http.utils import (
    decode_payment_required_header,
    decode_payment_response_header,
    encode_payment_signature_header,
)
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.mechanisms.evm.batch_settlement.client import sign_voucher
from x402.mechanisms.evm.batch_settlement.constants import BATCH_SETTLEMENT_ADDRESS
from x402.mechanisms.evm.batch_settlement.errors import ERR_CUMULATIVE_AMOUNT_MISMATCH
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.schemas import PaymentPayload, PaymentRequired, PaymentResponseContext, SettleResponse

from billing import tasks
from billing.chain.localchain import dev_account
from billing.credits import ledger_audit
from billing.models import ChannelSale, Payment, PaymentChannel
from billing.selectors.sales import sales_window
from tests.support.channels import (
    NETWORK,
    RECEIVER_AUTHORIZER,
    STATUS_PATH,
    STATUS_PRICE,
    STATUS_SKU,
    channel_client,
    channel_payer,
    channel_session,
    onchain_channel,
    usdc_balance,
)
from tests.support.mcp_rpc import ACCEPT, call

CALLS = 100


def offer(url: str) -> PaymentRequired:
    resp = requests.get(url, timeout=10)
    assert resp.status_code == 402
    return decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])


def paid_header(client: Any, payload: PaymentPayload) -> dict[str, str]:
    return x402HTTPClientSync(client).encode_payment_signature_header(payload)


def corrective_state(resp: requests.Response) -> dict[str, Any]:
    """The channel's state a corrective 402 carries in its batch-settlement requirements."""
    assert resp.status_code == 402, resp.text
    required = decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])
    assert required.error == ERR_CUMULATIVE_AMOUNT_MISMATCH
    [channel] = [a for a in required.accepts if a.scheme == "batch-settlement"]
    assert channel.extra["voucherState"]["signature"].startswith("0x")
    state: dict[str, Any] = channel.extra["channelState"]
    return state


def test_a_channel_pays_100_calls_by_voucher_and_one_claim_settles_their_sum(channel_stack, settings):
    settings.X402_CHANNEL_MIN_DEPOSIT = str(CALLS * STATUS_PRICE)  # one deposit covers every call
    stack, w3 = channel_stack, channel_stack.chain.w3
    url = stack.url + STATUS_PATH
    payer = channel_payer(w3, settings.USDC_ADDRESS, 5 * 10**6)
    client, _ = channel_client(stack.chain.url, payer)

    # Every paid 402 offers the channel next to exact, as the SDK's server scheme builds it.
    exact, channel = offer(url).accepts
    assert (exact.scheme, channel.scheme) == ("exact", "batch-settlement")
    assert (channel.amount, channel.pay_to, channel.asset) == (str(STATUS_PRICE), exact.pay_to, exact.asset)
    assert channel.extra["receiverAuthorizer"] == dev_account(RECEIVER_AUTHORIZER).address
    assert (channel.extra["withdrawDelay"], channel.extra["minDeposit"]) == (900, str(CALLS * STATUS_PRICE))
    assert offer(url).accepts == [exact, channel]  # served again from the challenge cache, the same

    treasury_before, payer_before = usdc_balance(stack, stack.treasury), usdc_balance(stack, payer.address)
    block_before = w3.eth.block_number
    session = channel_session(client)
    answers = [session.get(url, timeout=30) for _ in range(CALLS)]
    assert [a.status_code for a in answers] == [200] * CALLS, answers[-1].text
    receipts = [decode_payment_response_header(a.headers["PAYMENT-RESPONSE"]) for a in answers]
    assert receipts[0].transaction.startswith("0x")  # the deposit, on chain through our facilitator
    assert w3.eth.block_number == block_before + 1  # ... and no transaction for any voucher
    for n, receipt in enumerate(receipts[1:], start=2):
        assert receipt.transaction == "" and receipt.extra["chargedAmount"] == str(STATUS_PRICE)
        assert receipt.extra["channelState"]["chargedCumulativeAmount"] == str(n * STATUS_PRICE)
    assert answers[-1].json()["routes"]
    [row] = PaymentChannel.objects.all()
    channel_id = row.channel_id
    assert row.charged_cumulative_atomic == CALLS * STATUS_PRICE == row.signed_max_claimable_atomic
    deposit = int(row.balance_atomic)
    assert deposit == CALLS * STATUS_PRICE and onchain_channel(w3, channel_id) == (deposit, 0)
    assert usdc_balance(stack, payer.address) == payer_before - deposit

    # Every voucher-paid call is a ledger-visible sale, counted with every other.
    sales = ChannelSale.objects.filter(channel_id=channel_id).all  # read afresh at each call
    assert sales().count() == CALLS and sales().aggregate(s=Sum("amount_atomic"))["s"] == CALLS * STATUS_PRICE
    assert {s.sku.sku for s in sales()} == {STATUS_SKU} and {s.payer for s in sales()} == {payer.address.lower()}
    window = sales_window(days=1)
    assert window["by_rail"]["x402_channel"] == {"sales": CALLS, "revenue_usdc": CALLS * STATUS_PRICE / 10**6}
    assert Payment.objects.count() == 0

    # The claim task: one transaction for all the calls; the settle task sweeps it to the treasury.
    block = w3.eth.block_number
    tasks.channels_claim()
    assert w3.eth.block_number == block + 1
    claim = w3.eth.get_block(block + 1, full_transactions=True)["transactions"]
    assert [tx["to"] for tx in claim] == [BATCH_SETTLEMENT_ADDRESS]
    assert onchain_channel(w3, channel_id) == (deposit, CALLS * STATUS_PRICE)
    assert PaymentChannel.objects.get().total_claimed_atomic == CALLS * STATUS_PRICE
    assert usdc_balance(stack, stack.treasury) == treasury_before  # claimed, not swept yet
    tasks.channels_settle()
    assert usdc_balance(stack, stack.treasury) - treasury_before == CALLS * STATUS_PRICE
    tasks.channels_claim()  # nothing left to claim: no transaction
    tasks.channels_settle()
    assert w3.eth.block_number == block + 2

    # A voucher sent twice: the second is refused with the corrective 402, nothing charged.
    required = offer(url)
    payload = client.create_payment_payload(required)
    assert payload.payload["voucher"]["maxClaimableAmount"] == str((CALLS + 1) * STATUS_PRICE)
    header = paid_header(client, payload)
    assert requests.get(url, headers=header, timeout=30).status_code == 200
    replay = requests.get(url, headers=header, timeout=30)
    assert corrective_state(replay)["chargedCumulativeAmount"] == str((CALLS + 1) * STATUS_PRICE)
    # A lowered voucher (a valid signature of the payer for less than charged + price): refused.
    lowered = payload.model_copy(deep=True)
    lowered.payload["voucher"] = sign_voucher(
        EthAccountSigner(payer), channel_id, (CALLS - 1) * STATUS_PRICE, NETWORK
    ).to_dict()
    refused = requests.get(url, headers=paid_header(client, lowered), timeout=30)
    assert corrective_state(refused)["chargedCumulativeAmount"] == str((CALLS + 1) * STATUS_PRICE)
    assert sales().count() == CALLS + 1

    # The SDK client never read the answer to the voucher it sent by hand: its next voucher is
    # one call behind. The corrective 402 resyncs it and it pays on, once.
    resynced = session.get(url, timeout=30)
    assert resynced.status_code == 200, resynced.text
    receipt = decode_payment_response_header(resynced.headers["PAYMENT-RESPONSE"])
    assert receipt.extra["channelState"]["chargedCumulativeAmount"] == str((CALLS + 2) * STATUS_PRICE)
    assert sales().count() == CALLS + 2
    assert PaymentChannel.objects.get().charged_cumulative_atomic == (CALLS + 2) * STATUS_PRICE
    assert sales().aggregate(s=Sum("amount_atomic"))["s"] == (CALLS + 2) * STATUS_PRICE
    assert ledger_audit() == []


def test_mcp_meta_pays_by_channel_a_failed_product_charges_nothing_and_a_refund_closes_it(
    channel_stack, settings, monkeypatch
):
    """The same channel pays on MCP (`_meta["x402/payment"]`, the receipt in
    `_meta["x402/payment-response"]`) and over REST; a product that fails commits no voucher;
    the SDK client's cooperative refund claims what was paid and returns the rest, without
    running the product."""
    stack, w3 = channel_stack, channel_stack.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, scheme = channel_client(stack.chain.url, payer)
    mcp = requests.Session()
    mcp.headers.update({"Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"})

    class Http:  # tests.support.mcp_rpc's client interface over a real HTTP connection
        def post(self, path: str, data: str, content_type: str, **_: Any) -> Any:
            return mcp.post(stack.url + path, data=data, headers={"Content-Type": content_type})

    def mcp_pay() -> dict[str, Any]:
        unpaid = call(Http(), STATUS_SKU)
        required = extract_payment_required_from_result(
            MCPToolResult(content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"])
        )
        assert required is not None and [a.scheme for a in required.accepts] == ["exact", "batch-settlement"]
        payload = client.create_payment_payload(required)
        paid = call(Http(), STATUS_SKU, meta={MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)})
        assert paid["isError"] is False, paid
        receipt: dict[str, Any] = paid["_meta"][MCP_PAYMENT_RESPONSE_META_KEY]
        client.handle_payment_response(  # as the SDK's MCP client does with the receipt
            PaymentResponseContext(
                payment_payload=payload,
                requirements=payload.accepted,
                settle_response=SettleResponse.model_validate(receipt),
            )
        )
        return receipt

    opened = mcp_pay()
    assert opened["transaction"].startswith("0x") and opened["extra"]["chargedAmount"] == str(STATUS_PRICE)
    voucher = mcp_pay()
    assert voucher["transaction"] == "" and voucher["extra"]["channelState"]["chargedCumulativeAmount"] == str(
        2 * STATUS_PRICE
    )
    session = channel_session(client)
    assert session.get(stack.url + STATUS_PATH, timeout=30).status_code == 200  # REST, the same channel
    channel = PaymentChannel.objects.get()
    assert channel.charged_cumulative_atomic == 3 * STATUS_PRICE
    assert ChannelSale.objects.filter(resource=f"mcp://tool/{STATUS_SKU}").count() == 2

    # The product fails: 503, the voucher is not committed, the channel is free for the next call.
    from catalog.products.registry import ProductFailed

    def broken() -> None:
        raise ProductFailed("the routes could not be read")

    monkeypatch.setattr("billing.products.routes_state", broken)
    failed = session.get(stack.url + STATUS_PATH, timeout=30)
    assert failed.status_code == 503 and failed.json()["charged"] is False
    assert ChannelSale.objects.count() == 3
    channel.refresh_from_db()
    assert channel.charged_cumulative_atomic == 3 * STATUS_PRICE and not channel.pending_id
    monkeypatch.undo()

    # The cooperative refund: the facilitator claims the 3 calls and returns the rest; the
    # product does not run and nothing is sold.
    deposit = int(channel.balance_atomic)
    payer_before, block = usdc_balance(stack, payer.address), w3.eth.block_number
    refunded = scheme.refund(stack.url + STATUS_PATH)
    assert refunded.success and refunded.transaction.startswith("0x")
    assert w3.eth.block_number == block + 1
    assert usdc_balance(stack, payer.address) - payer_before == deposit - 3 * STATUS_PRICE
    assert onchain_channel(w3, channel.channel_id)[1] == 3 * STATUS_PRICE
    assert ChannelSale.objects.count() == 3 and not PaymentChannel.objects.exists()  # drained: deleted
    tasks.channels_settle()  # the claimed 3 calls go to the treasury
    assert ledger_audit() == []


def test_a_malformed_or_foreign_channel_payment_is_refused_with_the_offer(channel_stack):
    """Bad input never 500s: a channel payload the scheme cannot read, or one that answers
    other requirements (another payTo), is a 402 with the offer; nothing is stored or sold."""
    url = channel_stack.url + STATUS_PATH
    required = offer(url)
    [accepted] = [a for a in required.accepts if a.scheme == "batch-settlement"]
    for accepts, body in (
        (accepted, {"type": "voucher"}),
        (accepted, {"type": "voucher", "channelConfig": "x", "voucher": {"channelId": "0x01"}}),
        (accepted.model_copy(update={"pay_to": dev_account(5).address}), {"type": "voucher"}),
    ):
        payload = PaymentPayload(x402_version=2, accepted=accepts, payload=body, resource=required.resource)
        refused = requests.get(url, headers={"PAYMENT-SIGNATURE": encode_payment_signature_header(payload)}, timeout=30)
        assert refused.status_code == 402, refused.text
        again = decode_payment_required_header(refused.headers["PAYMENT-REQUIRED"])
        assert again.error.startswith("invalid_") and [a.scheme for a in again.accepts] == ["exact", "batch-settlement"]
    assert not PaymentChannel.objects.exists() and not ChannelSale.objects.exists()


def test_the_facilitator_lists_batch_settlement_with_its_receiver_authorizer(channel_stack):
    supported = requests.get(channel_stack.url + "/api/a2a/facilitator/supported", timeout=30).json()
    kinds = {(k["scheme"], k["network"]): k.get("extra") for k in supported["kinds"] if k["x402Version"] == 2}
    assert kinds[("exact", NETWORK)] is None
    assert kinds[("batch-settlement", NETWORK)] == {
        "receiverAuthorizer": dev_account(RECEIVER_AUTHORIZER).address
    }


def test_a_voucher_whose_product_failed_after_its_commit_collects_it_once(channel_stack, settings, monkeypatch):
    """A product with effects (a session pack) runs once its voucher is committed; if it fails
    then, the call is kept for the payer (not charged for nothing): the same voucher collects it,
    once, charging nothing more."""
    from catalog.models import Sku
    from catalog.products.registry import ProductFailed
    from sessions_app import products as session_products
    from sessions_app.models import PrepaidSession as Session

    stack, w3 = channel_stack, channel_stack.chain.w3
    url = stack.url + "/api/a2a/x402/session/desk-pack"
    pack = Sku.objects.get(sku="m2m_session_desk")
    pack.price_atomic = 200_000  # under the SDK client's default cap of $1 a payment
    pack.save()
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10 * 10**6)
    client, _ = channel_client(stack.chain.url, payer, calls=3)
    assert channel_session(client).get(url, timeout=30).status_code == 200  # the deposit: one pack
    [row] = PaymentChannel.objects.all()
    price = int(row.charged_cumulative_atomic)
    real_create = session_products.session_create
    failing = {"left": 1}

    def create_once_failing(**kwargs):
        if failing["left"]:
            failing["left"] -= 1
            raise ProductFailed("the session store is unavailable")
        return real_create(**kwargs)

    monkeypatch.setattr(session_products, "session_create", create_once_failing)
    payload = client.create_payment_payload(offer(url))
    assert payload.payload["type"] == "voucher"
    header = paid_header(client, payload)
    failed = requests.get(url, headers=header, timeout=30)
    assert failed.status_code == 503 and failed.json()["charged"] is True, failed.text
    assert "send the same payment again to collect it" in failed.json()["detail"]
    row.refresh_from_db()
    assert row.charged_cumulative_atomic == 2 * price and Session.objects.count() == 1
    sale = ChannelSale.objects.get(channel_id=row.channel_id, cumulative_atomic=2 * price)
    assert sale.delivered_at is None

    collected = requests.get(url, headers=header, timeout=30)
    assert collected.status_code == 200, collected.text
    assert collected.json()["token"] and Session.objects.count() == 2
    receipt = decode_payment_response_header(collected.headers["PAYMENT-RESPONSE"])
    assert receipt.success and receipt.transaction == ""
    sale.refresh_from_db()
    row.refresh_from_db()
    assert sale.delivered_at is not None and row.charged_cumulative_atomic == 2 * price
    assert ChannelSale.objects.filter(channel_id=row.channel_id).count() == 2

    # Collected once: the same voucher again is a replay (the corrective 402), nothing delivered.
    again = requests.get(url, headers=header, timeout=30)
    assert corrective_state(again)["chargedCumulativeAmount"] == str(2 * price)
    assert Session.objects.count() == 2 and ledger_audit() == []
