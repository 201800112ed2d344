"""Generated markets for the signals, the regimes and the desks' track record
(catalog/analytics/signals.py, catalog/editorial/intel.py): trends and ranges on the 1h and 1m
timeframes, bars still open, the token markets of the tokenized products."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.analytics.series import timeframe_delta
from catalog.models import Candle
from tests.support.marketdata.markets import Shape, band, candles_write, falling, market_write, plunge, rising

# --- signals and regimes (catalog/analytics/signals.py, catalog/editorial/intel.py) -----------------------


def rising_1m(start: float = 100.0) -> Shape:
    """A steady minute-by-minute rise (0.05 % a bar): a 1m up-trend under the noise given."""
    return rising(start, 0.0005)


def falling_1m(start: float = 100.0) -> Shape:
    return falling(start, 0.0005)


def band_1m(mid: float = 100.0) -> Shape:
    return band(mid, amplitude=0.004, period=23.0)


def trend_market_write(
    *,
    symbol: str,
    shape_1h: Shape,
    shape_1m: Shape,
    exchange: str = "binance",
    bars_1h: int = 200,
    bars_1m: int = 120,
    end: datetime | None = None,
    noise_1h: float = 0.002,
    noise_1m: float = 0.0003,
    replay: bool = False,
) -> None:
    """A symbol's 1h and 1m candles, both ending at `end` (default now): what a signal reads.
    The 1m series is scaled to end where the 1h one ends, so entries sit on the hour's price."""
    end = end or timezone.now()
    last_1h = shape_1h(bars_1h - 1)
    scale = last_1h / shape_1m(bars_1m - 1)
    candles_write(
        symbol=symbol,
        shape=shape_1h,
        exchange=exchange,
        timeframe="1h",
        bars=bars_1h,
        end=end,
        noise=noise_1h,
        replay=replay,
    )
    candles_write(
        symbol=symbol,
        shape=lambda i: shape_1m(i) * scale,
        exchange=exchange,
        timeframe="1m",
        bars=bars_1m,
        end=end,
        noise=noise_1m,
        seed=2,
        replay=replay,
    )


def signals_market_write(*, end: datetime | None = None, replay: bool = False) -> None:
    """The majors rising (a risk-on market), SOL falling, XRP in a band, on binance."""
    trend_market_write(
        symbol="BTC/USDT", shape_1h=rising(60000.0), shape_1m=rising_1m(), end=end, replay=replay
    )
    trend_market_write(
        symbol="ETH/USDT", shape_1h=rising(3000.0), shape_1m=rising_1m(), end=end, replay=replay
    )
    trend_market_write(
        symbol="SOL/USDT", shape_1h=falling(200.0), shape_1m=falling_1m(), end=end, replay=replay
    )
    trend_market_write(symbol="XRP/USDT", shape_1h=band(1.0), shape_1m=band_1m(), end=end, replay=replay)


def signals_shop_write() -> None:
    """Data for every product of the signals family: the market above and one analytics pass
    (regime snapshot, desk signals, intel snapshot)."""
    from catalog.editorial.intel import intel_compute

    signals_market_write()
    intel_compute()


def bars_write(
    *,
    symbol: str,
    bars: list[tuple[float, float, float, float]],
    start: datetime,
    exchange: str = "binance",
    timeframe: str = "1m",
) -> list[Candle]:
    """Bars given as (open, high, low, close), the first opening at `start`: a price path a test
    closes signals on."""
    step = timeframe_delta(timeframe)
    return Candle.objects.bulk_create(
        Candle(
            exchange=exchange,
            symbol=symbol,
            timeframe=timeframe,
            open_time=start + step * i,
            open=Decimal(str(o)),
            high=Decimal(str(h)),
            low=Decimal(str(lo)),
            close=Decimal(str(c)),
            volume=Decimal("1"),
            observed_at=start + step * (i + 1),
        )
        for i, (o, h, lo, c) in enumerate(bars)
    )


