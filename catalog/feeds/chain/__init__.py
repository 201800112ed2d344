"""The chain feed: from the node at CHAIN_RPC_URL, eth_chainId, eth_blockNumber and
eth_feeHistory over the newest CHAIN_FEE_HISTORY_BLOCKS blocks (reward percentiles
10/25/50/70/90/99), one GasFeeBlock row per block, upserted on (chain id, block number).

CHAIN_RPC_URL is the operator's own node (the one payments settle through; anvil on the local
stack), so it may be on a private address. Redirects are still never followed. In replay mode
the replay server's JSON-RPC stand-in (samples/chain_rpc_url/<method>.json) answers instead."""

from __future__ import annotations

from django.conf import settings

from catalog.feeds.chain.parse import FeeBlock, fee_history_parse, quantity
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.feeds.retention import retention_register
from catalog.feeds.unique import unique_on
from catalog.models import GasFeeBlock
from catalog.models.chain import REWARD_PERCENTILES

SOURCE = "chain"
# Nodes cap eth_feeHistory's block count (geth and reth at 1024); asking for more fails.
MAX_BLOCKS = 1024


def fee_blocks_upsert(blocks: list[FeeBlock], *, chain_id: int, feed_pass: FeedPass) -> int:
    """Write each block's row (insert or update in place: re-reading a block rewrites its row,
    which also takes in a reorganised block's new fees). Saved one by one, so model signals run.
    A block the node answered twice is written once (the last reading)."""
    blocks = unique_on(
        blocks, key=lambda b: b.block_number, what=f"chain {chain_id} fee blocks", feed_pass=feed_pass
    )
    stored = {
        row.block_number: row
        for row in GasFeeBlock.objects.filter(
            chain_id=chain_id, block_number__in=[b.block_number for b in blocks]
        )
    }
    for block in blocks:
        row = stored.get(block.block_number) or GasFeeBlock(
            chain_id=chain_id, block_number=block.block_number
        )
        row.base_fee_wei = block.base_fee_wei
        row.next_base_fee_wei = block.next_base_fee_wei
        row.gas_used_ratio = block.gas_used_ratio
        for percentile, reward in zip(REWARD_PERCENTILES, block.rewards_wei or (), strict=False):
            setattr(row, f"priority_fee_p{percentile}_wei", reward)
        row.source, row.replay, row.observed_at = SOURCE, feed_pass.replay, feed_pass.started_at
        row.save()
    return len(blocks)


def run(feed_pass: FeedPass) -> int:
    url = feed_pass.base("CHAIN_RPC_URL")
    chain_id = quantity(feed_pass.rpc(url, "eth_chainId", allow_private=True), what="eth_chainId")
    head = quantity(feed_pass.rpc(url, "eth_blockNumber", allow_private=True), what="eth_blockNumber")
    count = min(max(settings.CHAIN_FEE_HISTORY_BLOCKS, 1), MAX_BLOCKS)
    result = feed_pass.rpc(
        url, "eth_feeHistory", [hex(count), "latest", list(REWARD_PERCENTILES)], allow_private=True
    )
    blocks = fee_history_parse(result, percentiles=REWARD_PERCENTILES)
    if blocks and blocks[-1].block_number > head + count:
        # The head was read a moment before the history: a few blocks newer is the chain moving
        # on, a whole window newer is a node (or a proxy) answering for another chain.
        raise FeedError(
            f"eth_feeHistory's newest block {blocks[-1].block_number} is far past the head {head}"
        )
    if chain_id != settings.CHAIN_ID:
        feed_pass.warn(f"CHAIN_RPC_URL is chain {chain_id}, not CHAIN_ID {settings.CHAIN_ID}")
    return fee_blocks_upsert(blocks, chain_id=chain_id, feed_pass=feed_pass)


retention_register(model=GasFeeBlock, time_field="observed_at", days_setting="CHAIN_FEE_RETENTION_DAYS")

feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=60,
        description="the chain's fee history (eth_feeHistory): base fee and priority-fee percentiles per block",
        url_settings=("CHAIN_RPC_URL",),
    )
)
