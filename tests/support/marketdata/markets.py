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


# --- calendar, macro gate and the morning brief (catalog/analytics/macro.py, catalog/briefs.py) ---


def brief_market_write() -> dict:
    """What the macro gate, calendar risk and the morning brief read, beside the signals market:
    PUMP/USDT up about 61 % in 24 h (the day's largest mover), a calendar whose nearest
    high-impact event is an FOMC decision in 3 h, two news items (one strongly negative), and a
    prediction market whose yes price rose 30 -> 45 % in 24 h. Returns the rows tests name."""
    from catalog.models import PredictionMarket, PredictionPrice

    candles_write(symbol="PUMP/USDT", shape=rising(10.0, step=0.02), bars=48, noise=0.0)
    fomc = calendar_write(title="FOMC rate decision", in_hours=3, impact="high")
    calendar_write(title="Retail sales", in_hours=5, impact="medium")
    calendar_write(title="ECB rate decision", in_hours=30, impact="high", country="EU")
    crash = news_write(title="Exchange hack: funds stolen, withdrawals halted in panic", hours_ago=2)
    news_write(title="Quarterly report published", hours_ago=1)
    now = timezone.now()
    market = PredictionMarket.objects.create(
        venue="polymarket",
        external_id="brief-1",
        question="Will the Fed cut rates in December?",
        yes_price=0.45,
        url="https://polymarket.com/event/fed-cut",
        source="polymarket",
    )
    PredictionPrice.objects.create(market=market, yes_price=0.30, observed_at=now - timedelta(hours=25))
    PredictionPrice.objects.create(market=market, yes_price=0.45, observed_at=now - timedelta(minutes=5))
    return {"fomc": fomc, "news": crash, "prediction": market}


# --- prediction markets (cross-venue matching, top 3, resolution calendar) ---------------------
def prediction_market_write(
    *,
    venue: str,
    external_id: str,
    question: str,
    yes_price: float | None,
    closes_in_hours: float = 240.0,
    liquidity: float = 10_000.0,
    volume: float = 100_000.0,
    history: tuple[tuple[float, float], ...] = (),
    status: str = "open",
    resolution_source: str = "",
    rules: str = "",
    observed_at: datetime | None = None,
    replay: bool = False,
):
    """One market as the feeds write it (saved one by one: the receivers fire), with its yes
    price history as (hours ago, price) rows besides the current price's row."""
    from catalog.models import PredictionMarket, PredictionPrice

    now = observed_at or timezone.now()
    market = PredictionMarket.objects.create(
        venue=venue,
        external_id=external_id,
        question=question,
        yes_price=Decimal(str(yes_price)) if yes_price is not None else None,
        liquidity_usd=Decimal(str(liquidity)),
        volume_usd=Decimal(str(volume)),
        closes_at=now + timedelta(hours=closes_in_hours),
        status=status,
        resolution_source=resolution_source,
        rules=rules,
        source=venue,
        replay=replay,
        observed_at=now,
        updated_at=now,
    )
    for hours_ago, price in history:
        PredictionPrice.objects.create(
            market=market, yes_price=Decimal(str(price)), observed_at=now - timedelta(hours=hours_ago)
        )
    if yes_price is not None:
        PredictionPrice.objects.create(market=market, yes_price=Decimal(str(yes_price)), observed_at=now)
    return market


FED_KALSHI = "Will the Fed cut rates by 25bps at their December 2026 meeting?"
FED_POLYMARKET = "Fed decreases interest rates by 25 bps after December 2026 meeting?"


def prediction_shop_write(*, kalshi_yes: float = 0.55, polymarket_yes: float = 0.62) -> list:
    """The same Fed decision on Kalshi and Polymarket at different prices, two unrelated
    markets, and one matching pass: one pair, divergent by the gap net of Kalshi's fee."""
    from catalog.analytics.prediction_match import prediction_matches_refresh

    markets = [
        prediction_market_write(
            venue="kalshi", external_id="KXFED-C25", question=FED_KALSHI, yes_price=kalshi_yes,
            closes_in_hours=100, liquidity=188_000, history=((30, kalshi_yes - 0.04),),
        ),
        prediction_market_write(
            venue="polymarket", external_id="610001", question=FED_POLYMARKET, yes_price=polymarket_yes,
            closes_in_hours=95, liquidity=412_000,
        ),
        prediction_market_write(
            venue="kalshi", external_id="KXSB-27-KC", question="Will the Kansas City Chiefs win Super Bowl LXI?",
            yes_price=0.13, closes_in_hours=2000,
        ),
        prediction_market_write(
            venue="polymarket", external_id="610170", question="Will Taylor Swift announce a new album in 2026?",
            yes_price=0.115, closes_in_hours=900,
        ),
    ]  # fmt: skip
    prediction_matches_refresh()
    return markets


