"""Writes the replay samples of the exchange feed (catalog/feeds/samples/exchange_<id>/), a
developer's tool run as a script:
`python catalog/feeds/exchanges/make_samples.py` (it imports neither Django nor the package).

Each file is a venue's REST answer in that venue's own format (the shapes of its API docs and
of ccxt's parsers), at the path catalog.feeds.exchanges.client.sample_path gives for the URL
ccxt requests. The values are synthetic but consistent: one price per base, 300 1h and 300 1m
candles per market following a designed shape (SHAPES: up-trends, down-trends, bands, one
volatile market; the same path on every venue, ending at each venue's ticker price; the 1m bars
run through the newest 1h closes), bid/ask around the price, a funding rate per perpetual.
The shapes are what the local stack's signals and regimes show. Nothing here is imported by
the service."""

from __future__ import annotations

import json
import math
import random
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
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


# --- candle paths ---------------------------------------------------------------------------
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


def write(venue: str, path: str, data: Any) -> None:
    target = SAMPLES / f"exchange_{venue}" / f"{path}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, separators=(",", ":")) + "\n")


# --- binance ------------------------------------------------------------------------------


def binance() -> None:
    v = "binance"
    books = {b: Book(v, b) for b in SPOT[v]}
    spot_symbols = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot_symbols.append(
            {
                "symbol": f"{b}USDT",
                "status": "TRADING",
                "baseAsset": b,
                "baseAssetPrecision": 8,
                "quoteAsset": "USDT",
                "quotePrecision": 8,
                "quoteAssetPrecision": 8,
                "baseCommissionPrecision": 8,
                "quoteCommissionPrecision": 8,
                "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS_LIMIT", "TAKE_PROFIT_LIMIT"],
                "icebergAllowed": True,
                "ocoAllowed": True,
                "otoAllowed": True,
                "quoteOrderQtyMarketAllowed": True,
                "allowTrailingStop": True,
                "cancelReplaceAllowed": True,
                "isSpotTradingAllowed": True,
                "isMarginTradingAllowed": True,
                "filters": [
                    {
                        "filterType": "PRICE_FILTER",
                        "minPrice": tick,
                        "maxPrice": "1000000.00000000",
                        "tickSize": tick,
                    },
                    {
                        "filterType": "LOT_SIZE",
                        "minQty": "0.00001000",
                        "maxQty": "9000.00000000",
                        "stepSize": "0.00001000",
                    },
                    {
                        "filterType": "NOTIONAL",
                        "minNotional": "5.00000000",
                        "applyMinToMarket": True,
                        "maxNotional": "9000000.00000000",
                        "applyMaxToMarket": False,
                        "avgPriceMins": 5,
                    },
                ],
                "permissions": [],
                "permissionSets": [["SPOT", "MARGIN"]],
                "defaultSelfTradePreventionMode": "EXPIRE_MAKER",
                "allowedSelfTradePreventionModes": ["EXPIRE_TAKER", "EXPIRE_MAKER", "EXPIRE_BOTH"],
            }
        )
    write(
        v,
        "api/v3/exchangeInfo",
        {
            "timezone": "UTC",
            "serverTime": NOW_MS,
            "rateLimits": [],
            "exchangeFilters": [],
            "symbols": spot_symbols,
        },
    )
    perp_symbols = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        perp_symbols.append(
            {
                "symbol": f"{b}USDT",
                "pair": f"{b}USDT",
                "contractType": "PERPETUAL",
                "deliveryDate": 4133404800000,
                "onboardDate": 1569398400000,
                "status": "TRADING",
                "maintMarginPercent": "2.5000",
                "requiredMarginPercent": "5.0000",
                "baseAsset": b,
                "quoteAsset": "USDT",
                "marginAsset": "USDT",
                "pricePrecision": book.places,
                "quantityPrecision": 3,
                "baseAssetPrecision": 8,
                "quotePrecision": 8,
                "underlyingType": "COIN",
                "underlyingSubType": ["Layer-1"],
                "triggerProtect": "0.0500",
                "liquidationFee": "0.012500",
                "marketTakeBound": "0.05",
                "maxMoveOrderLimit": 10000,
                "filters": [
                    {"filterType": "PRICE_FILTER", "minPrice": tick, "maxPrice": "4529764", "tickSize": tick},
                    {"filterType": "LOT_SIZE", "minQty": "0.001", "maxQty": "1000", "stepSize": "0.001"},
                    {
                        "filterType": "MARKET_LOT_SIZE",
                        "minQty": "0.001",
                        "maxQty": "120",
                        "stepSize": "0.001",
                    },
                    {"filterType": "MAX_NUM_ORDERS", "limit": 200},
                    {"filterType": "MIN_NOTIONAL", "notional": "100"},
                    {
                        "filterType": "PERCENT_PRICE",
                        "multiplierUp": "1.0500",
                        "multiplierDown": "0.9500",
                        "multiplierDecimal": "4",
                    },
                ],
                "orderTypes": [
                    "LIMIT",
                    "MARKET",
                    "STOP",
                    "STOP_MARKET",
                    "TAKE_PROFIT",
                    "TAKE_PROFIT_MARKET",
                    "TRAILING_STOP_MARKET",
                ],
                "timeInForce": ["GTC", "IOC", "FOK", "GTX", "GTD"],
                "permissionSets": ["GRID", "COPY"],
            }
        )
    write(
        v,
        "fapi/v1/exchangeInfo",
        {
            "timezone": "UTC",
            "serverTime": NOW_MS,
            "futuresType": "U_MARGINED",
            "rateLimits": [],
            "exchangeFilters": [],
            "assets": [],
            "symbols": perp_symbols,
        },
    )
    tickers = []
    for b, book in books.items():
        p = book.places
        change = book.last - book.open
        tickers.append(
            {
                "symbol": f"{b}USDT",
                "priceChange": fmt(change, p),
                "priceChangePercent": f"{change / book.open * 100:.3f}",
                "weightedAvgPrice": fmt((book.last + book.open) / 2, p),
                "prevClosePrice": fmt(book.open, p),
                "lastPrice": fmt(book.last, p),
                "lastQty": "0.01200000",
                "bidPrice": fmt(book.bid, p),
                "bidQty": f"{book.bid_size:.8f}",
                "askPrice": fmt(book.ask, p),
                "askQty": f"{book.ask_size:.8f}",
                "openPrice": fmt(book.open, p),
                "highPrice": fmt(book.high, p),
                "lowPrice": fmt(book.low, p),
                "volume": f"{book.volume:.8f}",
                "quoteVolume": f"{book.quote_volume:.8f}",
                "openTime": NOW_MS - 86_400_000,
                "closeTime": NOW_MS - 1,
                "firstId": 4100000000,
                "lastId": 4101234567,
                "count": 1234568,
            }
        )
    write(v, "api/v3/ticker/24hr", tickers)
    for b, book in books.items():
        for tf, step, count in (("1m", MINUTE, CANDLES["1m"]), ("1h", HOUR, CANDLES["1h"])):
            rows = [
                [t, o, h, lo, c, vol, t + step - 1, f"{Decimal(vol) * Decimal(c):.8f}", 1000, "0", "0", "0"]
                for t, o, h, lo, c, vol in book.candles(step, count)
            ]
            write(v, f"api/v3/klines/interval={tf},symbol={b}USDT", rows)
    premium = []
    for b in PERPS[v]:
        book = books[b]
        premium.append(
            {
                "symbol": f"{b}USDT",
                "markPrice": fmt(book.last, book.places),
                "indexPrice": fmt(book.last, book.places),
                "estimatedSettlePrice": fmt(book.last, book.places),
                "lastFundingRate": FUNDING[v],
                "interestRate": "0.00010000",
                "nextFundingTime": NOW_MS + 4 * HOUR,
                "time": NOW_MS,
            }
        )
    write(v, "fapi/v1/premiumIndex", premium)


