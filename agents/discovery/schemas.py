"""Response bodies of the agent-facing discovery documents: agent cards, manifests, ERC-8004
files, the MCP catalog, the storefront, the marketplace, program health, catalog agents."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from a2a_service.core.schemas import Out
from billing.schemas import CreditBundleOut, CreditOnboardingOut, PaymentRouteState, SalesFigures
from catalog.selectors.schemas import SkuOut


class StorefrontSkuOut(SkuOut):
    sales_30d: int = Field(description="paid calls sold in the last 30 days, whatever paid them")
    sales_30d_by_rail: dict[str, int] = Field(
        default_factory=dict, description="sales_30d by the rail that paid (x402, credits, session, mcp_managed_pack)"
    )
    revenue_30d_usdc: float = Field(
        description="money taken for it (x402 and credits; a call a prepaid pack covered adds none)"
    )
    sales_all_time: int
    revenue_all_time_usdc: float
    trust_score: float = Field(
        description="percent of paid attempts in the last 30 days that were delivered; 0 when none"
    )


# --- discovery ------------------------------------------------------------------------
class StorefrontOut(Out):
    positioning: str
    storefront_skus: list[StorefrontSkuOut]
    growth_skus: list[SkuOut]
    prediction_entry_skus: list[SkuOut]
    primary_entry: str
    live_desks: str
    case_study: str
    client_bundle: str
    credit_prepay: CreditBundleOut
    credit_onboarding: CreditOnboardingOut
    payment_address: str
    chain: str
    well_known_x402: str
    validate_hint: str


class ManifestOut(Out):
    name: str
    description: str
    version: str
    base_url: str
    openapi: str
    agent_card: str
    well_known_x402: str
    network: str
    asset: str
    treasury_address: str
    payment_routes: list[PaymentRouteState]
    discovery: dict[str, str]
    attestation_signer: str = Field(description="address that signs regime_attestation events (EIP-191)")
    skus: list[SkuOut]


class AgentSkillOut(Out):
    """A skill the agent's JSON-RPC endpoint (POST /api/a2a/agents/{slug}, SendMessage with a data
    part {"skill": id}) answers: a SKU it sells (paid) or a free catalog."""

    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] = []
    price_usdc: float | None = Field(
        default=None, description="per call (the SKU's list price; a news item may carry its own); null: free"
    )
    inputModes: list[str] = ["application/json"]
    outputModes: list[str] = ["application/json"]


class WellKnownResourceOut(Out):
    sku: str
    resource: str
    method: str
    description: str
    mimeType: str
    price_usdc: float
    amount: str = Field(description="price in atomic USDC (6 decimals)")
    scheme: str
    network: str
    asset: str
    payTo: str
    status: str
    outputSchema: dict[str, Any] | None = Field(
        None, description="JSON schema of the 200 answer (the product's output model)"
    )
    accepts: list[dict[str, Any]] = Field(
        default_factory=list,
        description="every x402 version 2 payment requirement this resource's 402 offers (exact first)",
    )
    extensions: list[str] = Field(
        default_factory=list, description="the x402 extensions this resource's 402 declares"
    )


class WellKnownX402Out(Out):
    x402Version: int
    facilitator: str
    discovery: str = Field(
        "", description="the self-hosted facilitator's bazaar discovery list: the resources it settled"
    )
    network: str
    asset: str
    payTo: str
    payment_headers: dict[str, str]
    schemes: list[str] = Field(default_factory=list, description="the x402 schemes offered (per resource: accepts)")
    extensions: list[str] = Field(default_factory=list, description="the x402 extensions a 402 may declare")
    resources: list[WellKnownResourceOut]


class CatalogAgentOut(Out):
    slug: str
    name: str
    description: str
    skills: list[AgentSkillOut]
    skus: list[str]
    enabled: bool
    chat: str
    status: str
    manifest: str


AgentState = Literal["online", "degraded", "idle", "disabled"]


class AgentActivityOut(Out):
    """An agent's recorded answers (every surface: chat, A2A, MCP, marketplace)."""

    window_minutes: int = Field(description="the status window (AGENT_STATUS_WINDOW_MINUTES)")
    answers: int = Field(description="answers given in the window, whatever the outcome")
    errors: int = Field(description="answers in the window that failed on our side (5xx)")
    error_rate: float = Field(description="errors / answers in the window; 0 when no answer")
    median_latency_ms: float | None = Field(description="median latency in the window; null when no answer")
    by_surface: dict[str, int] = Field(description="answers in the window per surface")
    answers_24h: int
    errors_24h: int
    last_answer_at: str | None = Field(description="the newest answer that did not fail, any time")


class AgentHealthOut(Out):
    status: AgentState
    reason: str
    activity: AgentActivityOut


