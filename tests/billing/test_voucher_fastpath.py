"""Voucher-paid calls served in front of Django (billing/api/voucher_fastpath.py): the SDK's
unmodified channel client pays through the service's WSGI application as it pays through
Django, with the same receipt, channel state and sale rows; a voucher is taken once whichever
path sees it first; everything unusual is Django's. On anvil, PostgreSQL and Redis."""

from __future__ import annotations

import os
from typing import Any

import pytest
from eth_account import Account
from werkzeug.test import Client
from x402.http import x402HTTPClientSync
from x402.http.utils import decode_payment_required_header, decode_payment_response_header
from x402.mechanisms.evm.batch_settlement.client import sign_voucher
from x402.mechanisms.evm.batch_settlement.errors import ERR_CUMULATIVE_AMOUNT_MISMATCH
from x402.mechanisms.evm.batch_settlement.facilitator.utils import verify_batch_settlement_voucher_typed_data
from x402.mechanisms.evm.signers import EthAccountSigner

from a2a_service.wsgi import application
from billing import tasks
from billing.credits import ledger_audit
from billing.models import ChannelSale, PaymentChannel
from billing.x402.voucher_message import voucher_signer
from tests.support.channels import (
    NETWORK,
    STATUS_PATH,
    STATUS_PRICE,
    channel_client,
    channel_payer,
    channel_session,
    onchain_channel,
)
from tests.support.concurrency import at_once

VOUCHER_FASTPATH = application.app.app.app.app  # ...(CreditFastPath(SignInFastPath(VoucherFastPath(Django))))
HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0


def test_the_voucher_signer_is_who_the_sdks_check_accepts():
    for n in range(4):
        wallet = Account.create()
        channel = "0x" + os.urandom(32).hex()
        amount = 10_000 * (n + 1) + n
        signature = sign_voucher(EthAccountSigner(wallet), channel, amount, NETWORK).signature
        assert verify_batch_settlement_voucher_typed_data(
            signer=None,  # type: ignore[arg-type]
            channel_id=channel,
            max_claimable_amount=str(amount),
            payer_authorizer=wallet.address,
            payer=wallet.address,
            signature=signature,
            chain_id=8453,
        )
        assert voucher_signer(channel_id=channel, max_claimable=amount, signature=signature, chain_id=8453) == (
            wallet.address.lower()
        )
        # Another amount, another channel or another chain: someone else (the statement refuses it).
        for other in (
            {"channel_id": channel, "max_claimable": amount + 1, "chain_id": 8453},
            {"channel_id": "0x" + os.urandom(32).hex(), "max_claimable": amount, "chain_id": 8453},
            {"channel_id": channel, "max_claimable": amount, "chain_id": 84532},
        ):
            assert voucher_signer(signature=signature, **other) != wallet.address.lower()
        # The same signature with s in the upper half (a malleated copy): left to the SDK.
        raw = bytes.fromhex(signature[2:])
        high_s = (2 * HALF_ORDER + 1 - int.from_bytes(raw[32:64], "big")).to_bytes(32, "big")
        flipped = "0x" + (raw[:32] + high_s + bytes([raw[64] ^ 1])).hex()
        assert voucher_signer(channel_id=channel, max_claimable=amount, signature=flipped, chain_id=8453) == ""


@pytest.fixture
def django_payments(monkeypatch) -> list[str]:
    """The paths of paid requests (PAYMENT-SIGNATURE) that reached Django behind the voucher fast path."""
    calls: list[str] = []
    django_app = VOUCHER_FASTPATH.app

    def counting(environ, start_response):
        if "HTTP_PAYMENT_SIGNATURE" in environ:
            calls.append(environ["PATH_INFO"])
        return django_app(environ, start_response)

    monkeypatch.setattr(VOUCHER_FASTPATH, "app", counting)
    return calls


def pay(wsgi: Client, client: Any) -> tuple[Any, dict[str, str]]:
    """The SDK client's round trip through the WSGI application: the unpaid 402, then the voucher
    it signs for it; returns the answer and the header sent."""
    http = x402HTTPClientSync(client)
    unpaid = wsgi.get(STATUS_PATH)
    assert unpaid.status_code == 402
    required = http.get_payment_required_response(lambda name: unpaid.headers.get(name), unpaid.data)
    payload = client.create_payment_payload(required)
    headers = http.encode_payment_signature_header(payload)
    answer = wsgi.get(STATUS_PATH, headers=headers)
    if answer.status_code == 200:
        http.process_payment_result(payload, lambda name: answer.headers.get(name), 200)
    return answer, headers