# --- okx ----------------------------------------------------------------------------------


def okx_envelope(data: list[Any]) -> dict[str, Any]:
    return {"code": "0", "msg": "", "data": data}


def okx() -> None:
    v = "okx"
    books = {b: Book(v, b) for b in SPOT[v]}
    blank = {
        "alias": "",
        "ctMult": "",
        "ctType": "",
        "ctVal": "",
        "ctValCcy": "",
        "expTime": "",
        "instFamily": "",
        "optType": "",
        "settleCcy": "",
        "stk": "",
        "uly": "",
        "ruleType": "normal",
    }
    spot = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot.append(
            {
                **blank,
                "baseCcy": b,
                "quoteCcy": "USDT",
                "category": "1",
                "instId": f"{b}-USDT",
                "instType": "SPOT",
                "lever": "10",
                "listTime": "1606468572000",
                "lotSz": "0.00000001",
                "maxIcebergSz": "9999999999.0000000000000000",
                "maxLmtAmt": "20000000",
                "maxLmtSz": "9999999999",
                "maxMktAmt": "1000000",
                "maxMktSz": "1000000",
                "maxStopSz": "1000000",
                "maxTriggerSz": "9999999999.0000000000000000",
                "maxTwapSz": "9999999999.0000000000000000",
                "minSz": "0.00001",
                "state": "live",
                "tickSz": tick,
            }
        )
    write(v, "api/v5/public/instruments/instType=SPOT", okx_envelope(spot))
    swaps = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        swaps.append(
            {
                **blank,
                "baseCcy": "",
                "quoteCcy": "",
                "category": "1",
                "ctMult": "1",
                "ctType": "linear",
                "ctVal": "0.01" if b in ("BTC", "ETH") else "1",
                "ctValCcy": b,
                "instFamily": f"{b}-USDT",
                "instId": f"{b}-USDT-SWAP",
                "instType": "SWAP",
                "lever": "100",
                "listTime": "1573557408000",
                "lotSz": "0.01",
                "maxIcebergSz": "100000000.0000000000000000",
                "maxLmtAmt": "20000000",
                "maxLmtSz": "100000000",
                "maxMktAmt": "",
                "maxMktSz": "12000",
                "maxStopSz": "12000",
                "maxTriggerSz": "100000000.0000000000000000",
                "maxTwapSz": "100000000.0000000000000000",
                "minSz": "0.01",
                "settleCcy": "USDT",
                "state": "live",
                "tickSz": tick,
                "uly": f"{b}-USDT",
            }
        )
    write(v, "api/v5/public/instruments/instType=SWAP", okx_envelope(swaps))
    tickers = []
    for b, book in books.items():
        p = book.places
        tickers.append(
            {
                "instType": "SPOT",
                "instId": f"{b}-USDT",
                "last": fmt(book.last, p),
                "lastSz": "0.0182",
                "askPx": fmt(book.ask, p),
                "askSz": f"{book.ask_size}",
                "bidPx": fmt(book.bid, p),
                "bidSz": f"{book.bid_size}",
                "open24h": fmt(book.open, p),
                "high24h": fmt(book.high, p),
                "low24h": fmt(book.low, p),
                "volCcy24h": f"{book.quote_volume}",
                "vol24h": f"{book.volume}",
                "ts": str(NOW_MS),
                "sodUtc0": fmt(book.open, p),
                "sodUtc8": fmt(book.open, p),
            }
        )
    write(v, "api/v5/market/tickers/instType=SPOT", okx_envelope(tickers))
    for b, book in books.items():
        for tf, step, count in (("1m", MINUTE, CANDLES["1m"]), ("1H", HOUR, CANDLES["1h"])):
            rows = [
                [
                    str(t),
                    o,
                    h,
                    lo,
                    c,
                    vol,
                    f"{Decimal(vol) * Decimal(c):.4f}",
                    f"{Decimal(vol) * Decimal(c):.4f}",
                    "0" if i == count - 1 else "1",
                ]
                for i, (t, o, h, lo, c, vol) in enumerate(book.candles(step, count))
            ]
            rows.reverse()  # okx answers newest first
            write(v, f"api/v5/market/candles/bar={tf},instId={b}-USDT", okx_envelope(rows))
    rates = []
    for b in PERPS[v]:
        rates.append(
            {
                "formulaType": "withRate",
                "fundingRate": FUNDING[v],
                "fundingTime": str(NOW_MS + 4 * HOUR),
                "impactValue": "20000",
                "instId": f"{b}-USDT-SWAP",
                "instType": "SWAP",
                "interestRate": "0.0001",
                "maxFundingRate": "0.00375",
                "method": "current_period",
                "minFundingRate": "-0.00375",
                "nextFundingRate": "",
                "nextFundingTime": str(NOW_MS + 12 * HOUR),
                "premium": "0.0000412",
                "settFundingRate": "0.0000951",
                "settState": "settled",
                "ts": str(NOW_MS),
            }
        )
    write(v, "api/v5/public/funding-rate/instId=ANY", okx_envelope(rates))


