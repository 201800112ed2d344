"""Equity intelligence from the equity news: per ticker, sentiment, catalysts and price context
(equity_intel), and short-term setups on fresh catalysts (equity_scalp).

The tickers are those the equity-category news names (crypto assets excluded). Sentiment is
catalog/analytics/sentiment.py's per-asset view over these items; catalysts are
catalog/analytics/catalysts.py's rules on each headline. Price context is the ticker's latest
catalog.models.EquityQuote (none: null) and its tokenized listings (catalog.models.
TokenizedAsset whose underlying is the ticker).

A scalp setup needs a fresh catalyst (published within EQUITY_CATALYST_FRESH_HOURS), a quote
with the day's range no older than EQUITY_QUOTE_MAX_AGE_HOURS, and the news's sentiment
agreeing in sign with the day's move: long when both are positive, short when both are
negative. Entry at the quote; stop EQUITY_SCALP_STOP_RANGE and target EQUITY_SCALP_TARGET_RANGE
times the day's range (high - low) from the entry; horizon EQUITY_SCALP_HORIZON_MINUTES."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, cast

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.catalysts import CatalystKind, catalysts_of
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import (
    SENTIMENT_WINDOW,
    AssetSentiment,
    ScoredNews,
    news_in_window,
    news_sentiment_backfill,
    news_text,
    scored_news,
    sentiment_by_asset,
)
from catalog.feeds.news.parse import CRYPTO_TICKERS
from catalog.models import EquityQuote, NewsItem, TokenizedAsset
from catalog.products.intel import SentimentFiguresOut, SentimentLabel, Ticker, sentiment_figures
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, fresh_required, product

EQUITY = NewsItem.Category.EQUITY.value


class EquityParams(QueryModel):
    ticker: Ticker | None = Field(None, description="only this ticker (NVDA, AAPL); any case")
    limit: int = Limit(20)

    @field_validator("ticker")
    @classmethod
    def _upper(cls, value: str | None) -> str | None:
        return value.upper() if value else value


# --- output ------------------------------------------------------------------------------------------
class CatalystOut(BaseModel):
    kinds: list[CatalystKind] = Field(description="what the headline reports (one or more kinds)")
    news_id: int
    title: str
    published_at: str | None = Field(description="ISO 8601 UTC")
    age_hours: float = Field(description="hours since publication")
    compound: float = Field(description="the headline's sentiment, in [-1, 1]")


class EquityHeadlineOut(BaseModel):
    id: int = Field(description="the news item (unlock its full text at /api/a2a/x402/news/unlock)")
    title: str
    source: str
    url: str
    published_at: str | None
    compound: float
    label: SentimentLabel
    catalysts: list[CatalystKind]


class PriceContextOut(BaseModel):
    price: float = Field(description="the latest quote")
    day_change_pct: float | None = Field(description="change from the previous close, in %")
    day_low: float | None
    day_high: float | None
    open: float | None
    prev_close: float | None
    quoted_at: str = Field(description="ISO 8601 UTC: the quote's own time")
    source: str
    replay: bool
    stale: bool = Field(description="true when the quote is older than EQUITY_QUOTE_MAX_AGE_HOURS")


class TokenizedListingOut(BaseModel):
    symbol: str
    name: str
    venue: str
    last_price: float | None
    change_24h_pct: float | None
    premium_pct: float | None = Field(
        description="last price against the ticker's quote (else the listing's underlying reference), in %"
    )
    updated_at: str
    replay: bool


class EquityTickerOut(BaseModel):
    ticker: str
    sentiment: SentimentFiguresOut
    catalysts: list[CatalystOut] = Field(
        description="the window's headlines that report a catalyst, newest first"
    )
    fresh_catalyst: bool = Field(description="a catalyst within EQUITY_CATALYST_FRESH_HOURS")
    headlines: list[EquityHeadlineOut] = Field(description="the ticker's newest headlines")
    price: PriceContextOut | None = Field(description="null: no quote of the ticker has been ingested")
    tokenized: list[TokenizedListingOut]


class EquityIntelOut(Provenanced):
    window_hours: int
    count: int
    tickers: list[EquityTickerOut] = Field(description="the most covered tickers first")


class ScalpSetupOut(BaseModel):
    ticker: str
    direction: Literal["long", "short"]
    entry: float = Field(description="the latest quote")
    stop: float
    target: float
    risk_reward: float = Field(description="|target - entry| / |entry - stop|")
    horizon_minutes: int
    valid_until: str = Field(description="ISO 8601 UTC: now + horizon")
    sentiment: float = Field(description="the ticker's recency-weighted news sentiment")
    day_change_pct: float
    day_low: float
    day_high: float
    day_range: float
    catalyst: CatalystOut = Field(description="the freshest catalyst")
    quoted_at: str
    why: str


class ScalpPassOut(BaseModel):
    ticker: str
    reason: str = Field(description="why the ticker has no setup")


class EquityScalpOut(Provenanced):
    horizon_minutes: int
    count: int = Field(description="setups")
    setups: list[ScalpSetupOut] = Field(description="the strongest sentiment first")
    passed: list[ScalpPassOut] = Field(description="tickers with a fresh catalyst and no setup, and why")


# --- the data ----------------------------------------------------------------------------------------
def _f(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Catalyst:
    kinds: list[CatalystKind]
    item: ScoredNews


@dataclass(frozen=True)
class TickerIntel:
    ticker: str
    sentiment: AssetSentiment
    catalysts: list[Catalyst]  # newest first
    quote: EquityQuote | None


@dataclass(frozen=True)
class EquityData:
    now: datetime
    tickers: list[TickerIntel]
    prov: Provenance


def _catalysts(items: list[ScoredNews]) -> list[Catalyst]:
    out = []
    for item in items:
        kinds = catalysts_of(news_text(title=item.title, teaser=item.teaser))
        if kinds:
            out.append(Catalyst(kinds=kinds, item=item))
    return out


def _latest_quotes(tickers: list[str]) -> dict[str, EquityQuote]:
    """The newest quote of each ticker, whatever its source."""
    quotes: dict[str, EquityQuote] = {}
    for quote in EquityQuote.objects.filter(symbol__in=tickers).order_by("symbol", "-quoted_at"):
        quotes.setdefault(quote.symbol.upper(), quote)
    return quotes


def equity_data(*, ticker: str | None, limit: int, method: str, now: datetime | None = None) -> EquityData:
    """The equity tickers of the window's equity news with their sentiment, catalysts and
    quote, the most covered first. ProductFailed when no equity news is fresh enough."""
    now = now or timezone.now()
    since = now - SENTIMENT_WINDOW
    news_sentiment_backfill(since=since)
    items = scored_news(since=since, now=now, categories=[EQUITY])
    assets = sentiment_by_asset(
        items,
        now=now,
        half_life=timedelta(hours=settings.SENTIMENT_HALF_LIFE_HOURS),
        drivers=settings.SENTIMENT_DRIVERS,
        exclude=CRYPTO_TICKERS,
    )
    if ticker is not None:
        assets = [a for a in assets if a.asset == ticker]
    if not assets:
        about = f"about {ticker}" if ticker else "naming a ticker"
        raise ProductFailed(
            f"no equity news {about} was published in the last "
            f"{int(SENTIMENT_WINDOW.total_seconds() // 3600)} h; nothing was charged"
        )
    assets = assets[:limit]
    prov = Provenance(method=method, max_age=timedelta(hours=settings.EQUITY_NEWS_MAX_AGE_HOURS), now=now)
    for item in {i.id: i for a in assets for i in a.news}.values():
        prov.add(source=item.source, replay=item.replay, as_of=item.at)
    fresh_required(prov, "equity news")
    quotes = _latest_quotes([a.asset for a in assets])
    return EquityData(
        now=now,
        tickers=[
            TickerIntel(ticker=a.asset, sentiment=a, catalysts=_catalysts(a.news), quote=quotes.get(a.asset))
            for a in assets
        ],
        prov=prov,
    )


def _age_hours(now: datetime, at: datetime) -> float:
    return round(max((now - at).total_seconds(), 0.0) / 3600, 2)


def _catalyst_out(c: Catalyst, now: datetime) -> dict[str, Any]:
    return {
        "kinds": c.kinds,
        "news_id": c.item.id,
        "title": c.item.title,
        "published_at": iso(c.item.published_at),
        "age_hours": _age_hours(now, c.item.at),
        "compound": round(c.item.compound, 4),
    }


def _fresh(c: Catalyst, now: datetime) -> bool:
    return now - c.item.at <= timedelta(hours=settings.EQUITY_CATALYST_FRESH_HOURS)


def _quote_stale(quote: EquityQuote, now: datetime) -> bool:
    return now - quote.quoted_at > timedelta(hours=settings.EQUITY_QUOTE_MAX_AGE_HOURS)


def _day_change_pct(quote: EquityQuote) -> float | None:
    if quote.change_pct is not None:
        return float(quote.change_pct)
    if quote.prev_close:
        return round((float(quote.price) / float(quote.prev_close) - 1) * 100, 4)
    return None


def _price_context(quote: EquityQuote | None, now: datetime) -> dict[str, Any] | None:
    if quote is None:
        return None
    return {
        "price": float(quote.price),
        "day_change_pct": _day_change_pct(quote),
        "day_low": _f(quote.low),
        "day_high": _f(quote.high),
        "open": _f(quote.open),
        "prev_close": _f(quote.prev_close),
        "quoted_at": iso(quote.quoted_at),
        "source": quote.source,
        "replay": quote.replay,
        "stale": _quote_stale(quote, now),
    }


def _tokenized(quote: EquityQuote | None, listings: list[TokenizedAsset]) -> list[dict[str, Any]]:
    out = []
    for t in listings:
        reference = float(quote.price) if quote is not None else _f(t.underlying_price)
        premium = None
        if t.last_price is not None and reference:
            premium = round((float(t.last_price) / reference - 1) * 100, 4)
        out.append(
            {
                "symbol": t.symbol,
                "name": t.name,
                "venue": t.venue,
                "last_price": _f(t.last_price),
                "change_24h_pct": _f(t.change_24h_pct),
                "premium_pct": premium,
                "updated_at": iso(t.updated_at),
                "replay": t.replay,
            }
        )
    return out


def _has_equity_news() -> tuple[bool, str]:
    since = timezone.now() - timedelta(hours=settings.EQUITY_NEWS_MAX_AGE_HOURS)
    if news_in_window(since).filter(category=EQUITY).exclude(tickers=[]).exists():
        return True, ""
    return False, f"no equity news naming a ticker in the last {settings.EQUITY_NEWS_MAX_AGE_HOURS:g} h"


def _has_catalysts_and_quotes() -> tuple[bool, str]:
    ok, reason = _has_equity_news()
    if not ok:
        return ok, reason
    if not EquityQuote.objects.exists():
        return False, "no equity quote has been ingested yet"
    return True, ""


# --- equity_intel ------------------------------------------------------------------------------------
INTEL_METHOD = (
    "equity news per ticker: VADER+finance lexicon sentiment, recency-weighted (half-life {half_life:g} h); "
    "catalysts by keyword rules; price context from the latest equity quote and tokenized listings"
)


@product(
    sku="equity_intel",
    path="/equity/intel",
    headline="Equity intel: per-ticker news sentiment, catalysts and price context",
    price="0.1",
    family="equity",
    rank=60,
    session_callable=True,
    teaser="equity-intel",
    credit_routes=(
        CreditRoute(route="api/a2a/equity/intel", operation_id="equity_intel", summary="Equity intelligence"),
    ),
    params=EquityParams,
    output=EquityIntelOut,
    available=_has_equity_news,
)
def equity_intel(call: ProductCall) -> dict[str, Any]:
    params = cast(EquityParams, call.params)
    data = equity_data(
        ticker=params.ticker,
        limit=params.limit,
        method=INTEL_METHOD.format(half_life=settings.SENTIMENT_HALF_LIFE_HOURS),
    )
    now, prov = data.now, data.prov
    wanted = {t.ticker for t in data.tickers}
    listings: dict[str, list[TokenizedAsset]] = {}
    for asset in TokenizedAsset.objects.exclude(underlying="").order_by("symbol"):
        if asset.underlying.upper() in wanted:
            listings.setdefault(asset.underlying.upper(), []).append(asset)
    tickers = []
    for t in data.tickers:
        if t.quote is not None:
            prov.add(source=t.quote.source, replay=t.quote.replay, as_of=t.quote.quoted_at)
        for listing in listings.get(t.ticker, []):
            prov.add(
                source=listing.source, venue=listing.venue, replay=listing.replay, as_of=listing.updated_at
            )
        kinds = {c.item.id: c.kinds for c in t.catalysts}
        tickers.append(
            {
                "ticker": t.ticker,
                "sentiment": sentiment_figures(t.sentiment),
                "catalysts": [_catalyst_out(c, now) for c in t.catalysts],
                "fresh_catalyst": any(_fresh(c, now) for c in t.catalysts),
                "headlines": [
                    {
                        "id": i.id,
                        "title": i.title,
                        "source": i.source,
                        "url": i.url,
                        "published_at": iso(i.published_at),
                        "compound": round(i.compound, 4),
                        "label": i.label,
                        "catalysts": kinds.get(i.id, []),
                    }
                    for i in t.sentiment.news[: settings.EQUITY_INTEL_HEADLINES]
                ],
                "price": _price_context(t.quote, now),
                "tokenized": _tokenized(t.quote, listings.get(t.ticker, [])),
            }
        )
    return {
        "window_hours": int(SENTIMENT_WINDOW.total_seconds() // 3600),
        "count": len(tickers),
        "tickers": tickers,
        **prov.out(),
    }


# --- equity_scalp ------------------------------------------------------------------------------------
SCALP_METHOD = (
    "tickers with a fresh catalyst and a quote; direction where the news sentiment agrees with the day's move; "
    "entry at the quote, stop {stop:g}x and target {target:g}x the day's range from it"
)


@dataclass(frozen=True)
class Setup:
    direction: Literal["long", "short"]
    entry: float
    stop: float
    target: float


def scalp_levels(
    *, direction: Literal["long", "short"], entry: float, day_low: float, day_high: float
) -> Setup:
    """Stop and target at the configured fractions of the day's range from the entry."""
    day_range = day_high - day_low
    sign = 1 if direction == "long" else -1
    return Setup(
        direction=direction,
        entry=entry,
        stop=round(entry - sign * settings.EQUITY_SCALP_STOP_RANGE * day_range, 4),
        target=round(entry + sign * settings.EQUITY_SCALP_TARGET_RANGE * day_range, 4),
    )


