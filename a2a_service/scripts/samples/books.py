"""Each spot market's order book, in each venue's own answer."""

from __future__ import annotations

from typing import Any

from a2a_service.scripts.samples.bybit import bybit_envelope
from a2a_service.scripts.samples.market import (
    NOW_MS,
    SPOT,
    Book,
    write,
)
from a2a_service.scripts.samples.okx import okx_envelope


def books(venue: str) -> None:
    """Each spot market's order book, in the venue's own answer (the books' tops are the
    tickers' bid/ask written above)."""
    for b in SPOT[venue]:
        book = Book(venue, b)
        bids, asks = book.depth()
        if venue == "binance":
            data: Any = {"lastUpdateId": 71234567890, "bids": bids, "asks": asks}
            write(venue, f"api/v3/depth/symbol={b}USDT", data)
        elif venue == "okx":
            # okx levels: [price, size, deprecated "0", number of orders].
            data = okx_envelope(
                [
                    {
                        "asks": [[p, q, "0", "3"] for p, q in asks],
                        "bids": [[p, q, "0", "3"] for p, q in bids],
                        "ts": str(NOW_MS),
                    }
                ]
            )
            write(venue, f"api/v5/market/books/instId={b}-USDT", data)
        else:
            data = bybit_envelope(
                {
                    "s": f"{b}USDT",
                    "b": bids,
                    "a": asks,
                    "ts": NOW_MS,
                    "u": 4123456,
                    "seq": 71234567,
                    "cts": NOW_MS,
                }
            )
            write(venue, f"v5/market/orderbook/category=spot,symbol={b}USDT", data)