# --- bybit --------------------------------------------------------------------------------


def bybit_envelope(result: dict[str, Any]) -> dict[str, Any]:
    return {"retCode": 0, "retMsg": "OK", "result": result, "retExtInfo": {}, "time": NOW_MS}


def bybit() -> None:
    v = "bybit"
    books = {b: Book(v, b) for b in SPOT[v]}
    spot = []
    for b, book in books.items():
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        spot.append(
            {
                "symbol": f"{b}USDT",
                "baseCoin": b,
                "quoteCoin": "USDT",
                "innovation": "0",
                "status": "Trading",
                "marginTrading": "utaOnly",
                "stTag": "0",
                "lotSizeFilter": {
                    "basePrecision": "0.000001",
                    "quotePrecision": "0.00000001",
                    "minOrderQty": "0.000048",
                    "maxOrderQty": "71.73956243",
                    "minOrderAmt": "1",
                    "maxOrderAmt": "2000000",
                },
                "priceFilter": {"tickSize": tick},
                "riskParameters": {"priceLimitRatioX": "0.01", "priceLimitRatioY": "0.02"},
            }
        )
    write(
        v,
        "v5/market/instruments-info/category=spot",
        bybit_envelope({"category": "spot", "list": spot, "nextPageCursor": ""}),
    )
    linear = []
    for b in PERPS[v]:
        book = books[b]
        tick = fmt(Decimal(1).scaleb(-book.places), book.places)
        linear.append(
            {
                "symbol": f"{b}USDT",
                "contractType": "LinearPerpetual",
                "status": "Trading",
                "baseCoin": b,
                "quoteCoin": "USDT",
                "launchTime": "1585526400000",
                "deliveryTime": "0",
                "deliveryFeeRate": "",
                "priceScale": str(book.places),
                "leverageFilter": {"minLeverage": "1", "maxLeverage": "100.00", "leverageStep": "0.01"},
                "priceFilter": {"minPrice": tick, "maxPrice": "1999999.80", "tickSize": tick},
                "lotSizeFilter": {
                    "maxOrderQty": "1190.000",
                    "minOrderQty": "0.001",
                    "qtyStep": "0.001",
                    "postOnlyMaxOrderQty": "1190.000",
                    "maxMktOrderQty": "119.000",
                    "minNotionalValue": "5",
                },
                "unifiedMarginTrade": True,
                "fundingInterval": 480,
                "settleCoin": "USDT",
                "copyTrading": "both",
                "upperFundingRate": "0.00375",
                "lowerFundingRate": "-0.00375",
                "isPreListing": False,
                "preListingInfo": None,
            }
        )
    write(
        v,
        "v5/market/instruments-info/category=linear",
        bybit_envelope({"category": "linear", "list": linear, "nextPageCursor": ""}),
    )
    # ccxt also asks for the pre-launch perpetuals (none listed here).
    write(
        v,
        "v5/market/instruments-info/category=linear,status=PreLaunch",
        bybit_envelope({"category": "linear", "list": [], "nextPageCursor": ""}),
    )
    tickers = []
    for b, book in books.items():
        p = book.places
        tickers.append(
            {
                "symbol": f"{b}USDT",
                "bid1Price": fmt(book.bid, p),
                "bid1Size": f"{book.bid_size}",
                "ask1Price": fmt(book.ask, p),
                "ask1Size": f"{book.ask_size}",
                "lastPrice": fmt(book.last, p),
                "prevPrice24h": fmt(book.open, p),
                "price24hPcnt": f"{(book.last - book.open) / book.open:.4f}",
                "highPrice24h": fmt(book.high, p),
                "lowPrice24h": fmt(book.low, p),
                "turnover24h": f"{book.quote_volume}",
                "volume24h": f"{book.volume}",
                "usdIndexPrice": fmt(book.last, p),
            }
        )
    write(v, "v5/market/tickers/category=spot", bybit_envelope({"category": "spot", "list": tickers}))
    perps = []
    for b in PERPS[v]:
        book = books[b]
        p = book.places
        perps.append(
            {
                "symbol": f"{b}USDT",
                "lastPrice": fmt(book.last, p),
                "indexPrice": fmt(book.last, p),
                "markPrice": fmt(book.last, p),
                "prevPrice24h": fmt(book.open, p),
                "price24hPcnt": f"{(book.last - book.open) / book.open:.4f}",
                "highPrice24h": fmt(book.high, p),
                "lowPrice24h": fmt(book.low, p),
                "prevPrice1h": fmt(book.last, p),
                "openInterest": f"{book.volume / 10:.3f}",
                "openInterestValue": f"{book.quote_volume / 10:.2f}",
                "turnover24h": f"{book.quote_volume}",
                "volume24h": f"{book.volume}",
                "fundingRate": FUNDING[v],
                "nextFundingTime": str(NOW_MS + 4 * HOUR),
                "predictedDeliveryPrice": "",
                "basisRate": "",
                "deliveryFeeRate": "",
                "deliveryTime": "0",
                "ask1Size": f"{book.ask_size}",
                "bid1Price": fmt(book.bid, p),
                "ask1Price": fmt(book.ask, p),
                "bid1Size": f"{book.bid_size}",
                "basis": "",
                "fundingIntervalHour": "8",
                "fundingCap": "0.00375",
            }
        )
    write(v, "v5/market/tickers/category=linear", bybit_envelope({"category": "linear", "list": perps}))
    for b, book in books.items():
        for interval, step, count in (("1", MINUTE, CANDLES["1m"]), ("60", HOUR, CANDLES["1h"])):
            rows = [
                [str(t), o, h, lo, c, vol, f"{Decimal(vol) * Decimal(c):.4f}"]
                for t, o, h, lo, c, vol in book.candles(step, count)
            ]
            rows.reverse()  # bybit answers newest first
            write(
                v,
                f"v5/market/kline/category=spot,interval={interval},symbol={b}USDT",
                bybit_envelope({"symbol": f"{b}USDT", "category": "spot", "list": rows}),
            )


# --- order books ------------------------------------------------------------------------


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


def main() -> None:
    for venue in SPOT:
        shutil.rmtree(SAMPLES / f"exchange_{venue}", ignore_errors=True)
    binance()
    okx()
    bybit()
    for venue in SPOT:
        books(venue)


if __name__ == "__main__":
    main()
