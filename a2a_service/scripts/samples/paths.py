"""The designed candle paths: each base's shape (trend, range, volatile) on 1h and 1m, shared by
every venue."""

from __future__ import annotations

import math
import random

# Bars per timeframe: enough history for the indicators (EMA50, ADX and the regime's
# since-when need well over 100 bars; the volatility percentile reads the whole window).
CANDLES = {"1m": 300, "1h": 300}
MINUTES_PER_HOUR = 60
# A venue's closes differ from the shared path by this relative jitter (standard deviation).
VENUE_JITTER = 0.00003
# The designed shape of each base, so the local stack shows every regime:
# (kind, drift %/h of the trend, noise %/h, bars of the current shape, drift %/h of the newest
# five hours or None, 1m shape). Trends: a range, then the drift for the last `bars` hours.
# Ranges: an older rise, then a mean-reverting band. Volatile: a band whose noise quadruples.
# The 1m bars bridge the newest five 1h closes: "follow" keeps their direction with little
# noise (a clean lower-timeframe trend), "band" chops around them (a 1m range), "wild" more.
SHAPES: dict[str, tuple[str, float, float, int, float | None, str]] = {
    "BTC": ("trend", 0.12, 0.22, 160, 0.20, "follow"),
    "ETH": ("trend", 0.15, 0.30, 140, 0.22, "follow"),
    "SOL": ("trend", 0.25, 0.45, 120, 0.30, "follow"),
    "LINK": ("trend", 0.20, 0.35, 150, -0.45, "follow"),  # an up-trend pulling back on 1m
    "XRP": ("trend", -0.16, 0.30, 150, -0.22, "follow"),
    "DOGE": ("trend", -0.22, 0.45, 130, -0.30, "follow"),
    "ADA": ("trend", -0.14, 0.28, 170, -0.18, "band"),
    "NEAR": ("trend", -0.20, 0.40, 120, -0.25, "follow"),
    "BNB": ("range", 0.0, 0.30, 220, None, "band"),
    "LTC": ("range", 0.0, 0.35, 200, None, "band"),
    "TRX": ("range", 0.0, 0.15, 240, None, "band"),
    "DOT": ("range", 0.0, 0.40, 180, None, "band"),
    "TON": ("range", 0.0, 0.35, 210, None, "band"),
    "AVAX": ("range", 0.0, 0.35, 200, 0.35, "follow"),  # a range breaking out on 1m
    "SUI": ("volatile", 0.0, 0.45, 24, None, "wild"),
    "PAXG": ("range", 0.0, 0.06, 240, None, "band"),
    "XAUT": ("range", 0.0, 0.06, 240, None, "band"),
}
THETA = 0.18  # mean reversion per bar of the bands
NEWEST = 5  # the 1h bars the 1m bars cover


class ShapePath:
    """A base's relative closes (the newest is 1.0) on 1h and 1m, and their noise."""

    def __init__(self, closes_1h: list[float], closes_1m: list[float], noise_1h: float, noise_1m: float):
        self.closes_1h, self.closes_1m = closes_1h, closes_1m
        self.noise_1h, self.noise_1m = noise_1h, noise_1m


_PATHS: dict[str, ShapePath] = {}


def shape_path(base: str) -> ShapePath:
    if base not in _PATHS:
        _PATHS[base] = _shape_path(base)
    return _PATHS[base]


def _shape_path(base: str) -> ShapePath:
    kind, drift, noise, bars, newest, minute_shape = SHAPES[base]
    rng = random.Random(f"path:{base}")
    x = [0.0]
    level = 0.0
    n = CANDLES["1h"]
    for i in range(1, n):
        k = n - i  # bars from the end
        g = rng.gauss(0, 1)
        if k <= NEWEST and newest is not None:
            step = newest + noise * 0.25 * g
        elif kind == "trend":
            step = drift + noise * g if k <= bars else -THETA * (x[-1] - level) * 100 + noise * g
        elif kind == "range":
            if k <= bars:
                step = -THETA * (x[-1] - level) * 100 + noise * (0.8 if k <= 24 else 1.0) * g
            else:
                step = 0.15 + noise * 1.2 * g  # an older rise that ended in the range
                level = x[-1] + step / 100
        else:
            step = -0.5 * (x[-1] - level) * 100 + noise * (4.0 if k <= bars else 1.0) * g
        x.append(x[-1] + step / 100)
    # The 1m bars: the newest NEWEST hours, minute by minute, through the 1h closes.
    # Per minute, relative to the hourly noise: a clean trend, a choppy band, a wild tape.
    noise_1m = noise * {"follow": 0.025, "band": 0.08, "wild": 0.3}[minute_shape]
    minutes: list[float] = []
    for h in range(NEWEST):
        a, b = x[n - 1 - NEWEST + h], x[n - NEWEST + h]
        walk = [0.0]
        for _ in range(MINUTES_PER_HOUR):
            walk.append(walk[-1] + rng.gauss(0, noise_1m) / 100)
        for j in range(1, MINUTES_PER_HOUR + 1):
            frac = j / MINUTES_PER_HOUR
            bridge = walk[j] - frac * walk[-1]  # zero at both ends: the 1h closes hold
            minutes.append(a + frac * (b - a) + bridge)
    end = x[-1]
    return ShapePath(
        closes_1h=[math.exp(v - end) for v in x],
        closes_1m=[math.exp(v - end) for v in minutes[-CANDLES["1m"] :]],
        noise_1h=noise / 100,
        noise_1m=noise_1m / 100,
    )
