"""The x402 reconciler: decides payments whose settlement outcome was not known when the
agent was answered, from the chain itself.

- `settlement_pending`: the facilitator broadcast (or may have broadcast) the transfer but
  did not see it confirmed in time.
- `claimed` for longer than PAYMENT_CLAIM_STALE_SECONDS: the process that claimed it died
  between claim and answer (a crash, a kill), so nobody will settle or release it.

The chain is the source of truth: the token's AuthorizationUsed(payer, nonce) event is
emitted only by a transfer under that authorization, so its presence means the payer paid
(whichever transaction carried it, even a replacement of the one we know). Its absence
after the authorization's validBefore means it can never pay: the claim is released, so
nothing is charged and the same proof is free again (it has expired anyway). A payer's
cancelAuthorization marks the nonce used without a transfer: failed, never settled.

An `upto` payment (a Permit2 authorization settled through x402UptoPermit2Proxy for what
the call used) has no AuthorizationUsed event: its settlement is the proxy's `settle` call
with the payer and the Permit2 nonce, found by the known transaction or among the payer's
transfers to the treasury. Permit2's nonce bitmap says whether the nonce was used at all;
used without such a transaction means the payer invalidated it (failed).

Settled-by-reconciler payments have no delivery yet: the payer collects the content by
sending the same proof again (billing.rails.x402)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from eth_typing import HexStr
from web3 import Web3
from web3.exceptions import TransactionNotFound
from web3.types import TxReceipt
from x402.mechanisms.evm.constants import (
    PERMIT2_ADDRESS,
    X402_UPTO_PERMIT2_PROXY_ABI,
    X402_UPTO_PERMIT2_PROXY_ADDRESS,
)

from billing.chain.rpc import chain
from billing.models import Payment
from billing.services import payment_fail, payment_release, payment_settle

logger = logging.getLogger(__name__)

AUTHORIZATION_USED_TOPIC = Web3.keccak(text="AuthorizationUsed(address,bytes32)").hex()
AUTHORIZATION_STATE_ABI = [
    {
        "name": "authorizationState",
        "type": "function",
        "stateMutability": "view",
        "inputs": [{"name": "authorizer", "type": "address"}, {"name": "nonce", "type": "bytes32"}],
        "outputs": [{"name": "", "type": "bool"}],
    }
]
# An authorization is treated as dead this long after its validBefore: blocks carry their
# own timestamps, a little behind the wall clock.
EXPIRY_GRACE_SECONDS = 30


@dataclass
class ReconcileResult:
    settled: int = 0
    released: int = 0
    failed: int = 0
    waiting: int = 0


def _w3() -> Web3:
    return chain()


def _hex(value: bytes | str) -> str:
    return "0x" + (bytes(value).hex() if not isinstance(value, str) else value).removeprefix("0x")


def _topic_address(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _used_in(receipt: TxReceipt, payment: Payment) -> bool:
    for log in receipt.get("logs") or []:
        topics = [_hex(t).lower() for t in log["topics"]]
        if (
            len(topics) == 3
            and topics[0] == _hex(AUTHORIZATION_USED_TOPIC).lower()
            and log["address"].lower() == settings.USDC_ADDRESS.lower()
            and topics[1] == _topic_address(payment.payer)
            and topics[2] == payment.nonce.lower()
        ):
            return True
    return False


def settlement_find(w3: Web3, payment: Payment) -> tuple[str | None, bool]:
    """(hash of the transaction that used this authorization, whether the known hash
    reverted). The known hash is tried first, then the token's logs."""
    reverted = False
    if payment.tx_hash:
        try:
            receipt = w3.eth.get_transaction_receipt(HexStr(payment.tx_hash))
        except TransactionNotFound:
            receipt = None
        if receipt is not None:
            if receipt["status"] == 1 and _used_in(receipt, payment):
                return payment.tx_hash, False
            reverted = receipt["status"] != 1
    head = w3.eth.block_number
    logs = w3.eth.get_logs(
        {
            "address": Web3.to_checksum_address(settings.USDC_ADDRESS),
            "topics": [_hex(AUTHORIZATION_USED_TOPIC), _topic_address(payment.payer), payment.nonce.lower()],
            "fromBlock": HexStr(hex(max(head - settings.PAYMENT_RECONCILE_LOOKBACK_BLOCKS, 0))),
            "toBlock": "latest",
        }
    )
    if logs:
        return _hex(logs[0]["transactionHash"]), False
    return None, reverted


TRANSFER_TOPIC = Web3.keccak(text="Transfer(address,address,uint256)").hex()
PERMIT2_NONCE_BITMAP_ABI = [
    {
        "name": "nonceBitmap",
        "type": "function",
        "stateMutability": "view",
        "inputs": [{"name": "owner", "type": "address"}, {"name": "wordPos", "type": "uint256"}],
        "outputs": [{"name": "", "type": "uint256"}],
    }
]


