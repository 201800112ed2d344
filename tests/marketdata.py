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


# --- books, funding, yields (execution products) --------------------------------------------


def ladder(top: float, *, side: str, levels: int = 10, step_bps: float = 1.0, size: float = 1.0) -> list:
    """`levels` price levels from `top` outward (bids down, asks up), `step_bps` apart, each of
    `size` base units: [(price, size), ...] best first."""
    sign = -1 if side == "bid" else 1
    return [(top * (1 + sign * step_bps * k / 10_000), size) for k in range(levels)]


def book_write(
    *,
    exchange: str,
    symbol: str,
    bids: list,
    asks: list,
    replay: bool = False,
    at: datetime | None = None,
    volume_24h_usd: float = 5_000_000.0,
):
    """A venue's order book and its ticker (the book's top), as the exchanges feed writes them;
    an existing row of the venue and symbol is replaced."""
    from catalog.models import OrderBook

    at = at or timezone.now()
    base, quote = symbol.split("/")
    (bid, bid_size), (ask, ask_size) = bids[0], asks[0]
    mid = (bid + ask) / 2
    ExchangeMarket.objects.update_or_create(
        exchange=exchange,
        symbol=symbol,
        defaults={
            "base": base,
            "quote": quote,
            "last_price": Decimal(str(mid)),
            "bid": Decimal(str(bid)),
            "ask": Decimal(str(ask)),
            "bid_size": Decimal(str(bid_size)),
            "ask_size": Decimal(str(ask_size)),
            "spread_bps": Decimal(str(round((ask - bid) / mid * 10_000, 3))),
            "volume_24h_usd": Decimal(str(volume_24h_usd)),
            "volume_24h_base": Decimal(str(round(volume_24h_usd / mid, 8))),
            "source": "exchanges",
            "replay": replay,
            "updated_at": at,
        },
    )
    book, _ = OrderBook.objects.update_or_create(
        exchange=exchange,
        symbol=symbol,
        defaults={
            "bids": [[str(p), str(s)] for p, s in bids],
            "asks": [[str(p), str(s)] for p, s in asks],
            "depth": max(len(bids), len(asks)),
            "book_at": at,
            "replay": replay,
            "observed_at": at,
        },
    )
    return book


def funding_write(
    *, exchange: str, symbol: str, rate: float, hours: float = 8.0, mark: float | None = None, at=None
):
    """A perpetual's current funding reading (`symbol` like "BTC/USDT:USDT")."""
    from catalog.models import FundingRate

    at = at or timezone.now()
    due = at.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return FundingRate.objects.create(
        exchange=exchange,
        symbol=symbol,
        rate=Decimal(str(rate)),
        funding_at=due,
        next_funding_at=due + timedelta(hours=hours),
        mark_price=Decimal(str(mark)) if mark is not None else None,
        observed_at=at,
    )


def yield_pool_write(*, pool_id: str, **fields):
    """A DefiLlama pool as its feed writes it (defaults: a stable single-asset pool)."""
    from catalog.models import YieldPool

    row = {
        "chain": "Ethereum",
        "project": "aave-v3",
        "symbol": "USDC",
        "tvl_usd": Decimal("50000000"),
        "apy": 5.0,
        "apy_base": 5.0,
        "apy_reward": None,
        "apy_mean_30d": 5.0,
        "stablecoin": True,
        "il_risk": "no",
        "exposure": "single",
        "outlier": False,
        "source": "defillama",
        "observed_at": timezone.now(),
    }
    row.update(fields)
    if "tvl_usd" in fields:
        row["tvl_usd"] = Decimal(str(fields["tvl_usd"]))
    return YieldPool.objects.create(pool_id=pool_id, **row)


def execution_market_write() -> dict:
    """Data for every execution product (the shop fixture calls it): BTC/USDT and PAXG/USDT books
    on two venues (kraken, coinbase: names the other builders do not use), 1m candles, funding
    on both venues' perpetuals, a tokenized asset and yield pools. Returns the products' params."""
    from catalog.models import TokenizedAsset

    for exchange, shift in (("kraken", 0.0), ("coinbase", 0.0004)):
        mid = 97_000 * (1 + shift)
        book_write(
            exchange=exchange,
            symbol="BTC/USDT",
            bids=ladder(mid - 5, side="bid", levels=20, size=0.5),
            asks=ladder(mid + 5, side="ask", levels=20, size=0.5),
        )
        gold = 2650 * (1 + shift)
        book_write(
            exchange=exchange,
            symbol="PAXG/USDT",
            bids=ladder(gold - 0.5, side="bid", size=2.0),
            asks=ladder(gold + 0.5, side="ask", size=2.0),
            volume_24h_usd=800_000.0,
        )
        funding_write(exchange=exchange, symbol="BTC/USDT:USDT", rate=0.0001 + shift / 2, mark=mid)
    candles_write(symbol="BTC/USDT", exchange="kraken", timeframe="1m", bars=120, shape=band(97_000, 0.002))
    TokenizedAsset.objects.update_or_create(
        symbol="PAXG",
        defaults={"name": "PAX Gold", "venue": "kraken", "underlying": "XAU", "last_price": 2650},
    )
    yield_pool_write(pool_id="exec-usdc")
    yield_pool_write(
        pool_id="exec-lp",
        symbol="WETH-USDC",
        project="uniswap-v3",
        apy=30.0,
        apy_base=10.0,
        apy_reward=20.0,
        apy_mean_30d=18.0,
        stablecoin=False,
        il_risk="yes",
        exposure="multi",
    )
    return {}
