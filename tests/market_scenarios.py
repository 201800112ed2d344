"""Whole markets the product tests start from, built with the generators of tests/marketdata.py:
trending and ranging majors for the signals, the regime and the desks (with an analytics pass),
the morning brief's market, the prediction graph, prediction markets across venues, the digests'
news, tokenized candles and bars still open. A test reuses one rather than building its own."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.analytics.series import timeframe_delta
from catalog.models import Candle, NewsItem
from tests.marketdata import (
    Shape,
    band,
    calendar_write,
    candles_write,
    falling,
    market_write,
    news_write,
    plunge,
    rising,
)

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


# --- calendar, macro gate and the morning brief (catalog/analytics/macro.py, catalog/editorial/briefs.py) ---


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
