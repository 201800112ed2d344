"""Free market-data catalogs: news, equity, market-agent news, prediction venues, spot
markets, the tokenized watchlist and the morning brief's headline. Every figure comes from the
database; nothing here is a literal standing in for a measurement."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Max, QuerySet
from django.utils import timezone

from a2a_service.core.formats import iso, naive_utc
from a2a_service.core.money import usdc_from_atomic
from catalog.analytics.premium import premium
from catalog.models import (
    EditorialPiece,
    ExchangeMarket,
    NewsItem,
    PredictionMarket,
    Sku,
    TokenizedAsset,
)
from catalog.models.news import news_price_atomic
from catalog.products.briefs import brief_available
from catalog.selectors import schemas as s
from catalog.selectors.payment import absolute, credit_billing_enabled, payment_alternatives
from catalog.selectors.skus import on_sale, sku_available, sku_out

# The short-term catalog spans every ingested venue (each market names its own).
PREDICTION_VENUE = "all"


def _f(value: Decimal | float | None) -> float | None:
    return float(value) if value is not None else None


def news_item_out(base: str, item: NewsItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "teaser": item.teaser,
        "price_usdc": item.price_usdc,
        "ingested_at": naive_utc(item.ingested_at),
        "unlock": f"/api/a2a/x402/news/unlock?news_id={item.id}",
    }


def news_provenance(qs: QuerySet[NewsItem]) -> dict[str, Any]:
    """`as_of` (newest ingestion) and `sources` (rows per source and replay) of a news set."""
    grouped = qs.order_by().values("source", "replay").annotate(n=Count("id"), latest=Max("ingested_at"))
    rows = sorted(grouped, key=lambda r: (-r["n"], r["source"]))
    latest = max((r["latest"] for r in rows if r["latest"] is not None), default=None)
    return {
        "as_of": iso(latest),
        "sources": [
            s.CatalogSourceOut(name=r["source"] or "staff", items=r["n"], replay=r["replay"]) for r in rows
        ],
    }


def news_catalog(base: str, *, limit: int, category: str) -> s.NewsCatalogOut:
    qs = NewsItem.objects.order_by("-id")
    if category:
        qs = qs.filter(category=category)
    credits_on = credit_billing_enabled()
    digest = Sku.objects.filter(sku="news_digest").first()
    if credits_on:
        unlock_hint = (
            "POST /api/a2a/news/{news_id}/unlock with header X-API-Key debits the item's price_usdc from your "
            "prepaid credits (register at /api/a2a/account/register)."
        )
    else:
        unlock_hint = "Credit billing is off: the full text requires x402 (see x402_unlock_hint)."
    return s.NewsCatalogOut(
        items=[s.NewsItemOut(**news_item_out(base, i)) for i in qs[:limit]],
        credit_billing_enabled=credits_on,
        teaser_only=True,
        unlock_hint=unlock_hint,
        x402_unlock_hint="GET the item's unlock path (/api/a2a/x402/news/unlock?news_id=ID); it answers 402 with "
        "the item's price; pay it in USDC and retry with the payment header.",
        payment_alternatives=s.PaymentAlternatives(**payment_alternatives(base)),
        news_digest_x402=absolute(base, digest.path if digest else "/api/a2a/x402/news/digest"),
        news_digest_price_usdc=digest.price_usdc if digest else 0.0,
        agentverse_news=settings.AGENTVERSE_NEWS_AGENT,
        **news_provenance(qs),
    )


def equity_catalog(base: str, *, limit: int) -> s.EquityCatalogOut:
    equity = NewsItem.objects.filter(category=NewsItem.Category.EQUITY)
    items = list(equity.order_by("-id")[:limit])

    return s.EquityCatalogOut(
        items=[
            s.EquityItemOut(**news_item_out(base, i), source=i.source, category=i.category) for i in items
        ],
        count=len(items),
        unlock_price_usdc=usdc_from_atomic(news_price_atomic("equity")),
        digest_x402=absolute(base, "/api/a2a/x402/equity/news/digest"),
        **news_provenance(equity),
    )


def market_agent_news(base: str, *, limit: int) -> s.MarketAgentNewsOut:
    qs = NewsItem.objects.exclude(market_group="")
    items = list(qs.order_by("-id")[:limit])
    groups = dict(qs.values_list("market_group").annotate(n=Count("id")).values_list("market_group", "n"))
    return s.MarketAgentNewsOut(
        items=[s.MarketAgentNewsItemOut(**news_item_out(base, i), group=i.market_group) for i in items],
        groups=groups,
        digest_x402=absolute(base, "/api/a2a/x402/intel/market-groups-digest"),
        **news_provenance(qs),
    )


def prediction_market_out(m: PredictionMarket) -> s.PredictionMarketOut:
    yes = _f(m.yes_price)
    return s.PredictionMarketOut(
        venue=m.venue,
        id=m.external_id,
        question=m.question,
        category=m.category,
        yes_price=yes,
        no_price=round(1 - yes, 6) if yes is not None else None,
        volume_usd=_f(m.volume_usd),
        closes_at=iso(m.closes_at),
        url=m.url,
    )


def prediction_paid() -> list[s.SkuOut]:
    return [sku_out(x) for x in on_sale().filter(family="prediction")]


def prediction_sources(qs: QuerySet[PredictionMarket]) -> tuple[str | None, list[s.CatalogSourceOut]]:
    """The feed sources of the rows of `qs` (replay or live) and the freshest observation."""
    sources = ingested_sources(qs.exclude(source=""), venue_field=None, seen_field="observed_at")
    latest = max((x.as_of for x in sources if x.as_of is not None), default=None)
    return latest, sources


def predictionvenue_catalog(base: str, *, limit: int) -> s.PredictionVenueCatalogOut:
    """The open markets of every venue that close soonest (not yet closed)."""
    qs = PredictionMarket.objects.filter(status=PredictionMarket.Status.OPEN, closes_at__gte=timezone.now())
    markets = [prediction_market_out(m) for m in qs.order_by("closes_at", "id")[:limit]]
    as_of, sources = prediction_sources(qs)
    return s.PredictionVenueCatalogOut(
        venue=PREDICTION_VENUE,
        markets=markets,
        count=len(markets),
        paid=prediction_paid(),
        as_of=as_of,
        sources=sources,
    )


def prediction_catalog(base: str, *, limit: int, venue: str | None) -> s.PredictionCatalogOut:
    """The open markets, most traded first; `venue` keeps one venue's."""
    open_markets = PredictionMarket.objects.filter(status=PredictionMarket.Status.OPEN)
    qs = open_markets.filter(venue=venue) if venue else open_markets
    venues = dict(
        open_markets.order_by().values_list("venue").annotate(n=Count("id")).values_list("venue", "n")
    )
    markets = [
        prediction_market_out(m) for m in qs.order_by(F("volume_usd").desc(nulls_last=True), "id")[:limit]
    ]
    as_of, sources = prediction_sources(qs)
    return s.PredictionCatalogOut(
        venues=venues,
        markets=markets,
        count=len(markets),
        paid=prediction_paid(),
        as_of=as_of,
        sources=sources,
    )


