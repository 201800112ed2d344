"""Generated market data for the product tests: candle series with a known shape (a steady
rise, a steady fall, a band), tickers and books with a known gap, written as the feeds would
write them. Each product's test builds exactly the market it checks its numbers against.
Add generators here (append) rather than in a test, so other products' tests can reuse them;
the whole markets built from them are in tests/market_scenarios.py."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.analytics.sentiment import news_score
from catalog.analytics.series import timeframe_delta
from catalog.models import (
    CalendarEvent,
    Candle,
    EquityQuote,
    ExchangeMarket,
    FundingRate,
    NewsItem,
    TokenizedAsset,
)

Shape = Callable[[int], float]


def rising(start: float = 100.0, step: float = 0.004) -> Shape:
    return lambda i: start * (1 + step) ** i


def falling(start: float = 100.0, step: float = 0.004) -> Shape:
    return lambda i: start * (1 - step) ** i


def band(mid: float = 100.0, amplitude: float = 0.03, period: float = 19.0, phase: float = 0.0) -> Shape:
    """A wave around `mid`, `amplitude` either side, one cycle every `period` bars, started
    `phase` bars into its cycle (the phase sets where the series ends in the band)."""
    return lambda i: mid * (1 + amplitude * math.sin(2 * math.pi * (i + phase) / period))


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
    observed_at: datetime | None = None,
) -> list[Candle]:
    """`bars` candles whose closes follow `shape(i)` (times a little noise), the newest closing
    at `end` (default now), as the exchanges feed writes them, observed at `observed_at`
    (default `end`; before `end`: the newest bar is still open, as the feed writes the bar in
    progress)."""
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
                observed_at=observed_at or end,
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


def tokenized_write(
    *,
    symbol: str,
    underlying: str,
    last_price: float,
    underlying_price: float | None,
    venue: str = "bybit",
    change_24h_pct: float | None = 0.5,
    price_age_minutes: float = 1.0,
    underlying_as_of: datetime | None = None,
    replay: bool = False,
    now: datetime | None = None,
) -> TokenizedAsset:
    """A watchlist token priced by the exchanges feed, with its underlying's reference quote
    (as the equities feed sets it), `price_age_minutes` old."""
    now = now or timezone.now()
    return TokenizedAsset.objects.create(
        symbol=symbol,
        name=f"{symbol} token",
        venue=venue,
        underlying=underlying,
        last_price=Decimal(str(last_price)),
        change_24h_pct=Decimal(str(change_24h_pct)) if change_24h_pct is not None else None,
        underlying_price=Decimal(str(underlying_price)) if underlying_price is not None else None,
        underlying_source="equities" if underlying_price is not None else "",
        underlying_as_of=(underlying_as_of or now) if underlying_price is not None else None,
        underlying_replay=replay,
        source="exchanges",
        replay=replay,
        updated_at=now - timedelta(minutes=price_age_minutes),
    )


def tokenized_market_write(now: datetime | None = None) -> list[TokenizedAsset]:
    """Two tokenized equities and a tokenized gold with known premiums and listings: AAPLX
    2 % above AAPL (wide spread on a thin book), TSLAX 1 % below TSLA, PAXG 0.1 % above XAU."""
    rows = [
        tokenized_write(symbol="AAPLX", underlying="AAPL", last_price=204.0, underlying_price=200.0, now=now),
        tokenized_write(symbol="TSLAX", underlying="TSLA", last_price=297.0, underlying_price=300.0, now=now),
        tokenized_write(
            symbol="PAXG", underlying="XAU", last_price=2652.65, underlying_price=2650.0, now=now
        ),
    ]
    market_write(exchange="bybit", symbol="AAPLX/USDT", bid=203.5, ask=204.5, volume_24h_usd=120_000.0)
    market_write(exchange="bybit", symbol="TSLAX/USDT", bid=296.97, ask=297.03, volume_24h_usd=2_000_000.0)
    market_write(exchange="bybit", symbol="PAXG/USDT", bid=2652.5, ask=2652.8, volume_24h_usd=9_000_000.0)
    return rows


def fee_history_write(
    *,
    chain_id: int = 8453,
    newest_block: int = 1_000,
    base_fee: int = 10 * 10**9,
    ratios: list[float] | None = None,
    tips: list[int] | None = None,
    elasticity: int = 2,
    denominator: int = 8,
    observed_at: datetime | None = None,
    replay: bool = False,
) -> list:
    """A fee history as the chain feed writes it: one GasFeeBlock per gas-used ratio (default
    20 half-full blocks), oldest first, the base fee following EIP-1559 from `base_fee` (each
    row's next_base_fee_wei is the following one's, the newest's the rule's projection), and
    each block's tips: p50 from `tips` (default 1 gwei), the other percentiles scaled from it."""
    from catalog.models import GasFeeBlock
    from catalog.products.gas import eip1559_next_base_fee

    ratios = ratios if ratios is not None else [0.5] * 20
    tips = tips if tips is not None else [10**9] * len(ratios)
    observed_at = observed_at or timezone.now()
    oldest = newest_block - len(ratios) + 1
    fees = [base_fee]
    for ratio in ratios:
        fees.append(eip1559_next_base_fee(fees[-1], ratio, elasticity=elasticity, denominator=denominator))
    rows = []
    for i, (ratio, tip) in enumerate(zip(ratios, tips, strict=True)):
        scaled = {10: tip // 10, 25: tip // 2, 50: tip, 70: tip * 2, 90: tip * 5, 99: tip * 20}
        rows.append(
            GasFeeBlock.objects.create(
                chain_id=chain_id,
                block_number=oldest + i,
                base_fee_wei=fees[i],
                next_base_fee_wei=fees[i + 1],
                gas_used_ratio=ratio,
                **{f"priority_fee_p{p}_wei": v for p, v in scaled.items()},
                source="chain",
                replay=replay,
                observed_at=observed_at,
            )
        )
    return rows


def mev_market_write(*, symbol: str = "ETH/USDT", price: float = 3000.0, size: float = 10.0) -> None:
    """What the MEV hint pack reads besides the fee history: a book top (bid/ask 1 bp around
    `price`, `size` on each side) and 200 one-minute bars oscillating around it."""
    half = price * 0.00005
    market_write(exchange="binance", symbol=symbol, bid=price - half, ask=price + half, size=size)
    candles_write(symbol=symbol, shape=band(mid=price, amplitude=0.002), timeframe="1m", bars=200)


# --- news and equity quotes (the sentiment and equity products) ---------------------------------------
def news_write(
    *,
    title: str,
    tickers: tuple[str, ...] | list[str] = (),
    hours_ago: float = 1.0,
    category: str = "crypto",
    teaser: str = "",
    source: str = "test-wire",
    replay: bool = False,
    scored: bool = True,
) -> NewsItem:
    """A news item published `hours_ago`, as the news feed writes it (scored at ingestion
    unless scored=False: then the products' backfill scores it)."""
    at = timezone.now() - timedelta(hours=hours_ago)
    score = news_score(title=title, teaser=teaser or title)
    return NewsItem.objects.create(
        title=title,
        teaser=teaser or title,
        body=title,
        category=category,
        source=source,
        url=f"https://example.com/news/{abs(hash((title, hours_ago))) % 10**9}",
        tickers=list(tickers),
        published_at=at,
        ingested_at=at,
        replay=replay,
        sentiment_compound=score.compound if scored else None,
        sentiment_label=score.label if scored else "",
        sentiment_scored_at=at if scored else None,
    )


def equity_quote_write(
    *,
    symbol: str,
    price: float,
    low: float | None = None,
    high: float | None = None,
    change_pct: float | None = None,
    prev_close: float | None = None,
    quoted_at: datetime | None = None,
    minutes_ago: float = 5.0,
    source: str = "equities",
    replay: bool = False,
) -> EquityQuote:
    """A ticker's latest quote (with the day's range when given), as the equities feed writes it."""

    def dec(x: float | None) -> Decimal | None:
        return None if x is None else Decimal(str(x))

    return EquityQuote.objects.create(
        symbol=symbol,
        venue_symbol=f"{symbol.lower()}.us",
        name=symbol,
        price=Decimal(str(price)),
        open=dec(prev_close),
        high=dec(high),
        low=dec(low),
        prev_close=dec(prev_close),
        change_pct=dec(change_pct),
        currency="USD",
        quoted_at=quoted_at or timezone.now() - timedelta(minutes=minutes_ago),
        source=source,
        replay=replay,
    )


def sentiment_market_write() -> None:
    """Bullish news about SOL, bearish about XRP; an equity earnings beat for NVDA (quote up
    2.5%, range 96-104) and an analyst downgrade for TSLA (quote down 3%, range 190-210)."""
    news_write(
        title="Solana rallies to an all-time high as ETF approval draws record inflows", tickers=["SOL"]
    )
    news_write(
        title="Solana surges after major exchange listing and partnership", tickers=["SOL"], hours_ago=3
    )
    news_write(title="XRP tumbles after exchange announces delisting", tickers=["XRP"], hours_ago=2)
    news_write(
        title="Nvidia beats estimates and raises guidance",
        teaser="Shares of Nvidia Corp. (NASDAQ: NVDA) rose after results.",
        tickers=["NVDA"],
        category="equity",
        hours_ago=2,
    )
    news_write(
        title="Tesla stock slides as analysts downgrade shares",
        tickers=["TSLA"],
        category="equity",
        hours_ago=3,
    )
    equity_quote_write(symbol="NVDA", price=100.0, low=96.0, high=104.0, change_pct=2.5, prev_close=97.56)
    equity_quote_write(symbol="TSLA", price=200.0, low=190.0, high=210.0, change_pct=-3.0, prev_close=206.19)


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


def funding_reading_write(
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
        funding_reading_write(exchange=exchange, symbol="BTC/USDT:USDT", rate=0.0001 + shift / 2, mark=mid)
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
