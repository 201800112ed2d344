"""`make demo`: an agent that pays by payment channel (x402 `batch-settlement`) with the official
x402 client, against the running local stack.

It reads .run/stack.json (written by `make run`), opens a channel to the service with one
deposit (the SDK's BatchSettlementEvmScheme, registered on x402ClientSync like any scheme),
makes 100 paid calls each paid by an off-chain voucher, and waits for the service's claim
task (Celery beat, X402_CHANNEL_CLAIM_INTERVAL) to collect them all: it prints the one claim
transaction and what it claimed."""

from __future__ import annotations

import os
import secrets
import sys
import time
from typing import Any

import requests
from eth_account import Account
from web3 import Web3
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.batch_settlement.abi import BATCH_SETTLEMENT_ABI
from x402.mechanisms.evm.batch_settlement.client import (
    BatchSettlementEvmScheme,
    BatchSettlementEvmSchemeOptions,
)
from x402.mechanisms.evm.batch_settlement.constants import BATCH_SETTLEMENT_ADDRESS
from x402.mechanisms.evm.signers import EthAccountSignerWithRPC

from a2a_service.scripts.demos.agent import ROOT, local_stack, say, usdc_balance

PATH = "/api/a2a/x402/payments/dual-rail-status"  # 0.01 USDC, always has content
CALLS = int(os.environ.get("DEMO_CHANNEL_CALLS", "100"))
# How long to wait for the claim task (its interval is X402_CHANNEL_CLAIM_INTERVAL, 60 s).
CLAIM_WAIT_SECONDS = float(os.environ.get("DEMO_CLAIM_WAIT_SECONDS", "150"))
# x402BatchSettlement's event for each channel a claim transaction claims.
CLAIMED = Web3.keccak(text="Claimed(bytes32,address,uint128,uint128)").hex().removeprefix("0x")


def channel_client(rpc_url: str, key: str) -> tuple[x402ClientSync, Any]:
    """The SDK's channel client: a fresh channel each run (a random salt), a deposit worth all
    the calls at once."""
    account = Account.from_key(key)
    scheme = BatchSettlementEvmScheme(
        EthAccountSignerWithRPC(account, rpc_url),
        BatchSettlementEvmSchemeOptions(
            # One deposit for all the calls (the service asks at least 10 calls' worth; the
            # client would top up with another deposit when that runs out).
            deposit_strategy=lambda context: str(max(CALLS * int(context.request_amount), int(context.deposit_amount))),
            salt="0x" + secrets.token_hex(32),
        ),
    )
    client = x402ClientSync()
    client.register("eip155:8453", scheme)
    return client, account


def claim_of(w3: Web3, channel_id: str, *, since_block: int, claimed: int, wait: float) -> str | None:
    """The transaction that claimed `claimed` on the channel, once the service's beat sent it."""
    contract = w3.eth.contract(address=Web3.to_checksum_address(BATCH_SETTLEMENT_ADDRESS), abi=BATCH_SETTLEMENT_ABI)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        _balance, total_claimed = contract.functions.channels(channel_id).call()
        if int(total_claimed) >= claimed:
            for number in range(w3.eth.block_number, since_block, -1):
                block: Any = w3.eth.get_block(number, full_transactions=True)
                for tx in block["transactions"]:
                    if str(tx["to"]).lower() == BATCH_SETTLEMENT_ADDRESS.lower():
                        receipt = w3.eth.get_transaction_receipt(tx["hash"])
                        if receipt["status"] == 1 and _claims(receipt, channel_id):
                            return "0x" + bytes(tx["hash"]).hex().removeprefix("0x")
            return "(claimed; the transaction is older than the blocks read)"
        time.sleep(2)
    return None


def _claims(receipt: Any, channel_id: str) -> bool:
    for log in receipt["logs"]:
        topics = [bytes(t).hex().removeprefix("0x") for t in log["topics"]]
        if topics[:2] == [CLAIMED, channel_id.lower().removeprefix("0x")]:
            return True
    return False


def journey(stack: dict[str, Any], *, key: str, wait: float = CLAIM_WAIT_SECONDS) -> int:
    url = stack["base_url"] + PATH
    w3 = Web3(Web3.HTTPProvider(stack["chain_rpc_url"]))
    client, account = channel_client(stack["chain_rpc_url"], key)
    say("agent", f"wallet {account.address} holds {usdc_balance(stack, account.address)} USDC")
    session = wrapRequestsWithPayment(requests.Session(), client)
    start_block = w3.eth.block_number
    started = time.perf_counter()
    channel_id, paid = "", 0
    for n in range(1, CALLS + 1):
        answer = session.get(url, timeout=60)
        if answer.status_code != 200:
            say("refused", f"call {n}: HTTP {answer.status_code} {answer.text[:300]}")
            return 1
        receipt = decode_payment_response_header(answer.headers["PAYMENT-RESPONSE"])
        state = (receipt.extra or {}).get("channelState") or {}
        channel_id = state.get("channelId") or channel_id
        paid = int(state.get("chargedCumulativeAmount") or paid)
        if n == 1:
            say("deposit", f"channel {channel_id} opened by transaction {receipt.transaction}")
        elif n in (2, CALLS):
            say("voucher", f"call {n}: no transaction, {paid / 10**6} USDC charged so far on the channel")
    elapsed = time.perf_counter() - started
    transactions = w3.eth.block_number - start_block
    say("calls", f"{CALLS} calls in {elapsed:.1f}s, {transactions} transaction(s) on chain (the deposit)")
    say("claim", f"waiting up to {wait:.0f}s for the service's claim task (X402_CHANNEL_CLAIM_INTERVAL)")
    claim = claim_of(w3, channel_id, since_block=start_block, claimed=paid, wait=wait)
    if claim is None:
        say("claim", "not claimed yet: is the stack's Celery beat running?")
        return 1
    say("claim", f"one transaction {claim} claimed {paid / 10**6} USDC for all {CALLS} calls")
    say("done", f"wallet now holds {usdc_balance(stack, account.address)} USDC")
    return 0


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    return journey(stack, key=stack["demo_payer_private_key"])


if __name__ == "__main__":
    sys.exit(main())
