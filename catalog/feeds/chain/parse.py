"""The JSON-RPC answers the chain feed reads, parsed strictly: Ethereum's JSON-RPC encodes
numbers as hex QUANTITY strings ("0x1b4", no leading zeros), which are read as exact integers.

eth_feeHistory(blockCount, newestBlock, rewardPercentiles) answers
{"oldestBlock": "0x..", "baseFeePerGas": [blockCount + 1 quantities: each block's base fee, then
the next block's], "gasUsedRatio": [blockCount floats], "reward": [blockCount lists, one
quantity per requested percentile]} (plus blob fields since Cancun, not read here). A node may
answer fewer blocks than asked (a young chain, a pruned history)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catalog.feeds.registry import FeedError

# A quantity longer than this is no fee, block number or chain id (2**256 has 65 hex digits).
QUANTITY_MAX_DIGITS = 64


def quantity(value: Any, *, what: str = "quantity") -> int:
    """An exact non-negative integer from a hex QUANTITY; FeedError for anything else. Leading
    zeros are tolerated (some nodes send "0x01"), decimal numbers are not."""
    if isinstance(value, str) and value[:2] in ("0x", "0X") and 2 < len(value) <= QUANTITY_MAX_DIGITS + 2:
        digits = value[2:]
        if all(c in "0123456789abcdefABCDEF" for c in digits):
            return int(digits, 16)
    raise FeedError(f"{what} is not a hex quantity: {str(value)[:40]!r}")


@dataclass(frozen=True, kw_only=True)
class FeeBlock:
    block_number: int
    base_fee_wei: int
    next_base_fee_wei: int | None
    gas_used_ratio: float
    # Priority fee (wei per gas) per requested reward percentile, in the requested order.
    rewards_wei: tuple[int, ...] | None


def fee_history_parse(result: Any, *, percentiles: tuple[int, ...]) -> list[FeeBlock]:
    """One FeeBlock per block of an eth_feeHistory result, oldest first. A result of the wrong
    shape raises FeedError: the answer is one coherent reading, so a broken part discredits it."""
    if not isinstance(result, dict):
        raise FeedError("eth_feeHistory answered no object")
    oldest = quantity(result.get("oldestBlock"), what="eth_feeHistory oldestBlock")
    base_fees = result.get("baseFeePerGas")
    ratios = result.get("gasUsedRatio")
    if not isinstance(base_fees, list) or not isinstance(ratios, list):
        raise FeedError("eth_feeHistory answered no baseFeePerGas or gasUsedRatio list")
    count = len(ratios)
    if len(base_fees) not in (count, count + 1):
        raise FeedError(
            f"eth_feeHistory answered {len(base_fees)} base fees for {count} blocks (expected {count + 1})"
        )
    rewards = result.get("reward")
    if percentiles and count:
        if not isinstance(rewards, list) or len(rewards) != count:
            raise FeedError("eth_feeHistory answered no reward list for each block")
    fees = [quantity(x, what="eth_feeHistory baseFeePerGas") for x in base_fees]
    blocks = []
    for i, raw_ratio in enumerate(ratios):
        if isinstance(raw_ratio, bool) or not isinstance(raw_ratio, int | float):
            raise FeedError(f"eth_feeHistory gasUsedRatio is not a number: {str(raw_ratio)[:40]!r}")
        ratio = float(raw_ratio)
        if not math.isfinite(ratio) or not 0.0 <= ratio <= 1.0:
            raise FeedError(f"eth_feeHistory gasUsedRatio {ratio!r} is outside 0..1")
        block_rewards: tuple[int, ...] | None = None
        if percentiles:
            row = rewards[i] if isinstance(rewards, list) else None
            if not isinstance(row, list) or len(row) != len(percentiles):
                raise FeedError(f"eth_feeHistory reward of block {oldest + i} has no value per percentile")
            block_rewards = tuple(quantity(x, what="eth_feeHistory reward") for x in row)
        blocks.append(
            FeeBlock(
                block_number=oldest + i,
                base_fee_wei=fees[i],
                next_base_fee_wei=fees[i + 1] if i + 1 < len(fees) else None,
                gas_used_ratio=ratio,
                rewards_wei=block_rewards,
            )
        )
    return blocks
