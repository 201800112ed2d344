"""Every free operation: path -> selector -> response model. To find an endpoint's
code, find its path here; the selector of the same name builds the payload."""

from __future__ import annotations

from django.urls import path

from a2a_service.core.inputs import (
    Limit20Query,
    Limit40Query,
    NewsCatalogQuery,
    PredictionCatalogQuery,
)
from catalog import selectors as sel
from catalog.api import schemas as s
from catalog.api.views import (
    AgentFrameworkPackView,
    MarketplaceExecuteView,
    SpreadSnapshotIngestView,
    free_view,
)

D, M, T, A, MK, MCP = "discovery", "market-data", "telemetry", "agents", "marketplace", "mcp"

# (path, selector, response, tag, summary[, query model])
FREE_GETS: list[tuple] = [
    (".well-known/agent.json", sel.agent_card, s.AgentCardOut, D, "A2A agent card"),
    (
        ".well-known/x402",
        sel.well_known_x402,
        s.WellKnownX402Out,
        D,
        "x402 payment discovery: every paid resource",
    ),
    ("api/a2a/ai-agent.json", sel.manifest, s.ManifestOut, D, "Service manifest"),
    ("api/a2a/agents/federated", sel.federated_agents, s.FederatedAgentsOut, D, "Federated agents"),
    (
        "api/a2a/program/health",
        sel.program_health,
        s.ProgramHealthOut,
        D,
        "Aggregate health: database, cache, broker, worker heartbeat, catalogs, SKUs, agents, venues",
    ),
    (
        "api/a2a/program/scorecard-30d",
        sel.scorecard,
        s.ScorecardOut,
        D,
        "30-day desk scorecard: expectancy, win rate, drawdown, kill state",
    ),
    (
        "api/a2a/partner/catalog",
        sel.partner_catalog,
        s.PartnerCatalogOut,
        D,
        "Federated partner agent catalog",
    ),
    ("api/a2a/partner/grants-readiness", sel.grants_readiness, s.TeaserOut, D, "Grants readiness teaser"),
    (
        "api/a2a/marketplace/health",
        sel.marketplace_health,
        s.MarketplaceHealthOut,
        MK,
        "Marketplace health, capabilities, registration targets",
    ),
    (
        "api/a2a/marketplace/listing",
        sel.marketplace_listing,
        s.MarketplaceListingOut,
        MK,
        "Full listing for external marketplaces",
    ),
    ("api/a2a/discovery/m2m", sel.m2m_discovery, s.M2MDiscoveryOut, D, "Machine-to-machine discovery"),
    ("api/a2a/discovery/live-desks", sel.live_desks, s.LiveDesksOut, D, "Live desks"),
    (
        "api/a2a/discovery/storefront",
        sel.storefront,
        s.StorefrontOut,
        D,
        "Storefront: SKUs with sales, credit prepay",
    ),
    (
        "api/a2a/discovery/revenue",
        sel.revenue_discovery,
        s.RevenueDiscoveryOut,
        D,
        "Hero SKUs, signal desk, session billing, partner feed",
    ),
    ("api/a2a/discovery/integrations", sel.integrations, s.IntegrationsOut, D, "Monetization integrations"),
    ("api/a2a/discovery/agent-frameworks", sel.packs, s.PacksOut, D, "Agent-framework skill packs"),
    ("api/a2a/discovery/case-study", sel.case_study, s.CaseStudyOut, D, "Metrics and partner playbook"),
    ("api/a2a/discovery/onchain-ai-roadmap", sel.roadmap, s.RoadmapOut, D, "On-chain AI roadmap"),
    (
        "api/a2a/registry/erc8004",
        sel.erc8004_registry,
        s.Erc8004RegistryOut,
        D,
        "ERC-8004 registry discovery",
    ),
    (
        "api/a2a/registry/erc8004/agent-card",
        sel.erc8004_agent_card,
        s.Erc8004AgentCardOut,
        D,
        "ERC-8004 registration file (agent card)",
    ),
    ("api/a2a/promotion/hero-pack", sel.hero_pack, s.HeroPackOut, D, "Promotion pack"),
    ("api/a2a/account/bundle-info", sel.bundle_info, s.BundleInfoOut, D, "Credit bundle information"),
    ("api/a2a/mcp/catalog", sel.mcp_catalog, s.McpCatalogOut, D, "Free MCP tool catalog"),
    (
        "api/a2a/index/routes",
        sel.index_routes,
        s.IndexRoutesOut,
        D,
        "x402 routes and hero SKUs per discovery agent",
    ),
    ("api/a2a/monetization/conversion", sel.conversion, s.ConversionOut, D, "Conversion funnel snapshot"),
    (
        "api/a2a/monetization/status",
        sel.monetization_status,
        s.MonetizationStatusOut,
        D,
        "Monetization state",
    ),
    ("api/a2a/client-bundle", sel.client_bundle, s.ClientBundleOut, D, "Curated 3-SKU bundle"),
    ("api/a2a/feeds/indexer/teaser", sel.indexer_teaser, s.TeaserOut, D, "Chain indexer feed teaser"),
    (
        "api/a2a/prediction/partner-feed/teaser",
        sel.partner_feed_teaser,
        s.TeaserOut,
        D,
        "Partner prediction feed teaser",
    ),
    (
        "api/a2a/pricing/surge",
        sel.pricing_surge,
        s.SurgeOut,
        D,
        "Live surge catalog: current over base price",
    ),
    ("api/a2a/account/whale/catalog", sel.whale_catalog, s.WhaleCatalogOut, D, "Whale tier catalog"),
    (
        "api/a2a/facilitator/health",
        sel.facilitator_health,
        s.FacilitatorHealthOut,
        D,
        "Payment-facilitator readiness (no payment)",
    ),
    ("api/a2a/platform/stats", sel.platform_stats, s.PlatformStatsOut, D, "Public read-only statistics"),
    (
        "api/a2a/account/credit-prepay-guide",
        sel.credit_prepay_guide,
        s.CreditPrepayGuideOut,
        D,
        "Onboarding guide for agents without x402 wallets",
    ),
    ("api/a2a/account/topup-info", sel.topup_info, s.TopupInfoOut, D, "Top-up information"),
    (
        "api/a2a/benchmarks/rpc",
        sel.rpc_index,
        s.RpcIndexOut,
        D,
        "RPC speed index from the service's own probes",
    ),
    ("api/a2a/performance", sel.performance, s.PerformanceOut, D, "Public performance teaser"),
    ("api/a2a/x402/status", sel.x402_status, s.X402StatusOut, D, "Commercial catalog and 30-day performance"),
    ("api/mcp/strategies", sel.strategies, s.StrategiesOut, MCP, "Trading modules, live or scout"),
    ("api/mcp/regime", sel.regime, s.RegimeOut, MCP, "Current market regime"),
    # market data
    ("api/a2a/exchange/markets", sel.exchange_markets, s.ExchangeMarketsOut, M, "Spot market discovery"),
    (
        "api/a2a/tokenized/watchlist",
        sel.tokenized_watchlist,
        s.TokenizedWatchlistOut,
        M,
        "Tokenized watchlist and trading-API state",
    ),
    (
        "api/a2a/equity/catalog",
        sel.equity_catalog,
        s.EquityCatalogOut,
        M,
        "Equity news teasers and unlock price",
        Limit40Query,
    ),
    (
        "api/a2a/market-agents/news",
        sel.market_agent_news,
        s.MarketAgentNewsOut,
        M,
        "News from market agent groups",
        Limit20Query,
    ),
    (
        "api/a2a/news/catalog",
        sel.news_catalog,
        s.NewsCatalogOut,
        M,
        "News catalog (teasers)",
        NewsCatalogQuery,
    ),
    (
        "api/a2a/predictionvenue/catalog",
        sel.predictionvenue_catalog,
        s.PredictionVenueCatalogOut,
        M,
        "Short-term prediction markets of the venue",
        Limit40Query,
    ),
    (
        "api/a2a/prediction/catalog",
        sel.prediction_catalog,
        s.PredictionCatalogOut,
        M,
        "Multi-venue prediction catalog",
        PredictionCatalogQuery,
    ),
    (
        "api/a2a/morning-brief",
        sel.morning_brief,
        s.MorningBriefOut,
        M,
        "Morning brief (headline and summary)",
    ),
    # telemetry
    (
        "api/a2a/telemetry/catalog",
        sel.telemetry_catalog,
        s.TelemetryCatalogOut,
        T,
        "Telemetry links, feeds, prices",
    ),
    ("api/a2a/telemetry/status", sel.telemetry_status, s.TelemetryStatusOut, T, "Telemetry public snapshot"),
    ("api/a2a/telemetry/nodes", sel.telemetry_nodes, s.TelemetryNodesOut, T, "Community node map"),
    # agents
    ("api/a2a/agents/catalog", sel.agents_catalog, s.AgentsCatalogOut, A, "Catalog agents"),
    (
        "api/a2a/agents/<str:slug>/manifest",
        sel.agent_manifest,
        s.AgentManifestOut,
        A,
        "Catalog agent manifest",
    ),
]