class PartnerStatusOut(Out):
    status: AgentState
    reason: str
    last_fetch: Literal["ok", "failed", "not_fetched"] = Field(
        description="the federation feed's last read of the partner's signals_url"
    )
    last_fetch_at: str | None
    last_fetch_error: str = Field(description="the kind of failure only; empty when none")
    signals_24h: int = Field(description="signals of the partner the feed observed in the last 24 h")
    last_signal_at: str | None


class PartnerAgentOut(Out):
    slug: str
    name: str
    description: str
    url: str
    agent_card_url: str | None
    skills: list[dict[str, Any]]
    health: PartnerStatusOut


class FederatedLocalAgentOut(CatalogAgentOut):
    health: AgentHealthOut


class FederatedAgentsOut(Out):
    local_agents: list[FederatedLocalAgentOut]
    partner_agents: list[PartnerAgentOut]
    count: int


class PartnerCatalogOut(Out):
    partners: list[PartnerAgentOut]
    count: int
    federation_sku: SkuOut | None
    how_to_join: str


class ComponentHealth(Out):
    status: Literal["ok", "down", "stale", "unknown"]
    latency_ms: float | None = None
    detail: str | None = None


class WorkerHealth(ComponentHealth):
    last_beat_at: str | None = None
    age_seconds: float | None = None


class FailedFeedHealth(Out):
    feed: str = Field(description="the feed of the source that failed: its URL, a venue, or a part")
    reason: str = Field(description="why, e.g. 'answered 500', 'malformed feed (...)', 'unreachable'")


class FeedAdapterHealth(Out):
    name: str = Field(description="the feed source (ingest_feeds --source NAME)")
    status: Literal["ok", "degraded", "failing", "never_run"] = Field(
        description="degraded: the last pass succeeded while some of the source's feeds failed (failed_feeds)"
    )
    last_attempt_at: str | None
    last_success_at: str | None
    last_error: str = Field(
        description="the kind of the last failure (empty when the last pass succeeded); the admin shows the reason"
    )
    rows: int = Field(description="rows the last successful pass wrote")
    replay: bool = Field(description="the last successful pass read recorded samples, not the live source")
    lag_seconds: float | None = Field(description="seconds since the last successful pass")
    consecutive_failures: int
    next_attempt_at: str | None = Field(description="backed off until then (after failures)")
    failed_feeds: list[FailedFeedHealth] = Field(
        default_factory=list, description="the source's feeds that failed in the last pass, and why"
    )
    oddities: int = Field(
        default=0,
        description="oddities of the source's data the last successful pass worked around "
        "(rows sent twice, ...)",
    )


HealthStatus = Literal["ok", "warming_up", "degraded"]
WarmupStep = Literal["worker_heartbeat", "feed_pass", "analytics_pass", "morning_brief"]


class ProgramHealthOut(Out):
    status: HealthStatus = Field(
        description="degraded: a part is down or stale, or a feed source failing; else warming_up while the "
        "first data of a new installation is not in (see warming_up); else ok"
    )
    warming_up: list[WarmupStep] = Field(
        description="what a new installation has not had yet: the worker's first heartbeat, a first pass of "
        "every feed source, the first analytics pass, the first published morning brief; empty once each is in"
    )
    checked_at: str
    database: ComponentHealth
    cache: ComponentHealth
    broker: ComponentHealth
    worker: WorkerHealth
    catalogs: dict[str, int] = Field(description="row counts of the catalogs")
    skus: dict[str, int] = Field(
        description=(
            "SKU counts: live (answers 402), disabled, products_built, coming_soon (on but not built)"
        )
    )
    agents: dict[str, int]
    venue_adapters: list[FeedAdapterHealth] = Field(
        description="every registered feed adapter, from its last passes; one failing or degraded "
        "makes the status degraded"
    )


class MarketplaceCapabilityOut(Out):
    name: str
    paid: bool
    sku: str | None
    available: bool


class MarketplaceHealthOut(Out):
    status: Literal["ok", "degraded"]
    capabilities: list[MarketplaceCapabilityOut]
    registration_targets: list[dict[str, str]]
    execute: str


class MarketplaceListingOut(Out):
    name: str
    description: str
    base_url: str
    network: str
    asset: str
    pay_to: str
    capabilities: list[MarketplaceCapabilityOut]
    skus: list[SkuOut]
    openapi: str


class M2MDiscoveryOut(Out):
    service: str
    version: str
    payment_routes: list[PaymentRouteState]
    free_endpoints: list[str]
    credit_endpoints: list[dict[str, Any]]
    session: dict[str, Any]
    x402: dict[str, Any]
    paid_sku_count: int


class LiveDeskOut(Out):
    sku: str
    path: str
    headline: str
    price_usdc: float
    tier: str | None
    product_type: str
    session_callable: bool
    available: bool
    free_teaser: str | None


class LiveDesksOut(Out):
    desks: list[LiveDeskOut]
    count: int
    session_pack: str


class RevenueDiscoveryOut(Out):
    hero_skus: list[SkuOut]
    signal_desk: dict[str, Any]
    session_billing: list[dict[str, Any]]
    partner_feed: dict[str, Any]


