"""The deposit watcher: reads USDC Transfer logs to the treasury over CHAIN_RPC_URL, from a
stored cursor, in bounded block ranges, up to head minus DEPOSIT_CONFIRMATIONS.

- Each log is recorded once (unique tx hash + log index) and each deposit credited once
  (deposit_settle locks the row; the ledger has one row per deposit and kind).
- One scan at a time: a lock in the cache (Redis in production). If two scans overlap
  anyway, the constraints above still keep every credit single.
- The cursor moves only after a range's deposits are committed: an RPC error leaves it on
  the last block fully read, and the next run starts there.
- Logs in blocks not yet confirmed are shown as pending, not credited.
- A block hash that changed at the cursor (a reorganisation deeper than the confirmations)
  is logged as an error for the operators."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from web3 import Web3

from billing.credits import deposit_settle
from billing.models import ChainCursor, Deposit, Payment

logger = logging.getLogger(__name__)

TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
AUTHORIZATION_USED_TOPIC = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"
CURSOR_NAME = "usdc-deposits"
LOCK_KEY = "lock:deposit-scan"


@dataclass
class ScanResult:
    skipped: bool = False
    from_block: int | None = None
    to_block: int | None = None
    recorded: int = 0
    credited: int = 0
    pending: int = 0
    reorg_detected: bool = False
    errors: list[str] = field(default_factory=list)


@lru_cache(maxsize=4)
def _w3(url: str) -> Web3:
    return Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 10}))


def chain() -> Web3:
    return _w3(settings.CHAIN_RPC_URL)


def _topic(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _logs(w3: Web3, frm: int, to: int) -> list[dict]:
    return w3.eth.get_logs(
        {
            "address": Web3.to_checksum_address(settings.USDC_ADDRESS),
            "topics": [TRANSFER_TOPIC, None, _topic(settings.TREASURY_ADDRESS)],
            "fromBlock": hex(frm),
            "toBlock": hex(to),
        }
    )


def _is_x402_sale(w3: Web3, log: dict) -> bool:
    """A transfer to the treasury that settles one of our x402 payments is a sale, not a
    deposit. The EIP-3009 settlement emits AuthorizationUsed(authorizer, nonce) in the same
    transaction, and that (payer, nonce) was claimed as a Payment before it was broadcast."""
    receipt = w3.eth.get_transaction_receipt(log["transactionHash"])
    for item in receipt["logs"]:
        topics = ["0x" + bytes(t).hex().removeprefix("0x") for t in item["topics"]]
        if (
            len(topics) == 3
            and topics[0] == AUTHORIZATION_USED_TOPIC
            and item["address"].lower() == settings.USDC_ADDRESS.lower()
        ):
            payer = "0x" + topics[1][-40:]
            if Payment.objects.filter(payer=payer, nonce=topics[2]).exists():
                return True
    return False


def _record(log: dict, state: str) -> Deposit | None:
    tx_hash = "0x" + bytes(log["transactionHash"]).hex().removeprefix("0x")
    values = {
        "block_number": int(log["blockNumber"]),
        "block_hash": "0x" + bytes(log["blockHash"]).hex().removeprefix("0x"),
        "from_address": "0x" + bytes(log["topics"][1])[-20:].hex(),
        "amount_atomic": int.from_bytes(bytes(log["data"]), "big"),
        "state": state,
    }
    try:
        with transaction.atomic():
            deposit, _ = Deposit.objects.get_or_create(
                tx_hash=tx_hash, log_index=int(log["logIndex"]), defaults=values
            )
    except IntegrityError:  # recorded concurrently: the unique constraint kept one
        deposit = Deposit.objects.get(tx_hash=tx_hash, log_index=int(log["logIndex"]))
    return deposit


def _cursor(w3: Web3) -> ChainCursor:
    start = settings.DEPOSIT_START_BLOCK
    if start is None:
        # A new deployment watches from the current confirmed head on (not the chain's history).
        start = max(w3.eth.block_number - settings.DEPOSIT_CONFIRMATIONS, 0)
    cursor, _ = ChainCursor.objects.get_or_create(name=CURSOR_NAME, defaults={"block_number": start - 1})
    return cursor


def deposits_scan(*, max_ranges: int | None = None) -> ScanResult:
    token = secrets.token_hex(8)
    if not cache.add(LOCK_KEY, token, timeout=settings.DEPOSIT_LOCK_SECONDS):
        return ScanResult(skipped=True)
    try:
        return _scan(chain(), max_ranges or settings.DEPOSIT_MAX_RANGES_PER_SCAN)
    finally:
        if cache.get(LOCK_KEY) == token:
            cache.delete(LOCK_KEY)


def _scan(w3: Web3, max_ranges: int) -> ScanResult:
    result = ScanResult()
    cursor = _cursor(w3)
    head = w3.eth.block_number
    safe = head - settings.DEPOSIT_CONFIRMATIONS
    if cursor.block_hash and cursor.block_number >= 0:
        current = "0x" + bytes(w3.eth.get_block(cursor.block_number)["hash"]).hex().removeprefix("0x")
        if current != cursor.block_hash:
            result.reorg_detected = True
            logger.error(
                "deposit watcher: block %s changed hash (%s -> %s) below the confirmation depth %s; "
                "credited deposits of that block need review",
                cursor.block_number,
                cursor.block_hash,
                current,
                settings.DEPOSIT_CONFIRMATIONS,
            )
    frm = cursor.block_number + 1
    result.from_block = frm
    ranges = 0
    while frm <= safe and ranges < max_ranges:
        to = min(frm + settings.DEPOSIT_BLOCK_RANGE - 1, safe)
        logs = _logs(w3, frm, to)  # an RPC error propagates: the cursor stays before `frm`
        seen: set[tuple[str, int]] = set()
        with transaction.atomic():
            for log in logs:
                if _is_x402_sale(w3, log):
                    continue
                deposit = _record(log, Deposit.State.PENDING)
                seen.add((deposit.tx_hash, deposit.log_index))
                result.recorded += 1
                if deposit_settle(deposit_id=deposit.id).state == Deposit.State.CREDITED:
                    result.credited += 1
            # Pending rows of these blocks that the confirmed read did not return were
            # reorganised away.
            for stale in Deposit.objects.filter(state=Deposit.State.PENDING, block_number__range=(frm, to)):
                if (stale.tx_hash, stale.log_index) not in seen:
                    logger.warning(
                        "deposit watcher: pending deposit %s:%s vanished", stale.tx_hash, stale.log_index
                    )
                    stale.delete()
            block_hash = "0x" + bytes(w3.eth.get_block(to)["hash"]).hex().removeprefix("0x")
            ChainCursor.objects.filter(name=CURSOR_NAME).update(block_number=to, block_hash=block_hash)
        result.to_block = to
        frm = to + 1
        ranges += 1
    if safe < head:
        # Not yet confirmed: shown to the account as pending, never credited here.
        for log in _logs(w3, max(safe + 1, cursor.block_number + 1), head):
            if _is_x402_sale(w3, log):
                continue
            deposit = _record(log, Deposit.State.PENDING)
            if deposit is not None and deposit.state == Deposit.State.PENDING:
                result.pending += 1
    return result