# --- digests (market groups, regulatory, weekly, grant scout) ------------------------------------
def digests_market_write() -> None:
    """News in groups (crypto: two bullish SOL items; regulation: an SEC fraud charge 2 h ago and
    an SEC rule 30 h ago; macro: an FOMC rate decision 5 h ago), SOL/USDT 1h closes rising 1% a
    bar (24 h: +26.97%), regimes range (8 d ago) -> up_trend (3 d) -> high_volatility (1 d), the
    trend desk's week +2, -1, +3 (a -5 closed 10 days ago is outside it), two markets resolved in
    the week (one 9 days ago is not), and grant programs closing in 3 and 10 days, one without a
    deadline and one already closed."""
    from catalog.models import DeskSignal, GrantFeed, GrantProgram, PredictionMarket, RegimeSnapshot

    now = timezone.now()
    for title, hours, group, category, source in [
        (
            "Solana rallies to a record as ETF approval draws strong inflows",
            1,
            "crypto",
            "crypto",
            "test-wire",
        ),
        ("Solana gains after a major exchange listing", 4, "crypto", "crypto", "test-wire"),
        ("SEC charges exchange operator with fraud", 2, "regulation", "general", "SEC"),
        ("SEC adopts rule amendments for tokenized securities", 30, "regulation", "general", "SEC"),
        ("Federal Reserve announces FOMC rate decision", 5, "macro", "general", "Federal Reserve"),
    ]:
        item = news_write(
            title=title,
            tickers=["SOL"] if "Solana" in title else [],
            hours_ago=hours,
            category=category,
            source=source,
        )
        NewsItem.objects.filter(pk=item.pk).update(market_group=group)
    candles_write(symbol="SOL/USDT", shape=rising(start=100.0, step=0.01), bars=48, noise=0.0)
    for regime, days in [("range", 8), ("up_trend", 3), ("high_volatility", 1)]:
        RegimeSnapshot.objects.create(regime=regime, confidence=0.7, computed_at=now - timedelta(days=days))
    for pnl, days in [(-5.0, 10), (2.0, 5), (-1.0, 4), (3.0, 2)]:
        DeskSignal.objects.create(
            desk="trend-momentum-digest",
            symbol="SOL/USDT",
            side="long",
            entry_price=Decimal("100"),
            exit_price=Decimal(str(100 + pnl)),
            pnl_pct=Decimal(str(pnl)),
            opened_at=now - timedelta(days=days, hours=6),
            closed_at=now - timedelta(days=days),
        )
    for ext, status, days in [
        ("r-old", "resolved", -9),
        ("r-1", "resolved", -2),
        ("c-1", "closed", -1),
        ("o-1", "open", 1),
    ]:
        PredictionMarket.objects.create(
            venue="polymarket",
            external_id=f"digest-{ext}",
            question=f"Digest market {ext}?",
            yes_price=Decimal("0.97") if status == "resolved" else Decimal("0.40"),
            closes_at=now + timedelta(days=days),
            status=status,
            source="polymarket",
        )
    feed = GrantFeed.objects.create(name="Test grants", url="https://grants.invalid/feed.xml")
    for title, deadline_days in [
        ("Agent tooling grants", 10),
        ("Data availability research", 3),
        ("Rolling oracle fund", None),
        ("Closed security round", -1),
    ]:
        GrantProgram.objects.create(
            feed=feed,
            external_id=title,
            title=title,
            url=f"https://grants.invalid/{title.split()[0].lower()}",
            summary=f"{title}: who may apply and what is funded.",
            deadline=now + timedelta(days=deadline_days) if deadline_days is not None else None,
            source=feed.name,
            published_at=now - timedelta(days=2),
            observed_at=now,
        )


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

