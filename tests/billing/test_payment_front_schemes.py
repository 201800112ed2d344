"""The schemes of issue 26 on every surface that sells, through the one payment front
(billing/front/): `sentiment` sold through the REST x402 route, the chat, the marketplace's
execute, the MCP tool (`_meta`) and the A2A skill (the a2a-x402 extension's message metadata),
paid by

1. `batch-settlement`: ONE channel of the SDK's unmodified channel client pays all five: the
   first call deposits, every call is a voucher; the channel's charged cumulative is five prices,
   five ledger-visible sales, and each surface's receipt is the voucher's charge and the channel's
   state, where its protocol carries PAYMENT-RESPONSE;
2. `sign-in-with-x` (the SDK's client hook): a wallet with a verified credit account spends
   credits on each surface (the same debit and ledger row, the surface's credit receipt); a wallet
   with no account gets that surface's 402 / payment-required;
3. `payment-identifier`: a named `exact` payment sent twice on each surface is answered once.

Each surface carries the material in its protocol's own place (tests/support/surfaces.py): HTTP
headers (PAYMENT-SIGNATURE, SIGN-IN-WITH-X) for REST, the chat and the marketplace, `_meta` for
MCP, the message metadata for A2A. One live stack; one channel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from eth_account import Account as EthAccount
from x402.extensions.payment_identifier import generate_payment_id
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X
from x402.schemas import PaymentResponseContext, SettleResponse

from billing.credits import credit_add, ledger_audit
from billing.models import (
    Account,
    ChannelSale,
    LedgerEntry,
    Payment,
    PaymentChannel,
    PaymentIdentifier,
    SignInNonce,
)
from billing.selectors.sales import sales_window
from tests.support.channels import channel_client, channel_payer, onchain_channel, usdc_balance
from tests.support.marketdata import sentiment_market_write
from tests.support.payments import balances
from tests.support.signin import signin_value
from tests.support.surfaces import SURFACES, Shop
from tests.support.wallets import register_wallet
from tests.support.x402_extensions import named_payload

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SKU = "sentiment"
PRICE = 50_000  # 0.05 USDC
N = len(SURFACES)


@pytest.fixture
def shop(channel_stack: Any, settings: Any) -> Iterator[Shop]:
    """The five surfaces of the live stack (channels offered next to exact), `sentiment` on sale.
    PUBLIC_BASE_URL is the live server's: an MCP tool's resource (mcp://tool/sentiment) is signed
    in on our origin, and without it the tool offers no sign-in (billing/x402/signin.py)."""
    settings.PUBLIC_BASE_URL = channel_stack.url
    sentiment_market_write()
    shop = Shop(
        channel_stack.url,
        sku=SKU,
        path="/api/a2a/x402/sentiment",
        capability=SKU,
        chat_message="market sentiment",
    )
    yield shop
    shop.close()


def test_one_channel_pays_every_surface_by_voucher(shop, channel_stack, settings):
    settings.X402_CHANNEL_MIN_DEPOSIT = str(N * PRICE)  # one deposit covers the five calls
    w3 = channel_stack.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, _ = channel_client(channel_stack.chain.url, payer, calls=N)
    payer_before = usdc_balance(channel_stack, payer.address)
    block = w3.eth.block_number

    answers = {}
    for surface in SURFACES:
        asked = shop.ask(surface)
        assert [a.scheme for a in asked.required.accepts] == ["exact", "batch-settlement"], surface
        payload = client.create_payment_payload(asked.required)  # the SDK picks the channel
        assert payload.accepted.scheme == "batch-settlement"
        answer = shop.send(surface, asked, payload=payload)
        assert answer.ok and answer.settled is not None, (surface, answer)
        # What the SDK's clients do with PAYMENT-RESPONSE: the channel's state, for the next voucher.
        client.handle_payment_response(
            PaymentResponseContext(
                payment_payload=payload,
                requirements=payload.accepted,
                settle_response=SettleResponse.model_validate(answer.settled),
            )
        )
        answers[surface] = answer

    # Each receipt: the voucher's charge and the channel's cumulative after it; only the first
    # call (the deposit) is a transaction, on chain through our facilitator.
    charged = [
        (a.settled["extra"]["chargedAmount"], a.settled["extra"]["channelState"]["chargedCumulativeAmount"])
        for a in answers.values()
    ]
    assert charged == [(str(PRICE), str(PRICE * (i + 1))) for i in range(N)]
    transactions = [a.settled["transaction"] for a in answers.values()]
    assert transactions[0].startswith("0x") and transactions[1:] == [""] * (N - 1)
    assert w3.eth.block_number == block + 1
    assert all(a.content for a in answers.values())

    [channel] = PaymentChannel.objects.all()
    assert channel.charged_cumulative_atomic == N * PRICE == channel.signed_max_claimable_atomic
    deposit = int(channel.balance_atomic)
    assert deposit == N * PRICE and onchain_channel(w3, channel.channel_id) == (deposit, 0)
    assert usdc_balance(channel_stack, payer.address) == payer_before - deposit
    # Five ledger-visible sales, one per surface, counted with every other sale.
    sales = ChannelSale.objects.filter(channel_id=channel.channel_id).order_by("id")
    assert [(s.sku.sku, s.amount_atomic, s.payer) for s in sales] == [(SKU, PRICE, payer.address.lower())] * N
    assert [int(s.cumulative_atomic) for s in sales] == [PRICE * (i + 1) for i in range(N)]
    assert sales_window(days=1)["by_rail"]["x402_channel"] == {"sales": N, "revenue_usdc": N * PRICE / 10**6}
    assert Payment.objects.count() == 0 and LedgerEntry.objects.count() == 0
    assert ledger_audit() == []


def test_a_signed_in_wallet_spends_credits_on_every_surface(shop, settings):
    wallet = EthAccount.create()
    reg = register_wallet(wallet)  # signed our ownership challenge: a verified credit account
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    answers = {}
    for surface in SURFACES:
        asked = shop.ask(surface)
        answers[surface] = shop.send(
            surface, asked, sign_in=signin_value(wallet, asked.required, asked.request_url)
        )
    # Each surface's credit receipt: the price, and the balance the debit left; no API key sent.
    assert {s: (a.ok, a.credits) for s, a in answers.items()} == {
        s: (True, (PRICE, 1_000_000 - PRICE * (i + 1))) for i, s in enumerate(SURFACES)
    }
    debits = LedgerEntry.objects.filter(account=reg.account, kind=LedgerEntry.Kind.SKU_CALL).order_by("id")
    assert [(d.sku.sku, d.amount_atomic, d.balance_after_atomic) for d in debits] == [
        (SKU, -PRICE, 1_000_000 - PRICE * (i + 1)) for i in range(N)
    ]
    assert [d.reference for d in debits][:4] == [
        "/api/a2a/x402/sentiment",
        "/api/a2a/agenthub/chat",
        "/api/a2a/marketplace/execute",
        f"/mcp {SKU}",
    ] and debits[4].reference.startswith("a2a task ")
    assert SignInNonce.objects.filter(wallet_address=wallet.address.lower()).count() == N  # one per call
    assert Payment.objects.count() == 0 and not ChannelSale.objects.exists()

    # A wallet with no credit account: each surface's own payment-required (the 402, MCP's
    # payment-required tool result, the A2A task back to input-required with the requirements),
    # saying why; nothing charged.
    stranger = EthAccount.create()
    refused = {}
    for surface in SURFACES:
        asked = shop.ask(surface)
        refused[surface] = shop.send(
            surface, asked, sign_in=signin_value(stranger, asked.required, asked.request_url)
        )
    assert {s: (a.ok, a.refusal) for s, a in refused.items()} == dict.fromkeys(
        SURFACES, (False, "siwx_nothing_owned")
    )
    assert [refused[s].raw.status_code for s in ("rest", "chat", "marketplace")] == [402] * 3
    assert refused["a2a"].raw["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert not Account.objects.filter(wallet_address=stranger.address.lower()).exists()
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).count() == N

    # Without PUBLIC_BASE_URL an MCP tool's resource (mcp://tool/sentiment) has no web origin to
    # sign in on: its payment-required declares no sign-in, and a sign-in sent anyway (signed for
    # the REST route's challenge) is refused like a bad one, with the x402 offer; nothing charged.
    settings.PUBLIC_BASE_URL = ""
    asked = shop.ask("mcp")
    assert SIGN_IN_WITH_X not in (asked.required.extensions or {}) and asked.required.accepts
    rest = shop.ask("rest")
    answer = shop.send("mcp", asked, sign_in=signin_value(wallet, rest.required, rest.request_url))
    assert (answer.ok, answer.refusal) == (False, "invalid_siwx_uri_mismatch")
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).count() == N
    assert ledger_audit() == []


def test_a_named_payment_retried_on_every_surface_is_answered_once(shop, channel_stack):
    before = balances(channel_stack)
    first, again, ids = {}, {}, {}
    for surface in SURFACES:
        asked = shop.ask(surface)
        assert (asked.required.extensions or {})["payment-identifier"]["info"] == {"required": False}
        ids[surface] = generate_payment_id()
        payload = named_payload(asked.required, ids[surface])  # the official client, exact
        first[surface] = shop.send(surface, asked, payload=payload)
        # The client retries (a lost answer): the same payload; A2A, as a new task for the skill.
        retry = shop.ask(surface) if surface == "a2a" else asked
        again[surface] = shop.send(surface, retry, payload=payload)
    for surface in SURFACES:
        answered, retried = first[surface], again[surface]
        assert answered.ok and retried.ok, (surface, answered, retried)
        # The first answer again: the same content and the same settlement receipt.
        assert (retried.content, retried.settled) == (answered.content, answered.settled), surface
        assert answered.settled is not None and answered.settled["transaction"].startswith("0x")
    # One charge per surface: one settled Payment, one transfer of the price each.
    payments = Payment.objects.order_by("id")
    assert [(p.sku.sku, p.amount_atomic, p.state) for p in payments] == [
        (SKU, PRICE, Payment.State.SETTLED)
    ] * N
    assert sorted(p.tx_hash for p in payments) == sorted(a.settled["transaction"] for a in first.values())
    after = balances(channel_stack)
    assert (before[0] - after[0], after[1] - before[1]) == (N * PRICE, N * PRICE)
    rows = PaymentIdentifier.objects.order_by("id")
    assert [(r.key, r.state, r.scheme, r.sku) for r in rows] == [
        (ids[s], "answered", "exact", SKU) for s in SURFACES
    ]
    assert LedgerEntry.objects.count() == 0 and ledger_audit() == []
