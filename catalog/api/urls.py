"""The catalog's free operations: path -> selector -> response model. To find an endpoint's
code, find its path here (or run `manage.py show_routes`); the selector named in the row builds
the payload. Billing's free routes are in billing/api/free_urls.py, the discovery documents' in
agents/urls.py."""

from __future__ import annotations

from django.urls import path

from a2a_service.core.freeviews import FreeGet, cacheable_routes, free_urlpatterns
from a2a_service.core.inputs import (
    Limit20Query,
    Limit40Query,
    NewsCatalogQuery,
    PredictionCatalogQuery,
)
from catalog.api.views import SpreadSnapshotIngestView
from catalog.selectors import desks, market, prediction_feed, skus, teasers, telemetry
from catalog.selectors import schemas as s

D, M, T, MCP = "discovery", "market-data", "telemetry", "mcp"
UNKNOWN_TEASER = "unknown teaser {name!r}; see /api/a2a/discovery/storefront for the teasers"


def _unknown_teaser(name: str) -> str:
    return UNKNOWN_TEASER.format(name=name)


FREE_GETS: list[FreeGet] = [
    FreeGet(
        route="api/a2a/program/scorecard-30d",
        selector=desks.scorecard,
        response=s.ScorecardOut,
        tag=D,
        summary="30-day desk scorecard: expectancy, win rate, drawdown, kill state",
    ),
    FreeGet(
        route="api/a2a/partner/grants-readiness",
        selector=teasers.grants_readiness,
        response=s.TeaserOut,
        tag=D,
        summary="Grants readiness teaser",
        not_found=_unknown_teaser("grant-scout"),
    ),
    FreeGet(
        route="api/a2a/client-bundle",
        selector=skus.client_bundle,
        response=s.ClientBundleOut,
        tag=D,
        summary="Curated 3-SKU bundle",
    ),
    FreeGet(
        route="api/a2a/feeds/indexer/teaser",
        selector=teasers.indexer_teaser,
        response=s.TeaserOut,
        tag=D,
        summary="Chain indexer feed teaser",
        not_found=_unknown_teaser("feeds-indexer"),
    ),
    FreeGet(
        route="api/a2a/prediction/partner-feed/teaser",
        selector=prediction_feed.partner_feed_teaser,
        response=s.PartnerFeedTeaserOut,
        tag=D,
        summary="Partner prediction feed teaser",
        not_found=_unknown_teaser("prediction-partner-feed"),
    ),
    FreeGet(
        route="api/a2a/benchmarks/rpc",
        selector=telemetry.rpc_index,
        response=s.RpcIndexOut,
        tag=D,
        summary="RPC speed index from the service's own probes",
    ),
    FreeGet(
        route="api/a2a/performance",
        selector=desks.performance,
        response=s.PerformanceOut,
        tag=D,
        summary="Public performance teaser",
    ),
    FreeGet(
        route="api/mcp/strategies",
        selector=desks.strategies,
        response=s.StrategiesOut,
        tag=MCP,
        summary="Trading modules, live or scout",
    ),
    FreeGet(
        route="api/mcp/regime",
        selector=desks.regime,
        response=s.RegimeOut,
        tag=MCP,
        summary="Current market regime",
    ),
    # market data
    FreeGet(
        route="api/a2a/exchange/markets",
        selector=market.exchange_markets,
        response=s.ExchangeMarketsOut,
        tag=M,
        summary="Spot market discovery",
    ),
    FreeGet(
        route="api/a2a/tokenized/watchlist",
        selector=market.tokenized_watchlist,
        response=s.TokenizedWatchlistOut,
        tag=M,
        summary="Tokenized watchlist and trading-API state",
    ),
    FreeGet(
        route="api/a2a/equity/catalog",
        selector=market.equity_catalog,
        response=s.EquityCatalogOut,
        tag=M,
        summary="Equity news teasers and unlock price",
        query=Limit40Query,
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/market-agents/news",
        selector=market.market_agent_news,
        response=s.MarketAgentNewsOut,
        tag=M,
        summary="News from market agent groups",
        query=Limit20Query,
    ),
    FreeGet(
        route="api/a2a/news/catalog",
        selector=market.news_catalog,
        response=s.NewsCatalogOut,
        tag=M,
        summary="News catalog (teasers)",
        query=NewsCatalogQuery,
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/predictionvenue/catalog",
        selector=market.predictionvenue_catalog,
        response=s.PredictionVenueCatalogOut,
        tag=M,
        summary="Short-term prediction markets of the venue",
        query=Limit40Query,
    ),
    FreeGet(
        route="api/a2a/prediction/catalog",
        selector=market.prediction_catalog,
        response=s.PredictionCatalogOut,
        tag=M,
        summary="Multi-venue prediction catalog",
        query=PredictionCatalogQuery,
    ),
    FreeGet(
        route="api/a2a/morning-brief",
        selector=market.morning_brief,
        response=s.MorningBriefOut,
        tag=M,
        summary="Morning brief (headline and summary)",
    ),
    # telemetry
    FreeGet(
        route="api/a2a/telemetry/catalog",
        selector=telemetry.telemetry_catalog,
        response=s.TelemetryCatalogOut,
        tag=T,
        summary="Telemetry links, feeds, prices",
    ),
    FreeGet(
        route="api/a2a/telemetry/status",
        selector=telemetry.telemetry_status,
        response=s.TelemetryStatusOut,
        tag=T,
        summary="Telemetry public snapshot",
    ),
    FreeGet(
        route="api/a2a/telemetry/nodes",
        selector=telemetry.telemetry_nodes,
        response=s.TelemetryNodesOut,
        tag=T,
        summary="Community node map",
    ),
    # teasers
    FreeGet(
        route="api/a2a/teaser/<str:name>",
        selector=teasers.teaser,
        response=s.TeaserOut,
        tag="teasers",
        summary="Free teaser",
        metric="teaser",
        operation_id="teaser",
        cacheable=True,
        not_found=UNKNOWN_TEASER,
    ),
]

CACHEABLE_ROUTES = cacheable_routes(FREE_GETS)

urlpatterns = free_urlpatterns(FREE_GETS) + [
    path(
        "api/a2a/internal/spread-snapshot",
        SpreadSnapshotIngestView.as_view(),
        name="internal_spread_snapshot_ingest",
    ),
]
