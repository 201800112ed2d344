"""Response bodies. Each is a pydantic model: the view builds it, and drf-spectacular
publishes the same model as the response schema, so payload and document agree."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, RootModel

from a2a_service.core.schemas import (  # noqa: F401  (re-exported: apps read them as s.*)
    ErrorOut,
    HTTPValidationError,
    Out,
    ProductUnavailableOut,
    RateLimitedOut,
    UnauthorizedOut,
    ValidationErrorItem,
)


# --- shared pieces --------------------------------------------------------------------
class X402Rail(Out):
    network: str
    facilitator: str
    hint: str


class DisabledRail(Out):
    enabled: bool
    hint: str


class PaymentAlternatives(Out):
    rails: list[str]
    x402: X402Rail
    skyfire: DisabledRail


class SkuOut(Out):
    sku: str
    path: str
    env_price: str
    default: float = Field(description="default (list) price in USDC")
    status: Literal["live_x402", "coming_soon", "unavailable", "disabled"] = Field(
        description=(
            "live_x402: on sale, answers 402 unpaid; coming_soon: listed but its product is not "
            "built yet (answers 503); unavailable: built but the x402 route is down; disabled: "
            "switched off by staff"
        )
    )
    marketplace_paid: bool
    tier: str | None = Field(description="L, A, B, C, D; null when untiered")
    hero: bool | None = None
    free_teaser: str | None = None
    headline: str
    price_usdc: float
    price_usdc_base: float
    intel_only: bool
    product_type: str = Field(description="live_intel or execution_intelligence")
    session_callable: bool


class StorefrontSkuOut(SkuOut):
    sales_30d: int = Field(description="settled sales in the last 30 days")
    revenue_30d_usdc: float
    sales_all_time: int
    revenue_all_time_usdc: float
    trust_score: float = Field(
        description="percent of paid attempts in the last 30 days that were delivered; 0 when none"
    )


class CreditBundleOut(Out):
    bundle_usdc: float
    bonus_pct: float
    bonus_usdc: float
    total_credits_usdc: float
    chain: str
    token: str
    register_endpoint: str
    topup_endpoint: str
    instructions: str


class CreditOnboardingOut(Out):
    register_endpoint: str
    topup_endpoint: str
    instructions: str


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


class TopupStepOut(Out):
    step: int
    title: str
    method: str | None = None
    url: str | None = None
    body_example: dict[str, Any] | None = None
    response_fields: list[str] | None = None
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    min_usdc: float | None = None
    note: str | None = None
    header: str | None = None
    examples: list[str] | None = None


class TopupExampleOut(Out):
    name: str
    method: str
    url: str
    price_usdc_hint: float
    header_required: str


class TopupInfoOut(Out):
    chain: str
    token: str
    contract: str
    treasury_address: str
    min_deposit_usdc: float
    credit_bundle: CreditBundleOut
    credit_prepay_guide_url: str
    payment_alternatives: PaymentAlternatives
    instructions: str
    steps: list[TopupStepOut]
    examples: list[TopupExampleOut]


class BundleInfoOut(Out):
    credit_bundle: CreditBundleOut
    min_deposit_usdc: float
    treasury_address: str
    contract: str
    credit_billing_enabled: bool


class CreditPrepayGuideOut(Out):
    title: str
    for_whom: str
    credit_billing_enabled: bool
    treasury_address: str
    contract: str
    chain: str
    min_deposit_usdc: float
    credit_bundle: CreditBundleOut
    steps: list[TopupStepOut]
    topup_info_url: str
    x402_alternative: str


class PaymentRouteState(Out):
    name: str
    available: bool = Field(description="whether this payment route is accepted by this deployment now")
    how: str


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


class AgentInterfaceOut(Out):
    url: str
    protocolBinding: str
    protocolVersion: str


class AgentProviderOut(Out):
    organization: str
    url: str


class AgentCapabilitiesOut(Out):
    streaming: bool
    pushNotifications: bool


class AgentSkillOut(Out):
    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] = []
    inputModes: list[str] = ["application/json"]
    outputModes: list[str] = ["application/json"]


class AgentCardOut(Out):
    """A2A agent card (protocol 1.0 JSON)."""

    name: str
    description: str
    supportedInterfaces: list[AgentInterfaceOut]
    provider: AgentProviderOut
    version: str
    documentationUrl: str
    capabilities: AgentCapabilitiesOut
    defaultInputModes: list[str]
    defaultOutputModes: list[str]
    skills: list[AgentSkillOut]


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


class WellKnownX402Out(Out):
    x402Version: int
    facilitator: str
    network: str
    asset: str
    payTo: str
    payment_headers: dict[str, str]
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


class PartnerAgentOut(Out):
    slug: str
    name: str
    description: str
    url: str
    agent_card_url: str | None
    skills: list[dict[str, Any]]


class FederatedAgentsOut(Out):
    local_agents: list[CatalogAgentOut]
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


class ProgramHealthOut(Out):
    status: Literal["ok", "degraded"]
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
    venue_adapters: list[dict[str, Any]] = Field(description="per ingested venue: rows and newest update")


class DeskScoreOut(Out):
    desk: str
    trades: int
    wins: int
    losses: int
    win_rate: float | None = Field(description="wins / trades; null with no closed trades")
    expectancy_pct: float | None = Field(description="mean pnl per closed trade, percent")
    max_drawdown_pct: float | None = Field(
        description="largest peak-to-trough of the cumulative pnl, percent"
    )
    kill_state: Literal["no_data", "active", "killed"]


class ScorecardOut(Out):
    window_days: int
    generated_at: str
    kill_drawdown_pct: float
    overall: DeskScoreOut
    desks: list[DeskScoreOut]


class PerformanceOut(Out):
    window_days: int
    closed_trades: int
    win_rate: float | None
    expectancy_pct: float | None
    scorecard: str
    note: str


class TeaserOut(Out):
    name: str
    title: str
    summary: str
    highlights: list[str]
    sku: str | None
    paid_path: str | None
    price_usdc: float | None
    credit_path: str | None
    session_callable: bool
    available: bool = Field(description="whether the paid product is on sale now and has content to deliver")
    unavailable_reason: str | None = Field(
        default=None, description="why available is false (not built, switched off, no data yet)"
    )
    updated_at: str


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


class SalesFigures(Out):
    window_days: int
    sales: int
    revenue_usdc: float
    paying_wallets: int
    top_skus: list[dict[str, Any]]


class CaseStudyOut(Out):
    metrics: SalesFigures
    partner_playbook: EditorialOut | None
    playbook_body: str | None


class RoadmapOut(Out):
    items: list[EditorialOut]
    count: int


class Erc8004RegistryOut(Out):
    standard: str
    chain: str
    chain_id: int
    identity_registry: str | None
    agent_id: str | None
    registered: bool
    agent_card: str
    agent_wallet: str


class Erc8004EndpointOut(Out):
    name: str
    endpoint: str
    version: str | None = None


class Erc8004AgentCardOut(Out):
    type: str
    name: str
    description: str
    image: str
    endpoints: list[Erc8004EndpointOut]
    registrations: list[dict[str, Any]]
    supportedTrust: list[str]


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
    paid: bool
    price_usdc: float | None
    http: dict[str, str]


class McpCatalogOut(Out):
    tools: list[McpToolOut]
    count: int


class IndexRouteAgentOut(Out):
    agent: str
    routes: list[dict[str, Any]]
    hero_skus: list[str]


class IndexRoutesOut(Out):
    agents: list[IndexRouteAgentOut]
    x402_routes: int


class ConversionOut(Out):
    window_days: int
    generated_at: str
    hits: dict[str, int] = Field(
        description="free endpoint hits, teaser views and 402 challenges in the window"
    )
    payment_attempts: int
    sales: int
    challenge_to_sale_pct: float | None
    skus_live: int
    skus_activated: int = Field(description="SKUs with at least one sale in the window")
    revenue_usdc: dict[str, float] = Field(description="revenue per window: 24h, 7d, 30d")


class MonetizationStatusOut(Out):
    credit_billing_enabled: bool
    payment_routes: list[PaymentRouteState]
    skus_live: int
    skus_disabled: int
    network: str
    treasury_address: str
    facilitator: str


class ClientBundleOut(Out):
    skus: list[SkuOut]
    total_price_usdc: float
    note: str


class SurgeSkuOut(Out):
    sku: str
    price_usdc: float
    price_usdc_base: float
    surge_multiplier: float


class SurgeOut(Out):
    regime: str | None
    regime_as_of: str | None
    skus: list[SurgeSkuOut]


class WhaleTierOut(Out):
    name: str
    min_balance_usdc: float
    bonus_pct: float
    perks: list[str]


class WhaleCatalogOut(Out):
    tiers: list[WhaleTierOut]
    status_endpoint: str
    token_endpoint: str


class FacilitatorHealthOut(Out):
    facilitator: str
    reachable: bool
    latency_ms: float | None
    supported: list[dict[str, Any]]
    error: str | None
    checked_at: str


class PlatformStatsOut(Out):
    generated_at: str
    skus_live: int
    skus_total: int
    news_items: int
    news_items_24h: int
    catalog_agents: int
    partner_agents: int
    prediction_markets: int
    exchange_markets: int
    telemetry_nodes_online: int
    sales_all_time: int
    revenue_all_time_usdc: float
    paying_wallets: int


class RpcIndexEntryOut(Out):
    name: str
    url: str
    affiliate_url: str | None
    probes_24h: int
    success_rate_24h: float | None
    median_latency_ms_24h: float | None
    last_block: int | None
    last_probed_at: str | None


class RpcIndexOut(Out):
    endpoints: list[RpcIndexEntryOut]
    ranking: list[str]


class X402StatusOut(Out):
    live_skus: int = Field(description="number of SKUs that answer 402 now (the skus list)")
    coming_soon: list[str] = Field(
        description="SKUs switched on but whose product is not built yet; not on sale, not counted"
    )
    network: str
    asset: str
    pay_to: str
    facilitator: str
    skus: list[SkuOut]
    performance_30d: SalesFigures


class StrategyOut(Out):
    slug: str
    name: str
    description: str
    mode: Literal["live", "scout"]
    sku: str | None
    paid_path: str | None


class StrategiesOut(Out):
    strategies: list[StrategyOut]
    live: int
    scout: int


class RegimeOut(Out):
    regime: str
    confidence: float | None
    as_of: str | None
    inputs: dict[str, Any]
    gate: str


# --- market data ----------------------------------------------------------------------
class NewsItemOut(Out):
    id: int
    title: str
    teaser: str
    price_usdc: float
    ingested_at: str = Field(description="ISO 8601 without zone designator (UTC)")
    unlock: str


class NewsCatalogOut(Out):
    items: list[NewsItemOut]
    credit_billing_enabled: bool
    teaser_only: bool
    unlock_hint: str
    x402_unlock_hint: str
    payment_alternatives: PaymentAlternatives
    news_digest_x402: str
    news_digest_price_usdc: float
    agentverse_news: str


class EquityItemOut(NewsItemOut):
    source: str
    category: str


class EquityCatalogOut(Out):
    items: list[EquityItemOut]
    count: int
    unlock_price_usdc: float
    digest_x402: str


class MarketAgentNewsItemOut(NewsItemOut):
    group: str


class MarketAgentNewsOut(Out):
    items: list[MarketAgentNewsItemOut]
    groups: dict[str, int]
    digest_x402: str


class PredictionMarketOut(Out):
    venue: str
    id: str
    question: str
    category: str
    yes_price: float | None
    no_price: float | None
    volume_usd: float | None
    closes_at: str | None
    url: str


class PredictionVenueCatalogOut(Out):
    venue: str
    markets: list[PredictionMarketOut]
    count: int
    paid: list[SkuOut]


class PredictionCatalogOut(Out):
    venues: dict[str, int]
    markets: list[PredictionMarketOut]
    count: int
    paid: list[SkuOut]


class ExchangeMarketOut(Out):
    exchange: str
    symbol: str
    base: str
    quote: str
    last_price: float | None
    volume_24h_usd: float | None
    spread_bps: float | None
    updated_at: str


class ExchangeMarketsOut(Out):
    markets: list[ExchangeMarketOut]
    exchanges: list[str]
    count: int


class TokenizedAssetOut(Out):
    symbol: str
    name: str
    venue: str
    underlying: str
    last_price: float | None
    change_24h_pct: float | None
    updated_at: str


class TokenizedWatchlistOut(Out):
    watchlist: list[TokenizedAssetOut]
    trading_api: dict[str, Any]
    paid: list[SkuOut]


class MorningBriefOut(Out):
    available: bool = Field(description="a brief is published and the paid brief is on sale now")
    id: int | None
    title: str | None
    summary: str | None
    published_at: str | None
    full_x402: str
    price_usdc: float
    pro_x402: str


class TelemetryCatalogOut(Out):
    links: dict[str, str]
    feeds: list[str]
    prices: dict[str, float]


class TelemetryStatusOut(Out):
    nodes_total: int
    nodes_online: int
    regions: int
    countries: int
    median_latency_ms: float | None
    last_seen_at: str | None


class TelemetryNodeOut(Out):
    region: str
    country: str
    online: bool


class TelemetryNodesOut(Out):
    nodes: list[TelemetryNodeOut]
    count: int


# --- agents ---------------------------------------------------------------------------
class AgentsCatalogOut(Out):
    agents: list[CatalogAgentOut]
    count: int


class AgentStatusOut(Out):
    slug: str
    name: str
    status: Literal["online", "disabled"]
    skus_live: int
    chat: str


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


class ChatOut(Out):
    agent: str
    reply: str
    suggestions: list[ChatSuggestionOut]
    links: dict[str, str]


class AgentHubStatusOut(Out):
    status: Literal["ok"]
    agents: list[str]
    chat: str


class SpreadSnapshotAcceptedOut(Out):
    accepted: int
    ids: list[int]


class MarketplaceExecuteOut(Out):
    capability: str
    result: dict[str, Any]


# --- x402 -----------------------------------------------------------------------------
class PaymentRequirementsV1Out(Out):
    scheme: str
    network: str
    maxAmountRequired: str
    resource: str
    description: str | None = None
    mimeType: str | None = None
    payTo: str
    maxTimeoutSeconds: int
    asset: str
    extra: dict[str, Any] | None = None


class PaymentRequiredOut(Out):
    """402 body: x402 version 1 requirements, plus hints. The PAYMENT-REQUIRED header holds
    the same requirements in version 2 form (base64 JSON)."""

    x402Version: int
    error: str = Field(description="payment_required, or the reason the proof was refused")
    detail: str
    accepts: list[PaymentRequirementsV1Out]
    price_usdc: float
    hint: str
    alternatives: dict[str, dict[str, str]]


# --- credits --------------------------------------------------------------------------
class RegisterOut(Out):
    api_key: str = Field(description="shown once; only its hash is stored")
    wallet_address: str
    credit_balance_usdc: float
    treasury_address: str
    rotated: bool = Field(description="true when an existing wallet proved ownership and got a new key")


class OwnershipMessageOut(Out):
    wallet_address: str
    message: str = Field(
        description="sign with the wallet (EIP-191 personal_sign); POST it to /api/a2a/account/register "
        "as `signature` with this `nonce`"
    )
    nonce: str = Field(description="send back with the signature; each challenge proves ownership once")
    expires_at: str


class OwnershipProofRequiredOut(ErrorOut):
    """401 to a registration without a valid proof: a fresh challenge to sign and retry with."""

    wallet_address: str
    message: str | None = Field(None, description="a fresh challenge to sign (absent when none was issued)")
    nonce: str | None = None
    expires_at: str | None = None
    message_endpoint: str


class DepositOut(Out):
    tx_hash: str
    log_index: int
    block_number: int
    amount_usdc: float
    bonus_usdc: float
    state: str = Field(
        description="pending_confirmations, credited, below_minimum, unmatched (waits for the wallet to prove "
        "ownership) or reorged (orphaned by a chain reorganisation; its credit was reversed)"
    )
    seen_at: str
    credited_at: str | None


class LedgerRowOut(Out):
    id: int
    amount_usdc: float
    balance_after_usdc: float
    kind: str
    reference: str
    sku: str | None
    created_at: str


class AccountOut(Out):
    wallet_address: str
    credit_balance_usdc: float
    ownership_verified: bool = Field(
        description="false: the wallet has not signed a challenge yet, and its deposits wait (unmatched) until "
        "it does (POST /api/a2a/account/register with a signature)"
    )
    credit_billing_enabled: bool
    treasury_address: str
    deposits: list[DepositOut]
    ledger: list[LedgerRowOut]


class InsufficientCreditOut(ErrorOut):
    balance_usdc: float
    price_usdc: float
    topup: dict[str, Any]
    x402_alternative: str | None


class ChargeUnconfirmedOut(ErrorOut):
    reference: str = Field(
        description="the ledger reference this call's debit carries if it committed: look for it in "
        "GET /api/a2a/account before retrying"
    )


class PaidCallUnavailable(RootModel[ProductUnavailableOut | ChargeUnconfirmedOut]):
    """503 on a paid path: the product is not available (nothing charged), or (with X-API-Key)
    the database connection failed during the debit and whether it committed could not be
    read (code charge_unconfirmed)."""


class X402PathRefusal(RootModel[PaymentRequiredOut | InsufficientCreditOut]):
    """402 on an x402 path: the payment requirements, or (when paying with X-API-Key) not
    enough credit."""
