"""Order-book depth the exchange feed (catalog/feeds/exchanges/) writes: one row per venue and
symbol, the book's EXCHANGE_BOOK_DEPTH best levels a side, rewritten by every pass (a book is
a state, not a history; the execution products walk it to price a notional)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class OrderBook(models.Model):
    exchange = models.CharField(max_length=64)
    symbol = models.CharField(max_length=40)  # ccxt's unified spot symbol, e.g. "BTC/USDT"
    # [[price, size], ...] as decimal strings (exact, as the venue sent them): bids best
    # (highest) first, asks best (lowest) first; sizes in the base asset.
    bids = models.JSONField(default=list)
    asks = models.JSONField(default=list)
    depth = models.PositiveSmallIntegerField(default=0)  # the levels asked for (EXCHANGE_BOOK_DEPTH)
    # When the venue stamped the book (its own clock, moved onto the pass in replay); the pass's
    # time for venues that send no stamp.
    book_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=32, default="exchanges")
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["exchange", "symbol"]
        constraints = [models.UniqueConstraint(fields=["exchange", "symbol"], name="order_book_unique")]
        indexes = [models.Index(fields=["symbol", "-observed_at"], name="order_book_symbol_seen")]

    def __str__(self) -> str:
        return f"{self.exchange}:{self.symbol} book ({len(self.bids)}x{len(self.asks)})"
