"""The chain feed's fee history (catalog/feeds/chain/): one row per block, from the node's
eth_feeHistory, for the gas and execution-hint products."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

# The reward percentiles the chain feed asks eth_feeHistory for, one column each below: the
# priority fee (tip, wei per gas) at or below which that share of the block's gas was paid.
REWARD_PERCENTILES: tuple[int, ...] = (10, 25, 50, 70, 90, 99)


def _wei(*, null: bool = False, blank: bool = False, help_text: str = "") -> models.DecimalField:
    # Wei amounts as whole numbers: a fee per gas fits a bigint on any real chain, but nothing
    # in the protocol bounds it, and a node's answer is outside input.
    return models.DecimalField(max_digits=40, decimal_places=0, null=null, blank=blank, help_text=help_text)


class GasFeeBlock(models.Model):
    chain_id = models.BigIntegerField()
    block_number = models.BigIntegerField()
    base_fee_wei = _wei(help_text="the block's base fee per gas (wei)")
    # The base fee of the block after this one, as the node reported it (eth_feeHistory returns
    # one base fee more than blocks: the newest row's is the node's own projection of the next
    # block's). Lets the products check their EIP-1559 arithmetic against the chain's.
    next_base_fee_wei = _wei(null=True, blank=True)
    gas_used_ratio = models.FloatField(help_text="gas used / gas limit of the block, 0..1")
    priority_fee_p10_wei = _wei(null=True, blank=True)
    priority_fee_p25_wei = _wei(null=True, blank=True)
    priority_fee_p50_wei = _wei(null=True, blank=True)
    priority_fee_p70_wei = _wei(null=True, blank=True)
    priority_fee_p90_wei = _wei(null=True, blank=True)
    priority_fee_p99_wei = _wei(null=True, blank=True)
    # Provenance: the feed that wrote the row, whether from the local replay, when last seen.
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-chain_id", "-block_number"]
        constraints = [
            models.UniqueConstraint(fields=["chain_id", "block_number"], name="gas_fee_block_unique")
        ]

    def __str__(self) -> str:
        return f"chain {self.chain_id} block {self.block_number}"

    def priority_fee_wei(self, percentile: int) -> int | None:
        value = getattr(self, f"priority_fee_p{percentile}_wei")
        return None if value is None else int(value)
