"""DeFi yield pools ingested from DefiLlama (catalog/feeds/defillama): the pools above a TVL
floor, largest first, for the yield scout product."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class YieldPool(models.Model):
    pool_id = models.CharField(max_length=100, unique=True)  # DefiLlama's pool id (a UUID)
    chain = models.CharField(max_length=64, db_index=True)
    project = models.CharField(max_length=100, db_index=True)
    symbol = models.CharField(max_length=200)
    pool_meta = models.CharField(max_length=200, blank=True)
    tvl_usd = models.DecimalField(max_digits=24, decimal_places=2)
    # APYs in percent, as DefiLlama gives them (floats: reward APYs can be absurd, they are not money).
    apy = models.FloatField(null=True, blank=True)
    apy_base = models.FloatField(null=True, blank=True)
    apy_reward = models.FloatField(null=True, blank=True)
    apy_mean_30d = models.FloatField(null=True, blank=True)
    stablecoin = models.BooleanField(default=False)
    il_risk = models.CharField(max_length=8, blank=True)  # "yes" / "no"
    exposure = models.CharField(max_length=16, blank=True)  # "single" / "multi"
    outlier = models.BooleanField(default=False)
    predicted_class = models.CharField(max_length=32, blank=True)
    predicted_probability = models.FloatField(null=True, blank=True)
    reward_tokens = models.JSONField(default=list, blank=True)
    underlying_tokens = models.JSONField(default=list, blank=True)
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-tvl_usd", "pool_id"]

    def __str__(self) -> str:
        return f"{self.project} {self.symbol} ({self.chain})"
