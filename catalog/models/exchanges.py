"""Exchange time series the exchange feed (catalog/feeds/exchanges/) writes: OHLCV candles and
perpetual funding readings. Both are pruned by age (catalog.feeds.exchanges.exchanges_prune)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Candle(models.Model):
    exchange = models.CharField(max_length=64)
    symbol = models.CharField(max_length=40)
    timeframe = models.CharField(max_length=8)  # ccxt's: "1m", "1h", ...
    open_time = models.DateTimeField()
    open = models.DecimalField(max_digits=30, decimal_places=12)
    high = models.DecimalField(max_digits=30, decimal_places=12)
    low = models.DecimalField(max_digits=30, decimal_places=12)
    close = models.DecimalField(max_digits=30, decimal_places=12)
    volume = models.DecimalField(max_digits=36, decimal_places=12)  # in the base asset
    source = models.CharField(max_length=32, default="exchanges")
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["exchange", "symbol", "timeframe", "-open_time"]
        constraints = [
            models.UniqueConstraint(
                fields=["exchange", "symbol", "timeframe", "open_time"], name="candle_unique"
            )
        ]
        indexes = [
            # The latest candles of one symbol and timeframe (across venues), and pruning by age.
            models.Index(fields=["symbol", "timeframe", "-open_time"], name="candle_symbol_tf_time"),
            models.Index(fields=["open_time"], name="candle_open_time"),
        ]

    def __str__(self) -> str:
        return f"{self.exchange}:{self.symbol} {self.timeframe} {self.open_time:%Y-%m-%d %H:%M}"


class FundingRate(models.Model):
    """One perpetual's funding rate for one funding time (the current period's rate is
    rewritten by every pass until that time passes)."""

    exchange = models.CharField(max_length=64)
    symbol = models.CharField(max_length=40)  # ccxt's perpetual symbol, e.g. "BTC/USDT:USDT"
    rate = models.DecimalField(max_digits=16, decimal_places=10)
    funding_at = models.DateTimeField()  # the funding time this rate applies to
    next_funding_at = models.DateTimeField(null=True, blank=True)
    mark_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    source = models.CharField(max_length=32, default="exchanges")
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["exchange", "symbol", "-funding_at"]
        constraints = [
            models.UniqueConstraint(fields=["exchange", "symbol", "funding_at"], name="funding_rate_unique")
        ]
        indexes = [
            models.Index(fields=["symbol", "-funding_at"], name="funding_symbol_time"),
            models.Index(fields=["observed_at"], name="funding_observed_at"),
        ]

    def __str__(self) -> str:
        return f"{self.exchange}:{self.symbol} {self.rate} @ {self.funding_at:%Y-%m-%d %H:%M}"