def test_voucher_calls_are_taken_in_front_of_django_as_django_takes_them(
    channel_own_chain, settings, django_payments
):
    # A chain of its own: what this test claims is never swept by another test's settle.
    stack, w3 = channel_own_chain, channel_own_chain.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, _ = channel_client(stack.chain.url, payer, calls=20)
    session = channel_session(client)
    # The deposit and one voucher through Django (the live server serves Django alone).
    for _ in range(2):
        assert session.get(stack.url + STATUS_PATH, timeout=30).status_code == 200
    [row] = PaymentChannel.objects.all()
    by_django = ChannelSale.objects.get(channel_id=row.channel_id, cumulative_atomic=2 * STATUS_PRICE)

    wsgi = Client(application)
    receipts = []
    for n in range(3, 10):  # the deposit covers ten calls
        answer, _ = pay(wsgi, client)
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert answer.json["routes"]  # the product's content
        receipts.append(decode_payment_response_header(answer.headers["PAYMENT-RESPONSE"]))
        assert receipts[-1].extra["channelState"]["chargedCumulativeAmount"] == str(n * STATUS_PRICE)
    assert django_payments == []  # every voucher was taken in front of Django

    # The scheme's receipt: no transaction, the charged amount, the channel's state.
    last = receipts[-1]
    assert (last.success, last.transaction, last.payer, last.network) == (True, "", payer.address.lower(), NETWORK)
    assert last.extra == {
        "channelState": {
            "channelId": row.channel_id,
            "balance": str(int(row.balance_atomic)),
            "totalClaimed": "0",
            "withdrawRequestedAt": 0,
            "refundNonce": "0",
            "chargedCumulativeAmount": str(9 * STATUS_PRICE),
        },
        "chargedAmount": str(STATUS_PRICE),
    }
    row.refresh_from_db()
    assert row.charged_cumulative_atomic == 9 * STATUS_PRICE == row.signed_max_claimable_atomic
    assert row.pending_id == "" and row.signature.startswith("0x")
    sales = ChannelSale.objects.filter(channel_id=row.channel_id).order_by("cumulative_atomic")
    assert [int(s.cumulative_atomic) for s in sales] == [n * STATUS_PRICE for n in range(1, 10)]
    fast_sale = sales.last()
    assert fast_sale is not None
    for field in ("sku_id", "payer", "amount_atomic", "network", "deposit_tx_hash"):
        assert getattr(fast_sale, field) == getattr(by_django, field), field
    assert fast_sale.resource == "http://localhost" + STATUS_PATH

    # The same voucher again: the statement takes nothing, Django answers with the corrective 402.
    answer, headers = pay(wsgi, client)
    assert answer.status_code == 200 and django_payments == []
    replay = wsgi.get(STATUS_PATH, headers=headers)
    assert replay.status_code == 402 and django_payments == [STATUS_PATH]
    required = decode_payment_required_header(replay.headers["PAYMENT-REQUIRED"])
    assert required.error == ERR_CUMULATIVE_AMOUNT_MISMATCH
    [offer] = [a for a in required.accepts if a.scheme == "batch-settlement"]
    assert offer.extra["channelState"]["chargedCumulativeAmount"] == str(10 * STATUS_PRICE)
    assert ChannelSale.objects.filter(channel_id=row.channel_id).count() == 10

    # The deposit spent: the client tops it up (a deposit payload, a transaction): Django.
    answer, _ = pay(wsgi, client)
    assert answer.status_code == 200 and django_payments == [STATUS_PATH] * 2
    # A channel whose on-chain state is not fresh: Django (which asks the chain), and it pays.
    PaymentChannel.objects.filter(pk=row.channel_id).update(onchain_synced_at=None)
    answer, _ = pay(wsgi, client)
    assert answer.status_code == 200 and django_payments == [STATUS_PATH] * 3
    answer, _ = pay(wsgi, client)  # fresh again (Django's verification read the chain): in front
    assert answer.status_code == 200 and django_payments == [STATUS_PATH] * 3

    # The claim collects every call, whichever path took its voucher.
    tasks.channels_claim()
    row.refresh_from_db()
    assert onchain_channel(w3, row.channel_id) == (int(row.balance_atomic), 13 * STATUS_PRICE)
    assert ledger_audit() == []