def ingested_sources(
    qs: QuerySet[Any], *, venue_field: str | None, seen_field: str
) -> list[s.CatalogSourceOut]:
    """The provenance of a catalog's rows: per feed source (and venue), whether replayed, how
    many and when last seen. Rows typed in by staff have no source: "manual"."""
    keys = ["source", "replay", *([venue_field] if venue_field else [])]
    groups = qs.order_by().values(*keys).annotate(n=Count("id"), seen=Max(seen_field))
    return sorted(
        (
            s.CatalogSourceOut(
                name=g["source"] or "manual",
                venue=g[venue_field] if venue_field else None,
                replay=g["replay"],
                items=g["n"],
                as_of=iso(g["seen"]),
            )
            for g in groups
        ),
        key=lambda x: (x.name, x.venue or "", x.replay),
    )


def exchange_markets(base: str) -> s.ExchangeMarketsOut:
    rows = list(ExchangeMarket.objects.all()[: settings.CATALOG_LIMIT_MAX])
    return s.ExchangeMarketsOut(
        markets=[
            s.ExchangeMarketOut(
                exchange=m.exchange,
                symbol=m.symbol,
                base=m.base,
                quote=m.quote,
                last_price=_f(m.last_price),
                volume_24h_usd=_f(m.volume_24h_usd),
                spread_bps=_f(m.spread_bps),
                updated_at=iso(m.updated_at) or "",
            )
            for m in rows
        ],
        exchanges=sorted(set(ExchangeMarket.objects.values_list("exchange", flat=True))),
        count=len(rows),
        as_of=iso(ExchangeMarket.objects.aggregate(t=Max("updated_at"))["t"]),
        sources=ingested_sources(
            ExchangeMarket.objects.all(), venue_field="exchange", seen_field="updated_at"
        ),
    )


