"""The agent surfaces' routes: the discovery documents (path -> selector -> response model, built
by agents/discovery/), the catalog agents and the agent hub. To find an endpoint's code, find its
path here (or run `manage.py show_routes`)."""

from __future__ import annotations

from django.urls import path

from a2a_service.core.freeviews import FreeGet, cacheable_routes, free_urlpatterns
from agents.a2a import cards
from agents.a2a import schemas as a2a_s
from agents.api import AgentChatView, AgentHubChatView, AgentHubSlashView, AgentHubView, AgentView
from agents.discovery import catalog_agents, documents, health, marketplace
from agents.discovery import schemas as s
from agents.discovery.catalog_agents import UNKNOWN_AGENT
from agents.discovery.views import AgentFrameworkPackView, MarketplaceExecuteView
from agents.erc8004 import documents as erc8004
from agents.erc8004 import schemas as es

D, A, MK = "discovery", "agents", "marketplace"

FREE_GETS: list[FreeGet] = [
    FreeGet(
        route=".well-known/agent-card.json",
        selector=cards.agent_card_v1,
        response=a2a_s.AgentCardV1Out,
        tag=D,
        summary="A2A agent card (protocol 1.0): JSON-RPC interface, skills, X-API-Key scheme, a2a-x402 extension",
        cacheable=True,
    ),
    FreeGet(
        route=".well-known/agent.json",
        selector=cards.agent_card_v03,
        response=a2a_s.AgentCardV03Out,
        tag=D,
        summary="A2A agent card (protocol 0.3 form)",
        cacheable=True,
    ),
    FreeGet(
        route=".well-known/x402",
        selector=documents.well_known_x402,
        response=s.WellKnownX402Out,
        tag=D,
        summary="x402 payment discovery: every paid resource",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/ai-agent.json",
        selector=documents.manifest,
        response=s.ManifestOut,
        tag=D,
        summary="Service manifest",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/agents/federated",
        selector=catalog_agents.federated_agents,
        response=s.FederatedAgentsOut,
        tag=D,
        summary="Federated agents",
    ),
    FreeGet(
        route="api/a2a/program/health",
        selector=health.program_health,
        response=s.ProgramHealthOut,
        tag=D,
        summary="Aggregate health: database, cache, broker, worker heartbeat, catalogs, SKUs, agents, venues",
    ),
    FreeGet(
        route="api/a2a/partner/catalog",
        selector=catalog_agents.partner_catalog,
        response=s.PartnerCatalogOut,
        tag=D,
        summary="Federated partner agent catalog",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/marketplace/health",
        selector=marketplace.marketplace_health,
        response=s.MarketplaceHealthOut,
        tag=MK,
        summary="Marketplace health, capabilities, registration targets",
    ),
    FreeGet(
        route="api/a2a/marketplace/listing",
        selector=marketplace.marketplace_listing,
        response=s.MarketplaceListingOut,
        tag=MK,
        summary="Full listing for external marketplaces",
    ),
    FreeGet(
        route="api/a2a/discovery/m2m",
        selector=documents.m2m_discovery,
        response=s.M2MDiscoveryOut,
        tag=D,
        summary="Machine-to-machine discovery",
    ),
    FreeGet(
        route="api/a2a/discovery/live-desks",
        selector=documents.live_desks,
        response=s.LiveDesksOut,
        tag=D,
        summary="Live desks",
    ),
    FreeGet(
        route="api/a2a/discovery/storefront",
        selector=documents.storefront,
        response=s.StorefrontOut,
        tag=D,
        summary="Storefront: SKUs with sales, credit prepay",
    ),
    FreeGet(
        route="api/a2a/discovery/revenue",
        selector=documents.revenue_discovery,
        response=s.RevenueDiscoveryOut,
        tag=D,
        summary="Hero SKUs, signal desk, session billing, partner feed",
    ),
    FreeGet(
        route="api/a2a/discovery/integrations",
        selector=documents.integrations,
        response=s.IntegrationsOut,
        tag=D,
        summary="Monetization integrations",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/discovery/agent-frameworks",
        selector=documents.packs,
        response=s.PacksOut,
        tag=D,
        summary="Agent-framework skill packs",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/discovery/case-study",
        selector=documents.case_study,
        response=s.CaseStudyOut,
        tag=D,
        summary="Metrics and partner playbook",
    ),
    FreeGet(
        route="api/a2a/discovery/onchain-ai-roadmap",
        selector=documents.roadmap,
        response=s.RoadmapOut,
        tag=D,
        summary="On-chain AI roadmap",
    ),
    FreeGet(
        route=".well-known/agent-registration.json",
        selector=erc8004.registration_file,
        response=es.Erc8004RegistrationOut,
        tag=D,
        summary="ERC-8004 registration file (registration-v1): the agentURI of our identity-registry entry",
        operation_id="erc8004_registration_file",
    ),
    FreeGet(
        route="api/a2a/registry/erc8004",
        selector=erc8004.registry_discovery,
        response=es.Erc8004RegistryOut,
        tag=D,
        summary="ERC-8004 registry discovery: the registration file plus registry, chain and agent id",
    ),
    FreeGet(
        route="api/a2a/registry/erc8004/agent-card",
        selector=erc8004.registration_file,
        response=es.Erc8004RegistrationOut,
        tag=D,
        summary="ERC-8004 registration file (registration-v1)",
    ),
    FreeGet(
        route="api/a2a/promotion/hero-pack",
        selector=documents.hero_pack,
        response=s.HeroPackOut,
        tag=D,
        summary="Promotion pack",
    ),
    FreeGet(
        route="api/a2a/mcp/catalog",
        selector=documents.mcp_catalog,
        response=s.McpCatalogOut,
        tag=D,
        summary="Free MCP tool catalog",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/index/routes",
        selector=documents.index_routes,
        response=s.IndexRoutesOut,
        tag=D,
        summary="x402 routes and hero SKUs per discovery agent",
    ),
    # agents
    FreeGet(
        route="api/a2a/agents/catalog",
        selector=catalog_agents.agents_catalog,
        response=s.AgentsCatalogOut,
        tag=A,
        summary="Catalog agents",
        cacheable=True,
    ),
    FreeGet(
        route="api/a2a/agents/<str:slug>/manifest",
        selector=catalog_agents.agent_manifest,
        response=s.AgentManifestOut,
        tag=A,
        summary="Catalog agent manifest",
        not_found=UNKNOWN_AGENT,
    ),
    FreeGet(
        route="api/a2a/agents/<str:slug>/status",
        selector=catalog_agents.agent_status,
        response=s.AgentStatusOut,
        tag=A,
        summary="Catalog agent status",
        operation_id="agent_status",
        not_found=UNKNOWN_AGENT,
    ),
    FreeGet(
        route="api/a2a/agenthub/status",
        selector=catalog_agents.agenthub_status,
        response=s.AgentHubStatusOut,
        tag=MK,
        summary="Agent hub status",
        operation_id="agenthub_status",
    ),
]

CACHEABLE_ROUTES = cacheable_routes(FREE_GETS)

urlpatterns = free_urlpatterns(FREE_GETS) + [
    path(
        "api/a2a/discovery/agent-frameworks/<str:pack_id>",
        AgentFrameworkPackView.as_view(),
        name="agent_framework_pack",
    ),
    path("api/a2a/marketplace/execute", MarketplaceExecuteView.as_view(), name="marketplace_execute"),
]

# The catalog agents and the hub. After every app's routes (a2a_service/urls.py): the slug
# pattern would match any path under api/a2a/agents/.
agent_urlpatterns = [
    path("api/a2a/agents/<str:slug>", AgentView.as_view(), name="agent_get"),
    path("api/a2a/agents/<str:slug>/chat", AgentChatView.as_view(), name="agent_chat"),
    path("api/a2a/agenthub", AgentHubView.as_view(), name="agenthub_get"),
    path("api/a2a/agenthub/", AgentHubSlashView.as_view(), name="agenthub_create"),
    path("api/a2a/agenthub/chat", AgentHubChatView.as_view(), name="agenthub_chat_create"),
]