class IntegrationOut(Out):
    slug: str
    name: str
    category: str
    description: str
    url: str
    registration_target: bool


class IntegrationsOut(Out):
    integrations: list[IntegrationOut]
    count: int


class PackSummaryOut(Out):
    pack_id: str
    name: str
    framework: str
    description: str
    skill_md: str


class PacksOut(Out):
    packs: list[PackSummaryOut]
    count: int


class EditorialOut(Out):
    id: int
    kind: str
    title: str
    summary: str
    published_at: str | None


class CaseStudyOut(Out):
    metrics: SalesFigures
    partner_playbook: EditorialOut | None
    playbook_body: str | None


class RoadmapOut(Out):
    items: list[EditorialOut]
    count: int


class HeroPackOut(Out):
    hero_skus: list[SkuOut]
    promo: SkuOut | None
    promotion: EditorialOut | None
    total_price_usdc: float
    session_alternative: str


class McpToolOut(Out):
    name: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None = Field(
        None, description="JSON schema of the tool's result (the product's output model)"
    )
    paid: bool
    price_usdc: float | None
    http: dict[str, str]


class McpCatalogOut(Out):
    tools: list[McpToolOut]
    count: int
    endpoint: str = Field(
        "", description="the MCP server answering tools/list and tools/call (streamable HTTP)"
    )


class IndexRouteAgentOut(Out):
    agent: str
    routes: list[dict[str, Any]]
    hero_skus: list[str]


class IndexRoutesOut(Out):
    agents: list[IndexRouteAgentOut]
    x402_routes: int


# --- agents ---------------------------------------------------------------------------
class AgentsCatalogOut(Out):
    agents: list[CatalogAgentOut]
    count: int


class AgentStatusOut(Out):
    slug: str
    name: str
    status: AgentState = Field(description="measured: see docs/protocols.md, agent status")
    reason: str
    skus_live: int
    chat: str
    activity: AgentActivityOut


class AgentManifestOut(Out):
    slug: str
    name: str
    description: str
    skills: list[AgentSkillOut]
    skus: list[SkuOut]
    endpoints: dict[str, str]
    payment_routes: list[PaymentRouteState]


class ChatSuggestionOut(Out):
    sku: str
    path: str
    price_usdc: float
    headline: str
    agents: list[str] = Field(default_factory=list, description="the catalog agents that sell this SKU")


class ChatPayRouteOut(Out):
    method: Literal["GET"] = "GET"
    url: str = Field(description="the exact call, with the query parameters of the question")
    header: str = Field(description="what to send with it")


class ChatNextCallOut(Out):
    """The concrete call that buys the answer, by each payment route."""

    sku: str
    params: dict[str, Any] = Field(description="the product's parameters understood from the question")
    price_usdc: float
    price_atomic: int
    available: bool = Field(description="whether the product has content to sell now (else 503, uncharged)")
    unavailable_reason: str | None = None
    x402: ChatPayRouteOut = Field(description="per call: answers 402 with the requirements, pay and retry")
    credits: list[ChatPayRouteOut] = Field(description="prepaid credits: the X-API-Key routes")
    session: ChatPayRouteOut | None = Field(None, description="prepaid session (session-callable SKUs)")
    in_chat: str = Field(
        description="or send this chat message again with X-API-Key, X-Session-Token or an x402 proof"
    )


class ChatChargeOut(Out):
    rail: Literal["credits", "x402", "session"]
    amount_usdc: float | None = Field(description="what this answer cost (None for a session call)")
    balance_usdc: float | None = Field(None, description="credits left (credits)")
    calls_remaining: int | None = Field(None, description="session calls left (session)")


class ChatOut(Out):
    agent: str
    reply: str
    suggestions: list[ChatSuggestionOut]
    links: dict[str, str]
    intent: str | None = Field(None, description="the SKU the question was understood as (None: not found)")
    confidence: float = 0.0
    entities: dict[str, Any] = Field(default_factory=dict, description="what was recognised in the message")
    missing: list[str] = Field(default_factory=list, description="parameters the product refused, and why")
    next_call: ChatNextCallOut | None = None
    teaser: dict[str, Any] | None = Field(
        None, description="free excerpt of the product's current answer to the question (the teaser cut)"
    )
    result: dict[str, Any] | None = Field(None, description="the product's content, when this message paid")
    charged: ChatChargeOut | None = Field(None, description="the payment this answer took (None: free)")


class AgentHubStatusOut(Out):
    status: AgentState = Field(description="the hub's own, from its recorded answers (agent agenthub)")
    reason: str
    activity: AgentActivityOut
    agents: list[str] = Field(description="slugs of the enabled catalog agents")
    agent_statuses: list[AgentStatusOut]
    partners: list[PartnerAgentOut]
    counts: dict[str, int] = Field(description="catalog agents and partners per status")
    chat: str


class MarketplaceExecuteOut(Out):
    capability: str
    result: dict[str, Any]