def _op_id(route: str) -> str:
    return "free_" + route.replace("api/a2a/", "").replace("api/", "").replace("<str:", "").replace(
        ">", ""
    ).replace("/", "_").replace("-", "_").replace(".", "_")


urlpatterns = [
    path(
        route,
        free_view(
            selector,
            out,
            tag=tag,
            summary=summary,
            query=query[0] if query else None,
            operation_id=_op_id(route),
        ).as_view(),
    )
    for route, selector, out, tag, summary, *query in FREE_GETS
] + [
    path(
        "api/a2a/teaser/<str:name>",
        free_view(
            sel.teaser,
            s.TeaserOut,
            tag="teasers",
            summary="Free teaser",
            metric="teaser",
            operation_id="teaser",
        ).as_view(),
    ),
    path(
        "api/a2a/agents/<str:slug>/status",
        free_view(
            sel.agent_status,
            s.AgentStatusOut,
            tag=A,
            summary="Catalog agent status",
            operation_id="agent_status",
        ).as_view(),
    ),
    path(
        "api/a2a/agenthub/status",
        free_view(
            sel.agenthub_status,
            s.AgentHubStatusOut,
            tag=MK,
            summary="Agent hub status",
            operation_id="agenthub_status",
        ).as_view(),
    ),
    path("api/a2a/discovery/agent-frameworks/<str:pack_id>", AgentFrameworkPackView.as_view()),
    path("api/a2a/internal/spread-snapshot", SpreadSnapshotIngestView.as_view()),
    path("api/a2a/marketplace/execute", MarketplaceExecuteView.as_view()),
]
