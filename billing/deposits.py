"""The deposit watcher: reads USDC Transfer logs to the treasury over CHAIN_RPC_URL, from a
stored cursor, in bounded block ranges, up to the confirmed head: the block the chain tags
DEPOSIT_FINALITY_TAG ("safe"/"finalized") and never above head - DEPOSIT_CONFIRMATIONS
(the confirmations alone where the chain has no such tag).

- A deposit is one transfer: transaction hash + the log's position inside the transaction.
  The block-wide log index changes when a reorganisation re-includes the transaction in
  another block; the position inside it does not.
- Each deposit is credited once (deposit_settle locks the row; the ledger has one row per
  deposit and kind), and only to an account whose wallet proved ownership.
- One scan at a time: a lock in the cache (Redis in production). If two scans overlap
  anyway (two beats started by mistake, a scan that outlived its lock), the constraints above
  still keep every credit single, and the cursor moves only from where the scan read it: each
  range's transaction locks the cursor's row first and stops the scan if another one moved it
  meanwhile (CursorMoved), so a slower scan never takes the cursor back over blocks the other
  has read.
- The cursor moves only after a range's deposits are committed, and remembers the hashes of
  recently read blocks (checkpoints) and of the chain's block 0 (genesis).
- A reorganisation below the cursor (the cursor's block has another hash now, or the head is
  below the cursor): the watcher goes back to the highest checkpoint still on the chain (the
  common ancestor), reverses the credits of deposits whose blocks left the chain (a
  reorg_reversal ledger row; what the balance no longer holds is recorded on the account,
  which is then held), and reads again from there: re-included transfers are new deposits,
  credited once they are confirmed again.
- Another chain (block 0 changed: a fresh local chain under a kept database): the cursor starts
  again on the new chain, with one log line (INFO where the stack starts a fresh chain each time,
  CHAIN_RESTARTS_EXPECTED; ERROR elsewhere); credited deposits of the old chain are kept.
- Logs in blocks not yet confirmed are shown as pending, not credited."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from eth_typing import HexStr
from web3 import Web3
from web3.types import LogReceipt, TxReceipt
from x402.mechanisms.evm.constants import X402_UPTO_PERMIT2_PROXY_ADDRESS

from billing.chain.rpc import chain
from billing.credits import deposit_orphan, deposit_settle
from billing.models import ChainCursor, Deposit, Payment

logger = logging.getLogger(__name__)

TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
AUTHORIZATION_USED_TOPIC = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5"
CURSOR_NAME = "usdc-deposits"
LOCK_KEY = "lock:deposit-scan"


class ChainMoved(Exception):
    """The chain changed while a range was read: nothing of the range is kept."""


class CursorMoved(Exception):
    """Another scan moved the cursor since this one read it: this scan stops, nothing of its
    current range is kept (the other scan has read it)."""


@dataclass
class ScanResult:
    skipped: bool = False
    from_block: int | None = None
    to_block: int | None = None
    recorded: int = 0
    credited: int = 0
    pending: int = 0
    reorg_detected: bool = False
    rewound_to: int | None = None
    orphaned: int = 0
    chain_reset: bool = False
    errors: list[str] = field(default_factory=list)


def _hex(value: Any) -> str:
    return "0x" + bytes(value).hex().removeprefix("0x")


def _topic(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _logs(w3: Web3, frm: int, to: int) -> list[LogReceipt]:
    return w3.eth.get_logs(
        {
            "address": Web3.to_checksum_address(settings.USDC_ADDRESS),
            "topics": [TRANSFER_TOPIC, None, _topic(settings.TREASURY_ADDRESS)],
            "fromBlock": HexStr(hex(frm)),
            "toBlock": HexStr(hex(to)),
        }
    )


def _block_hash(w3: Web3, number: int) -> str:
    return _hex(w3.eth.get_block(number)["hash"])


_tag_unsupported: set[str] = set()  # tags this process already logged as unsupported


def _confirmed_head(w3: Web3, head: int) -> int:
    """The highest block deposits are credited from."""
    limit: int = head - settings.DEPOSIT_CONFIRMATIONS
    tag = settings.DEPOSIT_FINALITY_TAG
    if not tag:
        return limit
    try:
        tagged = int(w3.eth.get_block(tag)["number"])
    except (ConnectionError, TimeoutError, OSError):
        raise  # the RPC is down: the scan fails, the cursor stays
    except Exception as exc:  # the chain does not know the tag: confirmations alone
        if tag not in _tag_unsupported:
            _tag_unsupported.add(tag)
            logger.warning(
                "deposit watcher: block tag %r not supported (%s); using head - confirmations", tag, exc
            )
        return limit
    return min(limit, tagged)


def _is_x402_sale(receipt: TxReceipt) -> bool:
    """A transfer to the treasury that settles one of our x402 payments is a sale, not a
    deposit. The EIP-3009 settlement emits AuthorizationUsed(authorizer, nonce) in the same
    transaction, and that (payer, nonce) was claimed as a Payment before it was broadcast."""
    for item in receipt["logs"]:
        topics = [_hex(t) for t in item["topics"]]
        if (
            len(topics) == 3
            and topics[0] == AUTHORIZATION_USED_TOPIC
            and item["address"].lower() == settings.USDC_ADDRESS.lower()
        ):
            payer = "0x" + topics[1][-40:]
            if Payment.objects.filter(payer=payer, nonce=topics[2]).exists():
                return True
    return _is_upto_sale(receipt)


UPTO_SETTLED_TOPIC = "0x" + Web3.keccak(text="Settled()").hex().removeprefix("0x")


def _is_upto_sale(receipt: TxReceipt) -> bool:
    """An `upto` settlement (billing/rails/upto.py): x402UptoPermit2Proxy's Settled() in the
    same transaction as the transfer, from a payer with an `upto` payment of ours. There is no
    AuthorizationUsed; the claim's row may not name the transaction yet (it is written once the
    facilitator saw the receipt)."""
    proxy = X402_UPTO_PERMIT2_PROXY_ADDRESS.lower()
    logs = receipt["logs"]
    if not any(
        item["address"].lower() == proxy and item["topics"] and _hex(item["topics"][0]) == UPTO_SETTLED_TOPIC
        for item in logs
    ):
        return False
    treasury = _topic(settings.TREASURY_ADDRESS).lower()
    for item in logs:
        topics = [_hex(t) for t in item["topics"]]
        if (
            len(topics) == 3
            and topics[0] == TRANSFER_TOPIC
            and topics[2].lower() == treasury
            and item["address"].lower() == settings.USDC_ADDRESS.lower()
            and Payment.objects.filter(scheme="upto", payer="0x" + topics[1][-40:]).exists()
        ):
            return True
    return False


class _Receipts:
    """Receipts of one range, fetched once per transaction and checked against the log's
    block: a receipt from another block means the chain moved under the read."""

    def __init__(self, w3: Web3) -> None:
        self.w3 = w3
        self.by_tx: dict[str, TxReceipt] = {}

    def of(self, log: LogReceipt) -> TxReceipt:
        tx_hash = _hex(log["transactionHash"])
        receipt = self.by_tx.get(tx_hash)
        if receipt is None:
            receipt = self.by_tx[tx_hash] = self.w3.eth.get_transaction_receipt(log["transactionHash"])
        if _hex(receipt["blockHash"]) != _hex(log["blockHash"]):
            raise ChainMoved(f"{tx_hash} is in block {_hex(receipt['blockHash'])} now")
        return receipt


def _position_in_tx(log: LogReceipt, receipt: TxReceipt) -> int:
    for position, item in enumerate(receipt["logs"]):
        if int(item["logIndex"]) == int(log["logIndex"]):
            return position
    raise ChainMoved(f"log {log['logIndex']} is not in the receipt of {_hex(log['transactionHash'])}")


def _record(log: LogReceipt, receipt: TxReceipt, state: str) -> Deposit:
    """The deposit of this log: found by transaction hash + position in the transaction
    (whatever block holds it now), or recorded."""
    tx_hash = _hex(log["transactionHash"])
    position = _position_in_tx(log, receipt)
    where: dict[str, int | str] = {
        "block_number": int(log["blockNumber"]),
        "block_hash": _hex(log["blockHash"]),
        "log_index": int(log["logIndex"]),
    }
    values: dict[str, int | str] = {
        **where,
        "from_address": "0x" + bytes(log["topics"][1])[-20:].hex(),
        "amount_atomic": int.from_bytes(bytes(log["data"]), "big"),
        "state": state,
    }
    live = Deposit.objects.exclude(state=Deposit.State.REORGED)
    deposit = live.filter(tx_hash=tx_hash, tx_log_index=position).first()
    if deposit is None:
        # Recorded before the position was kept: the same transfer in the same transaction.
        deposit = live.filter(
            tx_hash=tx_hash,
            tx_log_index__isnull=True,
            from_address=values["from_address"],
            amount_atomic=values["amount_atomic"],
        ).first()
        if deposit is not None:
            deposit.tx_log_index = position
            deposit.save(update_fields=["tx_log_index"])
    if deposit is None:
        try:
            with transaction.atomic():
                return Deposit.objects.create(tx_hash=tx_hash, tx_log_index=position, **values)
        except IntegrityError:  # recorded concurrently: the unique constraint kept one
            return live.get(tx_hash=tx_hash, tx_log_index=position)
    if any(getattr(deposit, k) != v for k, v in where.items()):
        # The same transfer, now in another block (a shallow reorganisation re-included it).
        Deposit.objects.filter(pk=deposit.pk).update(**where)
        for k, v in where.items():
            setattr(deposit, k, v)
    return deposit


def _start_block(w3: Web3, head: int) -> int:
    configured: int | None = settings.DEPOSIT_START_BLOCK
    if configured is not None:
        return configured
    # A new deployment watches from the current confirmed head on (not the chain's history).
    return max(_confirmed_head(w3, head), 0)


def _cursor(w3: Web3, head: int) -> ChainCursor:
    cursor, _ = ChainCursor.objects.get_or_create(
        name=CURSOR_NAME, defaults={"block_number": _start_block(w3, head) - 1}
    )
    return cursor


def _cursor_where(cursor: ChainCursor) -> dict[str, Any]:
    """Where this scan read the cursor: a move is made only from there."""
    return {
        "name": CURSOR_NAME,
        "block_number": cursor.block_number,
        "block_hash": cursor.block_hash,
        "genesis_hash": cursor.genesis_hash,
    }


def _cursor_hold(cursor: ChainCursor) -> None:
    """Lock the cursor's row for the current transaction (a concurrent scan's range waits
    here), and stop if another scan moved it since this one read it."""
    if not list(ChainCursor.objects.select_for_update().filter(**_cursor_where(cursor)).values_list("pk")):
        raise CursorMoved(f"the cursor is no longer at block {cursor.block_number}")


def _cursor_move(cursor: ChainCursor, **values: Any) -> None:
    """A conditional update: only from where this scan read the cursor."""
    if not ChainCursor.objects.filter(**_cursor_where(cursor)).update(**values):
        raise CursorMoved(f"the cursor is no longer at block {cursor.block_number}")
    for k, v in values.items():
        setattr(cursor, k, v)


def _chain_reset(w3: Web3, cursor: ChainCursor, genesis: str, head: int, result: ScanResult) -> None:
    """CHAIN_RPC_URL serves another chain than the one the cursor was read on (a fresh local
    chain under a kept database): its block numbers say nothing about the old one's. Expected
    where the stack starts a new chain each time (CHAIN_RESTARTS_EXPECTED: `make run`'s anvil),
    so INFO there; anywhere else the RPC now answers for another chain: an ERROR."""
    start = _start_block(w3, head)
    old_genesis, old_block = cursor.genesis_hash, cursor.block_number
    with transaction.atomic():
        _cursor_hold(cursor)
        # Unconfirmed rows of the old chain will never confirm.
        dropped, _ = Deposit.objects.filter(state=Deposit.State.PENDING).delete()
        _cursor_move(cursor, block_number=start - 1, block_hash="", genesis_hash=genesis, checkpoints=[])
    expected = settings.CHAIN_RESTARTS_EXPECTED
    logger.log(
        logging.INFO if expected else logging.ERROR,
        "deposit watcher: %s at CHAIN_RPC_URL (block 0 %s, was %s): watching it from block %s (the old "
        "chain's cursor was at block %s); %s pending deposit(s) of the old chain dropped, its credited "
        "deposits kept",
        "a new chain, as expected (this stack starts a fresh chain each time)" if expected else "a different chain",
        genesis,
        old_genesis,
        start,
        old_block,
        dropped,
    )
    result.chain_reset = True


def _rewind(w3: Web3, cursor: ChainCursor, head: int, result: ScanResult) -> None:
    """The blocks read up to the cursor are no longer all on the chain: go back to the common
    ancestor (the highest remembered block still on it) and take back what left the chain."""
    ancestor: tuple[int, str] | None = None
    for number, block_hash in sorted(cursor.checkpoints, reverse=True):
        if number <= head and _block_hash(w3, number) == block_hash:
            ancestor = (number, block_hash)
            break
    if ancestor is None:
        # Deeper than remembered (or a cursor from before checkpoints): from where a new
        # deployment would start, never above the cursor. Every deposit above is checked.
        number = min(_start_block(w3, head), cursor.block_number + 1) - 1
        ancestor = (number, _block_hash(w3, number) if 0 <= number <= head else "")
    result.reorg_detected = True
    result.rewound_to = ancestor[0]
    logger.error(
        "deposit watcher: the chain was reorganised below the read blocks (cursor %s %s, head %s); "
        "rewinding to block %s and reversing deposits whose blocks left the chain",
        cursor.block_number,
        cursor.block_hash or "-",
        head,
        ancestor[0],
    )
    canonical: dict[int, str | None] = {}
    # One transaction holding the cursor: a concurrent scan neither reads nor rewinds meanwhile.
    with transaction.atomic():
        _cursor_hold(cursor)
        orphaned = 0
        live = Deposit.objects.filter(block_number__gt=ancestor[0]).exclude(state=Deposit.State.REORGED)
        for deposit in live:
            n = deposit.block_number
            if n not in canonical:
                canonical[n] = _block_hash(w3, n) if n <= head else None
            if canonical[n] == deposit.block_hash:
                continue  # its block is still on the chain
            deposit_orphan(deposit_id=deposit.id)
            orphaned += 1
        _cursor_move(
            cursor,
            block_number=ancestor[0],
            block_hash=ancestor[1],
            checkpoints=[c for c in cursor.checkpoints if c[0] <= ancestor[0]],
        )
    result.orphaned += orphaned


def deposits_scan(*, max_ranges: int | None = None) -> ScanResult:
    token = secrets.token_hex(8)
    if not cache.add(LOCK_KEY, token, timeout=settings.DEPOSIT_LOCK_SECONDS):
        return ScanResult(skipped=True)
    try:
        return _scan(chain(), max_ranges or settings.DEPOSIT_MAX_RANGES_PER_SCAN)
    except CursorMoved as exc:
        # Another scan overlapped this one (its lock expired, or a second beat on a cache that
        # does not share locks) and read further: its reading stands, this one ends here.
        logger.info("deposit watcher: another scan moved the cursor (%s); this scan stops", exc)
        return ScanResult(skipped=True)
    finally:
        if cache.get(LOCK_KEY) == token:
            cache.delete(LOCK_KEY)


def _scan(w3: Web3, max_ranges: int) -> ScanResult:
    result = ScanResult()
    head = w3.eth.block_number
    genesis = _block_hash(w3, 0)
    cursor = _cursor(w3, head)
    if cursor.genesis_hash and cursor.genesis_hash != genesis:
        _chain_reset(w3, cursor, genesis, head, result)
    elif not cursor.genesis_hash:
        _cursor_move(cursor, genesis_hash=genesis)
    # Only a cursor that read its block can have been reorganised (a new one may wait for a
    # DEPOSIT_START_BLOCK above the head).
    if (
        cursor.block_hash
        and cursor.block_number >= 0
        and (cursor.block_number > head or _block_hash(w3, cursor.block_number) != cursor.block_hash)
    ):
        _rewind(w3, cursor, head, result)
    confirmed = _confirmed_head(w3, head)
    frm = cursor.block_number + 1
    result.from_block = frm
    ranges = 0
    try:
        while frm <= confirmed and ranges < max_ranges:
            to = min(frm + settings.DEPOSIT_BLOCK_RANGE - 1, confirmed)
            _read_range(w3, cursor, frm, to, result)
            result.to_block = to
            frm = to + 1
            ranges += 1
        unconfirmed_from = max(confirmed + 1, cursor.block_number + 1)
        if unconfirmed_from <= head:
            # Not yet confirmed: shown to the account as pending, never credited here.
            receipts = _Receipts(w3)
            for log in _logs(w3, unconfirmed_from, head):
                receipt = receipts.of(log)
                if _is_x402_sale(receipt):
                    continue
                if _record(log, receipt, Deposit.State.PENDING).state == Deposit.State.PENDING:
                    result.pending += 1
    except ChainMoved as exc:
        # Read while the chain changed: the next scan starts from the last committed range
        # and finds the reorganisation at its cursor if it went that deep.
        result.reorg_detected = True
        logger.warning("deposit watcher: the chain moved during the scan (%s); reading again next scan", exc)
    return result


def _read_range(w3: Web3, cursor: ChainCursor, frm: int, to: int, result: ScanResult) -> None:
    """Record and settle the deposits of blocks frm..to, then move the cursor, in one
    transaction. The hash of `to` read before and after the logs brackets the read: if it
    changed, or the range does not continue the cursor's block, nothing is kept."""
    to_hash = _block_hash(w3, to)
    if cursor.block_hash and _hex(w3.eth.get_block(frm)["parentHash"]) != cursor.block_hash:
        raise ChainMoved(f"block {frm} does not follow the cursor's block {cursor.block_number}")
    logs = _logs(w3, frm, to)  # an RPC error propagates: the cursor stays before `frm`
    receipts = _Receipts(w3)
    seen: set[int] = set()
    with transaction.atomic():
        _cursor_hold(cursor)  # an overlapping scan's range waits here, then finds it moved
        for log in logs:
            receipt = receipts.of(log)
            if _is_x402_sale(receipt):
                continue
            deposit = _record(log, receipt, Deposit.State.PENDING)
            seen.add(deposit.id)
            result.recorded += 1
            if deposit_settle(deposit_id=deposit.id).state == Deposit.State.CREDITED:
                result.credited += 1
        # Pending rows of these blocks that the confirmed read did not return were
        # reorganised away before they confirmed: never credited, dropped.
        for stale in Deposit.objects.filter(state=Deposit.State.PENDING, block_number__range=(frm, to)):
            if stale.id not in seen:
                logger.warning(
                    "deposit watcher: pending deposit %s:%s vanished", stale.tx_hash, stale.log_index
                )
                stale.delete()
        if _block_hash(w3, to) != to_hash:
            raise ChainMoved(f"block {to} changed while it was read")
        checkpoints = [*cursor.checkpoints, [to, to_hash]][-settings.DEPOSIT_CHECKPOINTS :]
        _cursor_move(cursor, block_number=to, block_hash=to_hash, checkpoints=checkpoints)
