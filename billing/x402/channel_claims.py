"""Collecting what payment channels sold: the work of the beat tasks (billing/tasks.py), through
the SDK's channel manager (`BatchSettlementChannelManagerSync`) instead of its timer threads.

- `channels_claim`: one `claimWithSignature` transaction per batch of at most
  X402_CHANNEL_MAX_CLAIMS_PER_BATCH channels, each contributing its latest voucher (however
  many calls it paid).
- `channels_settle`: sweep what claims collected to the treasury, in one transaction, only
  when the contract holds claimed-but-unswept funds for us (the SDK's settle fails with
  nothing to settle otherwise).
- `channels_refund_idle`: cooperative close of channels idle for X402_CHANNEL_IDLE_SECONDS
  (claim the rest, return the remainder to the payer); off unless X402_CHANNEL_IDLE_REFUND.
- `channels_watch_withdrawals`: a payer may `initiateWithdraw` at any time and take back,
  `withdrawDelay` later, everything not claimed on chain; a voucher verified locally does not
  see it. So the `pendingWithdrawals` of the channels holding unclaimed calls are read (in
  JSON-RPC batches of WITHDRAWAL_READS_PER_REQUEST), and a
  channel with a pending withdrawal is marked, claimed at once, and its stored on-chain state
  declared stale, so its next vouchers are verified by the facilitator against the chain
  (which sees the balance a finalized withdrawal left) instead of locally."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from web3 import Web3
from web3.contract import Contract
from x402.mechanisms.evm.batch_settlement.abi import BATCH_SETTLEMENT_ABI
from x402.mechanisms.evm.batch_settlement.constants import BATCH_SETTLEMENT_ADDRESS
from x402.mechanisms.evm.batch_settlement.server import Channel
from x402.mechanisms.evm.batch_settlement.server.channel_manager_common import (
    AutoSettlementContext,
    ClaimOptions,
    ClaimResult,
    RefundResult,
    SettleResult,
)
from x402.mechanisms.evm.default_assets import get_default_asset

from billing.chain.rpc import chain
from billing.x402.channels import channel_manager, channel_scheme, channels_on

logger = logging.getLogger(__name__)


def settlement_contract(w3: Web3 | None = None) -> Contract:
    w3 = w3 or chain()
    return w3.eth.contract(address=Web3.to_checksum_address(BATCH_SETTLEMENT_ADDRESS), abi=BATCH_SETTLEMENT_ABI)


def _options(selected: set[str] | None = None) -> ClaimOptions:
    def select(channels: list[Channel], _context: AutoSettlementContext) -> list[Channel]:
        return [c for c in channels if selected is None or c.channel_id.lower() in selected]

    return ClaimOptions(
        max_claims_per_batch=settings.X402_CHANNEL_MAX_CLAIMS_PER_BATCH,
        select_claim_channels=select if selected is not None else None,
    )


def channels_claim() -> list[ClaimResult]:
    if not channels_on():
        return []
    results = _claim_isolating(None)
    for result in results:
        logger.info("channels: claimed %s vouchers in %s", result.vouchers, result.transaction)
    return results


def _claim_isolating(selected: set[str] | None) -> list[ClaimResult]:
    """Claim the selected channels (None: all), in the SDK's batches. A batch is one transaction,
    simulated first: one voucher the contract refuses (a payer whose timed withdrawal finalized
    before our claim: ClaimExceedsBalance) fails its whole batch, every run, and would keep every
    other channel's calls unclaimed. So a batch refused on its merits is split in halves until
    the refused channels stand alone; those are left unclaimed and logged, the rest are claimed
    (a few more transactions, and simulations, which cost no gas). Anything else (the chain or
    the facilitator unreachable) is raised: the task retries the whole run."""
    try:
        return list(channel_manager().claim(_options(selected)))
    except RuntimeError as exc:
        if "invalid_" not in str(exc):
            raise
        refusal = str(exc)
    candidates = sorted(
        channel.channel_id.lower()
        for channel in channel_scheme().get_storage().list()
        if int(channel.charged_cumulative_amount) > int(channel.total_claimed)
        and (selected is None or channel.channel_id.lower() in selected)
    )
    if len(candidates) <= 1:
        if candidates:
            logger.error("channels: the claim of channel %s is refused: %s; left unclaimed", candidates[0], refusal)
        return []
    half = len(candidates) // 2
    return _claim_isolating(set(candidates[:half])) + _claim_isolating(set(candidates[half:]))


def unswept_atomic() -> int:
    """What claims collected for the treasury that is not swept to it yet."""
    token = get_default_asset(settings.X402_NETWORK)["asset"]
    claimed, settled = (
        settlement_contract()
        .functions.receivers(Web3.to_checksum_address(settings.TREASURY_ADDRESS), Web3.to_checksum_address(token))
        .call()
    )
    return int(claimed) - int(settled)


def channels_settle() -> SettleResult | None:
    if not channels_on() or unswept_atomic() <= 0:
        return None
    result: SettleResult = channel_manager().settle()
    logger.info("channels: settled to the treasury in %s", result.transaction)
    return result


def channels_refund_idle() -> list[RefundResult]:
    if not channels_on() or not settings.X402_CHANNEL_IDLE_REFUND:
        return []
    results: list[RefundResult] = channel_manager().refund_idle_channels(settings.X402_CHANNEL_IDLE_SECONDS)
    return results


@dataclass(frozen=True)
class WithdrawalsSeen:
    pending: list[str]  # channels whose payer started a timed withdrawal
    claims: list[ClaimResult]


def channels_watch_withdrawals() -> WithdrawalsSeen:
    """Mark every open channel with a pending withdrawal, and claim those with unclaimed calls
    at once (in the same batches as the claim task)."""
    if not channels_on():
        return WithdrawalsSeen(pending=[], claims=[])
    storage = channel_scheme().get_storage()
    # Only channels holding unclaimed calls: nothing else can a withdrawal take from us (and
    # idle channels cost no read).
    exposed = [c.channel_id for c in storage.list() if int(c.charged_cumulative_amount) > int(c.total_claimed)]
    pending: list[str] = []
    for channel_id, initiated_at in _withdrawals_initiated(settlement_contract(), exposed).items():
        if not initiated_at:
            continue
        pending.append(channel_id.lower())
        storage.update_channel(channel_id, _marked(initiated_at))
    claims = _claim_isolating(set(pending)) if pending else []
    for result in claims:
        logger.warning(
            "channels: %s pending withdrawal(s); claimed %s vouchers in %s",
            len(pending),
            result.vouchers,
            result.transaction,
        )
    return WithdrawalsSeen(pending=pending, claims=claims)


# Channels whose pending withdrawal one JSON-RPC batch request reads (providers cap batches;
# 100 is within the common caps).
WITHDRAWAL_READS_PER_REQUEST = 100


def _withdrawals_initiated(contract: Contract, channel_ids: list[str]) -> dict[str, int]:
    """When each channel's pending withdrawal was initiated (0: none), read in JSON-RPC batches
    rather than one request a channel; a node that refuses a batch is asked once per channel."""
    initiated: dict[str, int] = {}
    for start in range(0, len(channel_ids), WITHDRAWAL_READS_PER_REQUEST):
        group = channel_ids[start : start + WITHDRAWAL_READS_PER_REQUEST]
        calls = [contract.functions.pendingWithdrawals(channel_id) for channel_id in group]
        answers: list[Any]  # (amount, initiated_at) a channel, decoded by web3
        try:
            with contract.w3.batch_requests() as batch:
                for call in calls:
                    batch.add(call)
                answers = list(cast(list[Any], batch.execute()))
        except Exception as exc:  # a node without batches (or over its cap): one request each
            logger.info("channels: batch read of pending withdrawals refused (%s); reading one by one", exc)
            answers = [call.call() for call in calls]
        for channel_id, (_amount, initiated_at) in zip(group, answers, strict=True):
            initiated[channel_id] = int(initiated_at)
    return initiated


def _marked(initiated_at: int) -> Any:
    def update(current: Channel | None) -> Channel | None:
        if current is None:
            return current
        following = current.copy()
        following.withdraw_requested_at = initiated_at
        following.onchain_synced_at = None  # verify the next voucher against the chain
        return following

    return update