def prediction_graph_write(*, now: datetime | None = None, age: timedelta = timedelta(0)) -> dict:
    """Four open prediction markets as the feeds write them (observed `age` ago), with hourly
    yes-price history: two Bitcoin-$100k markets on two venues whose moves are proportional
    (correlation 1; entities {bitcoin, $100000} and {bitcoin, $100000, coinbase}: Jaccard 2/3),
    a Fed market with one 24 h move, and a Super Bowl market without history. 24 h moves x
    liquidity: polymarket BTC 0.15 x 50k = 7500, Fed -0.05 x 100k = 5000, Kalshi BTC 0.225 x 20k = 4500."""
    from catalog.models import PredictionMarket, PredictionPrice

    now = (now or timezone.now()) - age
    hours = [25, 5, 4, 3, 2, 1, 0]  # readings this many hours before now
    specs = [
        ("polymarket", "pm-btc-100k", "Will Bitcoin reach $100k by December 31?", "crypto",
         [0.25, 0.30, 0.32, 0.31, 0.35, 0.38, 0.40], 500_000, 50_000, 10),
        ("kalshi", "KXBTC-100K", "Bitcoin above $100,000 on Dec 31 per Coinbase?", "Crypto",
         [0.275, 0.35, 0.38, 0.365, 0.425, 0.47, 0.50], 200_000, 20_000, 12),
        ("kalshi", "KXFED-CUT", "Will the Fed cut rates by 25 bps in March?", "economics",
         [0.60, None, None, None, None, None, 0.55], 300_000, 100_000, 3),
        ("polymarket", "pm-super-bowl", "Who will win the Super Bowl?", "sports",
         [None, None, None, None, None, None, 0.20], 100_000, 5_000, 20),
    ]  # fmt: skip
    out = {}
    for venue, ext, question, category, path, volume, liquidity, days in specs:
        market = PredictionMarket.objects.create(
            venue=venue,
            external_id=ext,
            question=question,
            category=category,
            event_id=ext.split("-")[0],
            outcomes=["Yes", "No"],
            yes_price=Decimal(str(path[-1])),
            volume_usd=Decimal(volume),
            liquidity_usd=Decimal(liquidity),
            closes_at=now + timedelta(days=days),
            url=f"https://example.com/{ext}",
            source=venue,
            observed_at=now,
            updated_at=now,
        )
        for h, price in zip(hours, path, strict=True):
            if price is not None and len([p for p in path if p is not None]) > 1:
                PredictionPrice.objects.create(
                    market=market, yes_price=Decimal(str(price)), observed_at=now - timedelta(hours=h)
                )
        out[ext] = market
    return out


def tokenized_candles_write(*, end: datetime | None = None) -> None:
    """Candles of the tokens of tokenized_market_write on their bybit listings, ending at their
    prices: AAPLX/USDT rising (1h and 1m), TSLAX/USDT falling, PAXG/USDT a 1h range whose 1m
    band flushes 0.6 % into its last bar (an oversold touch of the lower band)."""
    bars = 200
    trend_market_write(
        symbol="AAPLX/USDT",
        exchange="bybit",
        shape_1h=rising(204.0 / 1.004 ** (bars - 1)),
        shape_1m=rising_1m(),
        end=end,
    )
    trend_market_write(
        symbol="TSLAX/USDT",
        exchange="bybit",
        shape_1h=falling(297.0 / 0.996 ** (bars - 1)),
        shape_1m=falling_1m(),
        end=end,
    )
    candles_write(symbol="PAXG/USDT", exchange="bybit", shape=band(mid=2650.0), bars=bars, end=end)
    candles_write(
        symbol="PAXG/USDT",
        exchange="bybit",
        timeframe="1m",
        shape=plunge(band(mid=2650.0, amplitude=0.003, period=30), at=147, depth=0.006),
        bars=150,
        noise=0.0005,
        end=end,
    )


def open_bars_market_write(
    symbol: str = "BTC/USDT", *, now: datetime, observed_ago: timedelta = timedelta(seconds=10)
) -> datetime:
    """A symbol whose newest 1h and 1m bars are still open, as the exchanges feed leaves them
    between passes: 1h bars in a band (a range) the newest opened 11 minutes before `now` (it
    closes 49 minutes after), 1m bars the newest opened 40 s before `now`, all last observed
    `observed_ago` before `now`; and a deep ticker. Returns the observation time."""
    observed = now - observed_ago
    candles_write(
        symbol=symbol,
        shape=band(mid=100.0),
        timeframe="1h",
        bars=200,
        end=now + timedelta(minutes=49),
        observed_at=observed,
    )
    candles_write(
        symbol=symbol,
        shape=band(mid=100.0, amplitude=0.003, period=30),
        timeframe="1m",
        bars=150,
        end=now + timedelta(seconds=20),
        noise=0.0005,
        observed_at=observed,
    )
    market_write(exchange="binance", symbol=symbol, bid=99.995, ask=100.005, volume_24h_usd=50_000_000.0)
    return observed