@pytest.mark.django_db(transaction=True)
def test_odd_payment_headers_on_a_fast_route_are_djangos_to_refuse_never_a_500(settings, django_payments):
    """Garbage, or a voucher-shaped payload for an amount no price can be on a channel nobody
    opened: the fast path takes nothing and Django answers (the 402 to pay by; here, with no
    chain to ask about the channel, 503 uncharged), never a 500."""
    import base64
    import json

    from billing.chain.localchain import dev_account
    from catalog.services import catalog_seed
    from tests.support.channels import RECEIVER_AUTHORIZER

    catalog_seed()
    settings.X402_CHANNELS_ENABLED = True
    settings.RECEIVER_AUTHORIZER_PRIVATE_KEY = "0x" + dev_account(RECEIVER_AUTHORIZER).key.hex().removeprefix("0x")
    wallet = Account.create()
    channel = "0x" + os.urandom(32).hex()
    voucher = {
        "x402Version": 2,
        "accepted": {"scheme": "batch-settlement", "network": NETWORK, "amount": str(2**70), "asset": "0x0",
                     "payTo": "0x0", "maxTimeoutSeconds": 60, "extra": {}},
        "payload": {
            "type": "voucher",
            "channelConfig": {"payer": wallet.address, "payerAuthorizer": wallet.address, "receiver": "0x0",
                              "receiverAuthorizer": "0x0", "token": "0x0", "withdrawDelay": 900, "salt": "0x00"},
            "voucher": {"channelId": channel, "maxClaimableAmount": "10000",
                        "signature": sign_voucher(EthAccountSigner(wallet), channel, 10_000, NETWORK).signature},
        },
    }
    headers = [
        "not base64 at all \x01",
        base64.b64encode(b"[1, 2, 3]").decode(),
        base64.b64encode(json.dumps(voucher).encode()).decode(),
    ]
    wsgi = Client(application)
    for header in headers:
        answer = wsgi.get(STATUS_PATH, headers={"PAYMENT-SIGNATURE": header})
        assert answer.status_code in (402, 503), (header[:40], answer.get_data(as_text=True)[:300])
        assert answer.json["detail"] and answer.json.get("charged", False) is False
    assert len(django_payments) == len(headers) and ChannelSale.objects.count() == 0


def test_one_voucher_sent_by_many_callers_at_once_is_taken_once(channel_own_chain, settings, django_payments):
    """Eight requests carrying the same voucher, released together through the WSGI stack (each
    thread its own PostgreSQL connection): the fast path's conditional UPDATE and the sale's
    unique (channel, cumulative) row let one of them take it, whichever path each one went; the
    others are refused (the corrective 402, or told the channel is busy), never a 500 and never
    a second charge."""
    stack, w3 = channel_own_chain, channel_own_chain.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, _ = channel_client(stack.chain.url, payer, calls=20)
    session = channel_session(client)
    assert session.get(stack.url + STATUS_PATH, timeout=30).status_code == 200  # the deposit
    [row] = PaymentChannel.objects.all()
    charged = int(row.charged_cumulative_atomic)

    wsgi = Client(application)
    http = x402HTTPClientSync(client)
    unpaid = wsgi.get(STATUS_PATH)
    required = http.get_payment_required_response(lambda name: unpaid.headers.get(name), unpaid.data)
    headers = http.encode_payment_signature_header(client.create_payment_payload(required))

    callers = 8

    def call() -> tuple[int, dict[str, Any]]:
        answer = Client(application).get(STATUS_PATH, headers=headers)
        return answer.status_code, answer.json or {}

    answers = at_once(callers, call)
    statuses = sorted(status for status, _ in answers)
    assert statuses.count(200) == 1, answers
    assert set(statuses) <= {200, 402, 409, 503}, answers  # refusals, never a 500
    # Each caller the fast path's statement turned away was answered by Django.
    assert len(django_payments) >= callers - 1
    for status, body in answers:
        if status != 200:
            assert body.get("charged", False) is False, body
    row.refresh_from_db()
    assert int(row.charged_cumulative_atomic) == charged + STATUS_PRICE
    assert ChannelSale.objects.filter(channel_id=row.channel_id).count() == 2  # the deposit's call, this one
    assert row.pending_id == ""
    assert ledger_audit() == []
