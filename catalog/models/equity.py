"""Reference quotes of listed equities and ETFs (the underlyings of tokenized stocks, and the
price context of equity news), written by the equity quotes feed (catalog/feeds/equities/)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class EquityQuote(models.Model):
    """The latest quote of one ticker from one source (rewritten by each pass)."""

    symbol = models.CharField(
        max_length=20, help_text="the listing's ticker, e.g. AAPL, SPY (XAU for spot gold)"
    )
    # The source's own name for it (Stooq: AAPL.US, XAUUSD).
    venue_symbol = models.CharField(max_length=32, blank=True)
    name = models.CharField(max_length=120, blank=True)
    price = models.DecimalField(max_digits=24, decimal_places=6)
    open = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    high = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    low = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    prev_close = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    change_pct = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    volume = models.BigIntegerField(null=True, blank=True)
    currency = models.CharField(max_length=8, default="USD")
    quoted_at = models.DateTimeField(help_text="the quote's own time (the venue's last trade or close)")
    source = models.CharField(max_length=32)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["symbol"]
        constraints = [models.UniqueConstraint(fields=["source", "symbol"], name="equity_quote_unique")]

    def __str__(self) -> str:
        return f"{self.symbol} {self.price} ({self.source})"