def _scalp(t: TickerIntel, quote: EquityQuote, now: datetime) -> tuple[dict[str, Any] | None, str]:
    """A ticker's setup, or None and why not. Called for tickers with a fresh catalyst and a quote."""
    if _quote_stale(quote, now):
        return (
            None,
            f"the latest quote ({iso(quote.quoted_at)}) is older than {settings.EQUITY_QUOTE_MAX_AGE_HOURS:g} h",
        )
    change = _day_change_pct(quote)
    if quote.high is None or quote.low is None or change is None:
        return None, "the quote has no day range or no previous close"
    low, high, entry = float(quote.low), float(quote.high), float(quote.price)
    if high <= low:
        return None, "the day's range is empty"
    s = t.sentiment
    if s.label == "neutral" or change == 0:
        return None, f"no direction: sentiment {s.score:+.3f} ({s.label}), day move {change:+.2f}%"
    if (s.score > 0) != (change > 0):
        return None, f"sentiment {s.score:+.3f} ({s.label}) disagrees with the day's move of {change:+.2f}%"
    direction: Literal["long", "short"] = "long" if change > 0 else "short"
    levels = scalp_levels(direction=direction, entry=entry, day_low=low, day_high=high)
    fresh = [c for c in t.catalysts if _fresh(c, now)]
    catalyst = fresh[0]
    day_range = high - low
    horizon = settings.EQUITY_SCALP_HORIZON_MINUTES
    why = (
        f'{"/".join(catalyst.kinds)} catalyst {_age_hours(now, catalyst.item.at):g} h ago ("{catalyst.item.title}"); '
        f"news sentiment {s.score:+.3f} over {s.items} item(s) agrees with the day's {change:+.2f}% move; "
        f"stop {settings.EQUITY_SCALP_STOP_RANGE:g}x and target {settings.EQUITY_SCALP_TARGET_RANGE:g}x "
        f"the day's range ({day_range:.4g}) from the quote"
    )
    return {
        "ticker": t.ticker,
        "direction": direction,
        "entry": entry,
        "stop": levels.stop,
        "target": levels.target,
        "risk_reward": round(abs(levels.target - entry) / abs(entry - levels.stop), 4),
        "horizon_minutes": horizon,
        "valid_until": iso(now + timedelta(minutes=horizon)),
        "sentiment": round(s.score, 4),
        "day_change_pct": change,
        "day_low": low,
        "day_high": high,
        "day_range": round(day_range, 6),
        "catalyst": _catalyst_out(catalyst, now),
        "quoted_at": iso(quote.quoted_at),
        "why": why,
    }, ""


