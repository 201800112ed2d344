"""Payment channels (x402 `batch-settlement`) against the live paid stack: the service with
channels on, payers funded on the local chain, and the SDK's unmodified channel client paying
over HTTP as an agent does."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import requests
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.batch_settlement.client import (
    BatchSettlementDepositPolicy,
    BatchSettlementEvmScheme,
    BatchSettlementEvmSchemeOptions,
    InMemoryClientChannelStorage,
)
from x402.mechanisms.evm.signers import EthAccountSignerWithRPC

from billing.chain.localchain import dev_account, usdc_mint, x402_contract

NETWORK = "eip155:8453"
# The product the channel tests buy: 0.01 USDC, pure, always has content.
STATUS_SKU = "payments_dual_rail_status"
STATUS_PATH = "/api/a2a/x402/payments/dual-rail-status"
STATUS_PRICE = 10_000
RECEIVER_AUTHORIZER = 7  # anvil dev account (the local stack's default authorizer)


@pytest.fixture
def channel_stack(paid_stack: Any, settings: Any) -> Iterator[Any]:
    """The live paid stack with payment channels offered (the facilitator holds the
    receiver authorizer key)."""
    settings.X402_CHANNELS_ENABLED = True
    settings.RECEIVER_AUTHORIZER_PRIVATE_KEY = "0x" + dev_account(RECEIVER_AUTHORIZER).key.hex().removeprefix("0x")
    yield paid_stack
    while SESSIONS:
        SESSIONS.pop().close()


SESSIONS: list[requests.Session] = []


def channel_payer(w3: Web3, usdc_address: str, usdc_atomic: int) -> LocalAccount:
    """A fresh wallet with USDC to deposit, and gas for its own transactions (a withdrawal)."""
    account: LocalAccount = Account.create()
    usdc_mint(w3, usdc_address=usdc_address, to=account.address, amount_atomic=usdc_atomic)
    w3.provider.make_request("anvil_setBalance", [account.address, hex(10**18)])  # type: ignore[arg-type]
    return account


def channel_client(rpc_url: str, payer: LocalAccount, *, calls: int = 10) -> tuple[x402ClientSync, BatchSettlementEvmScheme]:
    """The SDK's channel client, as an agent registers it: it deposits `calls` calls' worth (at
    least the route's minDeposit) and then signs one voucher per call."""
    scheme = BatchSettlementEvmScheme(
        EthAccountSignerWithRPC(payer, rpc_url),
        BatchSettlementEvmSchemeOptions(
            storage=InMemoryClientChannelStorage(),
            deposit_policy=BatchSettlementDepositPolicy(deposit_multiplier=calls),
        ),
    )
    client = x402ClientSync()
    client.register(NETWORK, scheme)
    return client, scheme


def channel_session(client: x402ClientSync) -> requests.Session:
    session = wrapRequestsWithPayment(requests.Session(), client)
    SESSIONS.append(session)
    return session


def onchain_channel(w3: Web3, channel_id: str) -> tuple[int, int]:
    """(balance, totalClaimed) of a channel on the contract."""
    balance, claimed = x402_contract(w3, "x402BatchSettlement").functions.channels(channel_id).call()
    return int(balance), int(claimed)


def usdc_balance(stack: Any, address: str) -> int:
    value: int = stack.chain.token.functions.balanceOf(Web3.to_checksum_address(address)).call()
    return value


@pytest.fixture
def channel_own_chain(channel_stack: Any, settings: Any) -> Iterator[Any]:
    """The channel stack on a chain of this test's own (0.1 s to start), for a test that moves
    time: the service, its facilitator and the claim tasks read it."""
    from billing.chain.localchain import anvil_start, free_port, rpc_wait, stack_install, usdc_contract

    port = free_port()
    proc = anvil_start(port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        w3 = rpc_wait(url)
        stack_install(w3, usdc_address=settings.USDC_ADDRESS)
        settings.CHAIN_RPC_URL = url
        chain = SimpleNamespace(url=url, w3=w3, token=usdc_contract(w3, settings.USDC_ADDRESS), proc=proc)
        yield SimpleNamespace(url=channel_stack.url, chain=chain, treasury=channel_stack.treasury)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