def _upto_settles(w3: Web3, tx_hash: str, payment: Payment) -> bool | None:
    """Whether this transaction is the proxy's settle of this payment's authorization, mined and
    successful (None: it is not mined, or it reverted)."""
    try:
        receipt = w3.eth.get_transaction_receipt(HexStr(tx_hash))
        tx = w3.eth.get_transaction(HexStr(tx_hash))
    except TransactionNotFound:
        return None
    if receipt["status"] != 1:
        return None
    if str(tx.get("to") or "").lower() != X402_UPTO_PERMIT2_PROXY_ADDRESS.lower():
        return False
    proxy = w3.eth.contract(
        address=Web3.to_checksum_address(X402_UPTO_PERMIT2_PROXY_ADDRESS), abi=X402_UPTO_PERMIT2_PROXY_ABI
    )
    try:
        function, args = proxy.decode_function_input(tx["input"])
    except ValueError:
        return False
    if function.fn_name != "settle":
        return False
    permit = args["permit"]
    nonce = permit["nonce"] if isinstance(permit, dict) else permit[1]
    return str(args["owner"]).lower() == payment.payer and f"0x{int(nonce):064x}" == payment.nonce


def _upto_find(w3: Web3, payment: Payment) -> tuple[str | None, bool]:
    """settlement_find for an `upto` payment."""
    reverted = False
    if payment.tx_hash:
        known = _upto_settles(w3, payment.tx_hash, payment)
        if known:
            return payment.tx_hash, False
        try:
            reverted = w3.eth.get_transaction_receipt(HexStr(payment.tx_hash))["status"] != 1
        except TransactionNotFound:
            reverted = False
    head = w3.eth.block_number
    logs = w3.eth.get_logs(
        {
            "address": Web3.to_checksum_address(settings.USDC_ADDRESS),
            "topics": [_hex(TRANSFER_TOPIC), _topic_address(payment.payer), _topic_address(payment.pay_to)],
            "fromBlock": HexStr(hex(max(head - settings.PAYMENT_RECONCILE_LOOKBACK_BLOCKS, 0))),
            "toBlock": "latest",
        }
    )
    for log in logs:
        tx_hash = _hex(log["transactionHash"])
        if _upto_settles(w3, tx_hash, payment):
            return tx_hash, False
    return None, reverted


def _permit2_nonce_used(w3: Web3, payment: Payment) -> bool:
    nonce = int(payment.nonce, 16)
    permit2 = w3.eth.contract(address=Web3.to_checksum_address(PERMIT2_ADDRESS), abi=PERMIT2_NONCE_BITMAP_ABI)
    word = permit2.functions.nonceBitmap(Web3.to_checksum_address(payment.payer), nonce >> 8).call()
    return bool(int(word) >> (nonce & 0xFF) & 1)


def payment_reconcile(*, payment_id: int, w3: Web3 | None = None) -> str:
    """Decide one payment. Returns what happened: settled, released, failed or waiting."""
    payment = Payment.objects.filter(
        pk=payment_id, state__in=(Payment.State.PENDING, Payment.State.CLAIMED)
    ).first()
    if payment is None:
        return "gone"
    w3 = w3 or _w3()
    upto = payment.scheme == "upto"
    tx_hash, reverted = _upto_find(w3, payment) if upto else settlement_find(w3, payment)
    if tx_hash:
        payment_settle(payment_id=payment.id, tx_hash=tx_hash)
        logger.info("payment %s settled on chain in %s; the payer may collect it", payment.id, tx_hash)
        return "settled"
    if upto:
        used = _permit2_nonce_used(w3, payment)
    else:
        token = w3.eth.contract(
            address=Web3.to_checksum_address(settings.USDC_ADDRESS), abi=AUTHORIZATION_STATE_ABI
        )
        used = token.functions.authorizationState(
            Web3.to_checksum_address(payment.payer), bytes.fromhex(payment.nonce.removeprefix("0x"))
        ).call()
    if used:
        # Used without a transfer to us: the payer cancelled the authorization.
        payment_fail(payment_id=payment.id, error="reconcile: authorization cancelled, nothing was paid")
        return "failed"
    expired = payment.valid_before is not None and payment.valid_before + EXPIRY_GRACE_SECONDS < time.time()
    if reverted or expired:
        # Nothing moved and (reverted) nothing is in flight, or (expired) nothing can move any more.
        payment_release(payment_id=payment.id)
        logger.info(
            "payment %s released: %s", payment.id, "reverted" if reverted else "authorization expired"
        )
        return "released"
    return "waiting"


def payments_reconcile(*, limit: int = 200) -> ReconcileResult:
    stale = timezone.now() - timedelta(seconds=settings.PAYMENT_CLAIM_STALE_SECONDS)
    ids = list(
        Payment.objects.filter(
            Q(state=Payment.State.PENDING) | Q(state=Payment.State.CLAIMED, created_at__lt=stale)
        )
        .order_by("created_at")
        .values_list("id", flat=True)[:limit]
    )
    result = ReconcileResult()
    if not ids:
        return result
    w3 = _w3()
    for payment_id in ids:
        outcome = payment_reconcile(payment_id=payment_id, w3=w3)
        if outcome == "settled":
            result.settled += 1
        elif outcome == "released":
            result.released += 1
        elif outcome == "failed":
            result.failed += 1
        elif outcome == "waiting":
            result.waiting += 1
    return result
