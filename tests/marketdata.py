"""Generated market data for the product tests: candle series with a known shape (a steady
rise, a steady fall, a band), tickers and books with a known gap, written as the feeds would
write them. Each product's test builds exactly the market it checks its numbers against.
Add generators here (append) rather than in a test, so other products' tests can reuse them."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.analytics.series import timeframe_delta
from catalog.models import Candle, ExchangeMarket

Shape = Callable[[int], float]


def rising(start: float = 100.0, step: float = 0.004) -> Shape:
    return lambda i: start * (1 + step) ** i


def falling(start: float = 100.0, step: float = 0.004) -> Shape:
    return lambda i: start * (1 - step) ** i


def band(mid: float = 100.0, amplitude: float = 0.03, period: float = 19.0) -> Shape:
    return lambda i: mid * (1 + amplitude * math.sin(2 * math.pi * i / period))


def candles_write(
    *,
    symbol: str,
    shape: Shape,
    exchange: str = "binance",
    timeframe: str = "1h",
    bars: int = 200,
    end: datetime | None = None,
    noise: float = 0.002,
    volume: float = 1000.0,
    seed: int = 1,
    replay: bool = False,
) -> list[Candle]:
    """`bars` candles whose closes follow `shape(i)` (times a little noise), the newest closing
    at `end` (default now), as the exchanges feed writes them."""
    step = timeframe_delta(timeframe)
    end = end or timezone.now()
    first_open = end - step * bars
    rnd = random.Random(seed)
    rows = []
    prev = shape(0)
    for i in range(bars):
        close = shape(i) * (1 + rnd.uniform(-noise, noise))
        high = max(prev, close) * (1 + noise)
        low = min(prev, close) * (1 - noise)
        rows.append(
            Candle(
                exchange=exchange,
                symbol=symbol,
                timeframe=timeframe,
                open_time=first_open + step * i,
                open=Decimal(str(round(prev, 8))),
                high=Decimal(str(round(high, 8))),
                low=Decimal(str(round(low, 8))),
                close=Decimal(str(round(close, 8))),
                volume=Decimal(str(volume)),
                replay=replay,
                observed_at=end,
            )
        )
        prev = close
    return Candle.objects.bulk_create(rows)


def market_write(
    *,
    exchange: str,
    symbol: str,
    bid: float,
    ask: float,
    volume_24h_usd: float = 5_000_000.0,
    size: float = 10.0,
    replay: bool = False,
) -> ExchangeMarket:
    """A ticker with its book top, as the exchanges feed writes it."""
    base, quote = symbol.split("/")
    mid = (bid + ask) / 2
    return ExchangeMarket.objects.create(
        exchange=exchange,
        symbol=symbol,
        base=base,
        quote=quote.split(":")[0],
        last_price=Decimal(str(mid)),
        bid=Decimal(str(bid)),
        ask=Decimal(str(ask)),
        bid_size=Decimal(str(size)),
        ask_size=Decimal(str(size)),
        spread_bps=Decimal(str(round((ask - bid) / mid * 10_000, 3))),
        volume_24h_usd=Decimal(str(volume_24h_usd)),
        volume_24h_base=Decimal(str(volume_24h_usd / mid)),
        source="exchanges",
        replay=replay,
        updated_at=timezone.now(),
    )


def minutes_ago(n: float) -> datetime:
    return timezone.now() - timedelta(minutes=n)


# --- signals and regimes (catalog/analytics/signals.py, catalog/intel.py) -----------------------


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
    from catalog.intel import intel_compute

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