@product(
    sku="equity_scalp",
    path="/equity/scalp",
    headline="Equity scalp: short-term setups on fresh news catalysts, with entry, stop and target",
    price="0.12",
    family="equity",
    rank=61,
    session_callable=True,
    teaser="equity-scalp",
    credit_routes=(
        CreditRoute(route="api/a2a/equity/scalp", operation_id="equity_scalp", summary="Equity scalp setups"),
    ),
    params=EquityParams,
    output=EquityScalpOut,
    available=_has_catalysts_and_quotes,
)
def equity_scalp(call: ProductCall) -> dict[str, Any]:
    params = cast(EquityParams, call.params)
    data = equity_data(
        ticker=params.ticker,
        limit=settings.CATALOG_LIMIT_MAX,
        method=SCALP_METHOD.format(
            stop=settings.EQUITY_SCALP_STOP_RANGE, target=settings.EQUITY_SCALP_TARGET_RANGE
        ),
    )
    now, prov = data.now, data.prov
    candidates = [
        (t, t.quote) for t in data.tickers if t.quote is not None and any(_fresh(c, now) for c in t.catalysts)
    ]
    if not candidates:
        raise ProductFailed(
            f"no equity ticker has both a catalyst in the last {settings.EQUITY_CATALYST_FRESH_HOURS:g} h "
            "and a quote; nothing was charged"
        )
    setups, passed = [], []
    for t, quote in candidates:
        prov.add(source=quote.source, replay=quote.replay, as_of=quote.quoted_at)
        setup, reason = _scalp(t, quote, now)
        if setup is None:
            passed.append({"ticker": t.ticker, "reason": reason})
        else:
            setups.append(setup)
    setups.sort(key=lambda x: -abs(x["sentiment"]))
    setups = setups[: params.limit]
    return {
        "horizon_minutes": settings.EQUITY_SCALP_HORIZON_MINUTES,
        "count": len(setups),
        "setups": setups,
        "passed": passed,
        **prov.out(),
    }
