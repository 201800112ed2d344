"""Generated events: the calendar, news and prediction markets the macro gate and the morning
brief read, prediction markets on two venues, the digests' news, regimes and grants, and what a
new installation's first minute brings."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from catalog.models import EditorialPiece, FeedState, IntelSnapshot, NewsItem
from tests.support.marketdata.markets import calendar_write, candles_write, news_write, rising

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


# --- a new installation's first minute (the health and readiness checks) ----------------------
def first_data_in() -> None:
    """What a new installation's first minute brings: a pass of every feed source, an
    analytics pass (its snapshot) and a published morning brief."""
    from catalog.feeds.registry import feeds_all

    now = timezone.now()
    for source in feeds_all():
        FeedState.objects.update_or_create(
            name=source.name, defaults={"last_attempt_at": now, "last_success_at": now, "rows_written": 3}
        )
    IntelSnapshot.objects.create(regime="neutral", as_of=now, payload={"signals": []})
    EditorialPiece.objects.create(
        kind=EditorialPiece.Kind.MORNING_BRIEF,
        title="Brief",
        summary="s",
        body="b",
        composed_at=now,
        brief_date=now.date(),
        published_at=now,
    )