def tokenized_asset_out(a: TokenizedAsset) -> s.TokenizedAssetOut:
    gap = premium(a.last_price, a.underlying_price)
    return s.TokenizedAssetOut(
        symbol=a.symbol,
        name=a.name,
        venue=a.venue,
        underlying=a.underlying,
        last_price=_f(a.last_price),
        change_24h_pct=_f(a.change_24h_pct),
        updated_at=iso(a.updated_at) or "",
        underlying_price=_f(a.underlying_price),
        underlying_as_of=iso(a.underlying_as_of),
        premium_pct=gap.pct if gap else None,
        premium_bps=gap.bps if gap else None,
    )


def tokenized_underlying_sources(assets: QuerySet[TokenizedAsset]) -> list[s.CatalogSourceOut]:
    """The provenance of the watchlist's reference prices (the equities feed's quotes)."""
    groups = (
        assets.filter(underlying_price__isnull=False)
        .order_by()
        .values("underlying_source", "underlying_replay")
        .annotate(n=Count("id"), seen=Max("underlying_as_of"))
    )
    return sorted(
        (
            s.CatalogSourceOut(
                name=g["underlying_source"] or "manual",
                replay=g["underlying_replay"],
                items=g["n"],
                as_of=iso(g["seen"]),
            )
            for g in groups
        ),
        key=lambda x: (x.name, x.replay),
    )


def tokenized_watchlist(base: str) -> s.TokenizedWatchlistOut:
    assets = TokenizedAsset.objects.filter(on_watchlist=True)
    return s.TokenizedWatchlistOut(
        watchlist=[tokenized_asset_out(a) for a in assets],
        trading_api={
            "auto_route": "manual routing only",
            "session_desk": absolute(base, "/api/a2a/x402/tokenized/session-desk"),
        },
        paid=[sku_out(x) for x in on_sale().filter(family="tokenized")],
        as_of=iso(assets.aggregate(t=Max("updated_at"))["t"]),
        sources=ingested_sources(assets, venue_field="venue", seen_field="updated_at")
        + tokenized_underlying_sources(assets),
    )


def morning_brief(base: str) -> s.MorningBriefOut:
    piece = EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.MORNING_BRIEF).first()
    sku = Sku.objects.filter(sku="morning_brief").first()
    return s.MorningBriefOut(
        # Available only when the paid brief would be delivered: a piece recent enough exists
        # and it is on sale.
        available=piece is not None and sku is not None and sku_available(sku) and brief_available()[0],
        id=piece.id if piece else None,
        title=piece.title if piece else None,
        summary=piece.summary if piece else None,
        published_at=iso(piece.published_at) if piece else None,
        full_x402=absolute(base, "/api/a2a/x402/morning-brief"),
        price_usdc=sku.price_usdc if sku else 0.0,
        pro_x402=absolute(base, "/api/a2a/x402/morning-brief/pro"),
    )
