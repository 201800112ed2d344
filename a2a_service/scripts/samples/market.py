"""Prices, venues, and each venue's synthetic book for a base: its ticker, its order-book depth
and its candles (along the base's designed path); `write` puts an answer where the replay
server finds it."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

from a2a_service.scripts.samples.paths import VENUE_JITTER, shape_path
from catalog.feeds.replay import SAMPLES

# 2026-11-23T12:00:00Z: the recorded "now" (the last 1m candle opens a minute before).
NOW_MS = 1795435200000
MINUTE, HOUR = 60_000, 3_600_000
PRICES = {
    "BTC": "97250.5",
    "ETH": "3412.37",
    "SOL": "241.83",
    "XRP": "1.4521",
    "BNB": "652.4",
    "DOGE": "0.38917",
    "ADA": "1.0214",
    "AVAX": "45.12",
    "LINK": "24.381",
    "DOT": "8.612",
    "LTC": "115.27",
    "TRX": "0.21034",
    "TON": "6.317",
    "SUI": "3.9142",
    "NEAR": "6.714",
    "PAXG": "2651.8",
    "XAUT": "2646.3",
}
# Which bases each venue lists (spot against USDT; perpetuals for the crypto bases).
SPOT = {
    "binance": [b for b in PRICES if b != "XAUT"],
    "okx": list(PRICES),
    "bybit": [b for b in PRICES if b not in ("TON",)],
}
PERPS = {v: [b for b in SPOT[v] if b not in ("PAXG", "XAUT")] for v in SPOT}
# Spread (bps) and 24h base volume scale per venue.
VENUE_SPREAD = {"binance": 0.8, "okx": 1.1, "bybit": 1.4}
VENUE_VOLUME = {"binance": 1.0, "okx": 0.45, "bybit": 0.35}
# 24h volume weight per base (BTC trades most).
WEIGHT = {
    "BTC": 12.0,
    "ETH": 7.0,
    "SOL": 3.0,
    "XRP": 2.0,
    "BNB": 1.5,
    "DOGE": 1.5,
    "PAXG": 0.06,
    "XAUT": 0.04,
}
FUNDING = {"binance": "0.00010000", "okx": "0.0000875", "bybit": "0.0001125"}
# A designed cross-venue gap, so that the local stack's spread radar and pair-arb desk have
# something to show: bybit's SOL trades 60 bps above the other venues (more than binance's
# 10 bps plus bybit's 7.5 bps taker fee), which also crosses PAIR_ARB_ALERT_BPS net of fees.
PREMIUM = {("bybit", "SOL"): "0.006"}
# Order-book levels recorded per side (EXCHANGE_BOOK_DEPTH may ask for up to this many).
BOOK_LEVELS = 50


def digits(price: Decimal) -> int:
    """Decimal places of a tick about 1/100,000 of the price."""
    return max(0, min(8, 5 - len(str(int(price))) + (1 if price >= 1 else 2)))


def fmt(value: Decimal, places: int) -> str:
    return f"{value:.{places}f}"


class Book:
    """One venue's synthetic state for one base."""

    def __init__(self, venue: str, base: str) -> None:
        self.venue, self.base = venue, base
        self.rng = random.Random(f"{venue}:{base}")
        self.last = Decimal(PRICES[base]) * Decimal(str(1 + self.rng.uniform(-0.0004, 0.0004)))
        self.last *= 1 + Decimal(PREMIUM.get((venue, base), "0"))
        self.places = digits(self.last)
        self.last = self.last.quantize(Decimal(1).scaleb(-self.places))
        half = self.last * Decimal(str(VENUE_SPREAD[venue])) / 20000
        tick = Decimal(1).scaleb(-self.places)
        half = max(half.quantize(tick), tick)
        self.bid, self.ask = self.last - half, self.last + half
        usd = Decimal(str(self.rng.uniform(0.8, 1.2) * WEIGHT.get(base, 1.0) * 2.5e8 * VENUE_VOLUME[venue]))
        self.volume = (usd / self.last).quantize(Decimal("0.001"))
        self.quote_volume = (self.volume * self.last).quantize(Decimal("0.01"))
        swing = 0.008 if base in ("PAXG", "XAUT") else 0.05  # gold moves less in a day
        self.open = (self.last * Decimal(str(1 + self.rng.uniform(-swing, swing)))).quantize(tick)
        self.high = max(self.last, self.open) * Decimal("1.012")
        self.low = min(self.last, self.open) * Decimal("0.988")
        self.bid_size = Decimal(str(round(self.rng.uniform(0.5, 40) * 1000 / float(self.last) + 0.001, 3)))
        self.ask_size = Decimal(str(round(self.rng.uniform(0.5, 40) * 1000 / float(self.last) + 0.001, 3)))

    def depth(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """BOOK_LEVELS (price, size) levels a side, best first: the first is the ticker's top,
        then prices a venue-typical fraction of a bps apart and sizes growing with distance."""
        rng = random.Random(f"{self.venue}:{self.base}:depth")
        tick = Decimal(1).scaleb(-self.places)
        step_bps = Decimal(str(rng.uniform(0.4, 1.2))) * Decimal(str(VENUE_SPREAD[self.venue]))
        usd = WEIGHT.get(self.base, 1.0) * 20_000 * VENUE_VOLUME[self.venue]
        sides: list[list[tuple[str, str]]] = []
        for top, top_size, sign in ((self.bid, self.bid_size, -1), (self.ask, self.ask_size, 1)):
            rows = [(fmt(top, self.places), f"{top_size}")]
            price = top
            for k in range(1, BOOK_LEVELS):
                step = max((top * step_bps / 10_000).quantize(tick), tick)
                price = price + sign * step
                size = Decimal(str(usd * rng.uniform(0.5, 1.5) * (1 + k / 4))) / price
                rows.append((fmt(price, self.places), f"{size.quantize(Decimal('0.0001'))}"))
            sides.append(rows)
        return sides[0], sides[1]

    def candles(self, step: int, count: int) -> list[tuple[int, str, str, str, str, str]]:
        """Oldest first; the last closes at the last price. The closes follow the base's
        designed path (`shape_path`, the same on every venue: only this venue's price level and
        a jitter of a few hundredths of a percent differ); the wicks are this venue's own.
        The newest 1h bars span the 1m bars' highs and lows, so the two timeframes agree."""
        path = shape_path(self.base)
        rel = path.closes_1h if step == HOUR else path.closes_1m
        rel = rel[-count:]
        rng = random.Random(f"{self.venue}:{self.base}:{step}")
        wick = (path.noise_1h if step == HOUR else path.noise_1m) / 2
        last = float(self.last)
        closes = [last * r * (1 + rng.gauss(0, VENUE_JITTER)) for r in rel[:-1]] + [last]
        spans: dict[int, tuple[float, float]] = {}
        if step == HOUR:
            # The 1h bars the 1m bars cover: their high and low are the 1m bars' extremes.
            minutes = self.candles(MINUTE, len(path.closes_1m))
            for opened, _o, high, low, _c, _v in minutes:
                hour = (opened // HOUR) * HOUR
                top, bottom = spans.get(hour, (0.0, float("inf")))
                spans[hour] = (max(top, float(high)), min(bottom, float(low)))
        q = Decimal(1).scaleb(-self.places)
        out = []
        start = NOW_MS - MINUTE if step == MINUTE else NOW_MS - HOUR
        start -= (count - 1) * step
        prev = closes[0] * (1 + rng.gauss(0, wick))
        for i, close in enumerate(closes):
            t = start + i * step
            o = prev
            h = max(o, close) * (1 + abs(rng.gauss(0, wick)))
            lo = min(o, close) * (1 - abs(rng.gauss(0, wick)))
            if t in spans:
                h, lo = max(spans[t][0], o, close), min(spans[t][1], o, close)
            # Busier bars where the path moves more (volume follows volatility).
            move = abs(close / o - 1) / max(wick * 2, 1e-9)
            v = (
                self.volume
                / (1440 if step == MINUTE else 24)
                * Decimal(str(rng.uniform(0.5, 1.3) + 0.3 * min(move, 3)))
            )
            out.append(
                (
                    t,
                    fmt(Decimal(str(o)).quantize(q), self.places),
                    fmt(Decimal(str(h)).quantize(q), self.places),
                    fmt(Decimal(str(lo)).quantize(q), self.places),
                    fmt(Decimal(str(close)).quantize(q), self.places),
                    f"{v:.4f}",
                )
            )
            prev = close
        return out


def write(venue: str, path: str, data: Any) -> None:
    target = SAMPLES / f"exchange_{venue}" / f"{path}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, separators=(",", ":")) + "\n")
