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
from catalog.models import CalendarEvent, Candle, ExchangeMarket, FundingRate

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


# --- desks (grid range, broker scalp, decision pack) ---------------------------------------------


def plunge(shape: Shape, at: int, depth: float, over: int = 3) -> Shape:
    """`shape` until bar `at`, then a fall of `depth` (0.01 = 1 %) spread over `over` bars,
    held after: an oversold flush (on a band) or a pullback (on a rise)."""
    return lambda i: shape(i) if i < at else shape(at) * (1 - depth * min(1.0, (i - at + 1) / over))


def funding_write(
    *,
    exchange: str,
    symbol: str,
    rate: float,
    period_hours: float = 8.0,
    readings: int = 2,
    replay: bool = False,
) -> list[FundingRate]:
    """`readings` funding readings of one perpetual `period_hours` apart, the newest for the
    next funding time, all at `rate`, observed now (as the exchanges feed writes them)."""
    now = timezone.now()
    period = timedelta(hours=period_hours)
    nxt = now.replace(minute=0, second=0, microsecond=0) + period
    return [
        FundingRate.objects.create(
            exchange=exchange,
            symbol=symbol,
            rate=Decimal(str(rate)),
            funding_at=nxt - period * k,
            next_funding_at=nxt - period * (k - 1),
            replay=replay,
            observed_at=now,
        )
        for k in range(readings)
    ]


def calendar_write(
    *, title: str, in_hours: float, impact: str = "high", source: str = "manual", country: str = "US"
) -> CalendarEvent:
    """A calendar event starting `in_hours` from now (negative: already started)."""
    return CalendarEvent.objects.create(
        title=title,
        source=source,
        country=country,
        category="rates",
        impact=impact,
        starts_at=timezone.now() + timedelta(hours=in_hours),
    )


def desks_market_write(symbol: str = "BTC/USDT", exchange: str = "binance") -> None:
    """What the grid desk, the scalp desk and the decision pack need for one symbol: a 1h band
    (a range), 1m candles, a deep ticker with a tight book. Writes only what is missing, so it
    sits beside other builders that write the same symbol."""
    mid = 100.0
    if not Candle.objects.filter(symbol=symbol, timeframe="1h").exists():
        candles_write(symbol=symbol, exchange=exchange, shape=band(mid=mid), timeframe="1h", bars=200)
    if not Candle.objects.filter(symbol=symbol, timeframe="1m").exists():
        candles_write(
            symbol=symbol,
            exchange=exchange,
            shape=band(mid=mid, amplitude=0.003, period=30),
            timeframe="1m",
            bars=150,
            noise=0.0005,
        )
    if not ExchangeMarket.objects.filter(exchange=exchange, symbol=symbol).exists():
        market_write(
            exchange=exchange,
            symbol=symbol,
            bid=mid * 0.99995,
            ask=mid * 1.00005,
            volume_24h_usd=50_000_000.0,
            size=500.0,
        )
