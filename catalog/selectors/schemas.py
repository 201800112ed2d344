"""The catalog's response bodies (SKUs, teasers, market data, telemetry, desks). Each is a
pydantic model: a selector builds it, the view returns it, and drf-spectacular publishes the same
model as the view's response schema, so payload and document agree. Billing's models are in billing/schemas.py, the agent-facing
discovery documents' in agents/discovery/schemas.py."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from a2a_service.core.schemas import (  # noqa: F401  (re-exported: views read them as s.*)
    ChargeUnconfirmedOut,
    ErrorOut,
    HTTPValidationError,
    InsufficientCreditOut,
    Out,
    PaidCallUnavailable,
    PaymentRequiredOut,
    PaymentRequirementsV1Out,
    ProductUnavailableOut,
    RateLimitedOut,
    UnauthorizedOut,
    ValidationErrorItem,
    X402PathRefusal,
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


class LiveFillsOut(Out):
    fills: int = Field(
        description="fills agents reported on the desk's delegated orders in the window, each within "
        "DELEGATION_FILL_PRICE_TOLERANCE_PCT of the ingested market at its time"
    )
    notional_usdc: float = Field(description="their size x price")
    fees_usdc: float
    realized_pnl_usdc: float = Field(
        description="closed against earlier fills (FIFO per delegation and symbol), net of fees"
    )
    unchecked_fills: int = Field(
        default=0, description="fills in the window without the market check, left out of every figure here"
    )
    basis: str = Field(
        default="self_reported",
        description="self_reported: the agents' own reports, checked against the market price; shown apart "
        "from the desk's record and never part of its win_rate, expectancy or drawdown",
    )


class DeskScoreOut(Out):
    desk: str
    trades: int = Field(description="signals closed in the window")
    wins: int
    losses: int
    win_rate: float | None = Field(description="wins / trades; null with no closed trades")
    avg_win_pct: float | None = Field(description="mean pnl of the winning signals, percent")
    avg_loss_pct: float | None = Field(description="mean pnl of the losing signals (zero included), percent")
    expectancy_pct: float | None = Field(description="mean pnl per closed trade, percent")
    max_drawdown_pct: float | None = Field(
        description="largest peak-to-trough of the cumulative pnl, percent"
    )
    signals: int = Field(description="signals published in the window (open or closed)")
    open_signals: int = Field(description="signals open now")
    kill_state: Literal["no_data", "active", "killed", "disabled"]
    killed_at: str | None = Field(default=None, description="when the desk was killed (it publishes nothing)")
    kill_reason: str | None = None
    live_fills: LiveFillsOut | None = Field(
        default=None,
        description="self-reported executions beside the paper record (never part of win_rate or the pnl "
        "figures above): the fills reported on execution-delegation orders that passed the market-price "
        "check (null when delegation is not installed)",
    )


class ScorecardOut(Out):
    window_days: int
    generated_at: str
    kill_drawdown_pct: float = Field(description="the default kill threshold (a desk may have its own)")
    overall: DeskScoreOut
    desks: list[DeskScoreOut]


class PerformanceOut(Out):
    window_days: int
    closed_trades: int
    win_rate: float | None
    avg_win_pct: float | None
    avg_loss_pct: float | None
    expectancy_pct: float | None
    max_drawdown_pct: float | None
    desks: int = Field(description="desks with signals in the window")
    killed_desks: list[str]
    scorecard: str
    note: str
    live_fills: LiveFillsOut | None = Field(
        default=None, description="every desk's reported real fills in the window (execution delegation)"
    )


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
    excerpt: dict[str, Any] | None = Field(
        default=None,
        description="a cut of the paid product's current content (its first items, text shortened); "
        "null when it has nothing fresh to deliver or its content depends on the caller",
    )
    updated_at: str


class ClientBundleOut(Out):
    skus: list[SkuOut]
    total_price_usdc: float
    note: str


class RpcIndexEntryOut(Out):
    name: str
    url: str
    affiliate_url: str | None
    region: str = Field(
        description="where the endpoint is, as its operator or staff set it; empty if unknown"
    )
    country: str = Field(description="ISO 3166 alpha-2; empty if unknown")
    chain_id: int | None = Field(description="eth_chainId at its newest successful probe")
    client_version: str | None = Field(description="web3_clientVersion at its newest successful probe")
    probes_24h: int
    success_rate_24h: float | None = Field(description="percent of the probes that answered eth_blockNumber")
    median_latency_ms_24h: float | None = Field(description="median latency of the successful probes")
    p95_latency_ms_24h: float | None = Field(description="95th percentile latency of the successful probes")
    last_block: int | None
    last_lag_blocks: int | None = Field(
        description="blocks behind the best head among the endpoints of its network, at its newest probe"
    )
    median_lag_blocks_24h: float | None
    last_ok: bool | None = Field(description="whether its newest probe answered; null: never probed")
    last_error: str | None = Field(description="why its newest probe failed, when it did")
    last_probed_at: str | None
    replay: bool = Field(description="true when any of its probes went to the local replay's stand-in")


class RpcIndexOut(Out):
    endpoints: list[RpcIndexEntryOut]
    ranking: list[str] = Field(description="endpoint names, fastest first (see method)")
    window_hours: int
    method: str
    as_of: str | None = Field(description="ISO 8601 UTC: the newest probe")
    sources: list[CatalogSourceOut]


class StrategyOut(Out):
    slug: str
    name: str
    description: str
    mode: Literal["live", "scout"] = Field(
        description="live: enough closed signals (DESK_LIVE_MIN_SIGNALS) in 30 days with a positive expectancy and "
        "not killed; scout otherwise"
    )
    mode_reason: str
    state: Literal["no_data", "active", "killed", "disabled"]
    closed_signals_30d: int
    open_signals: int
    win_rate: float | None
    expectancy_pct: float | None
    max_drawdown_pct: float | None
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
class CatalogSourceOut(Out):
    """Where a free catalog's rows came from (provenance of ingested data)."""

    name: str
    items: int = Field(description="rows of this catalog from this source")
    replay: bool = Field(description="true: recorded samples from the local replay, not the live source")
    venue: str | None = Field(default=None, description="the venue within the source, when it has several")
    as_of: str | None = Field(
        default=None, description="ISO 8601 UTC: when the newest of these rows was seen"
    )


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
    as_of: str | None = Field(default=None, description="ISO 8601 UTC: when the newest row was ingested")
    sources: list[CatalogSourceOut] = Field(default_factory=list, description="the sources of the rows")


class EquityItemOut(NewsItemOut):
    source: str
    category: str


class EquityCatalogOut(Out):
    items: list[EquityItemOut]
    count: int
    unlock_price_usdc: float
    digest_x402: str
    as_of: str | None = Field(default=None, description="ISO 8601 UTC: when the newest row was ingested")
    sources: list[CatalogSourceOut] = Field(default_factory=list, description="the sources of the rows")


class MarketAgentNewsItemOut(NewsItemOut):
    group: str


class MarketAgentNewsOut(Out):
    items: list[MarketAgentNewsItemOut]
    groups: dict[str, int]
    digest_x402: str
    as_of: str | None = Field(default=None, description="ISO 8601 UTC: when the newest row was ingested")
    sources: list[CatalogSourceOut] = Field(default_factory=list, description="the sources of the rows")


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
    as_of: str | None = Field(None, description="the freshest observation among the markets' sources")
    sources: list[CatalogSourceOut] = Field(default_factory=list)


class PredictionCatalogOut(Out):
    venues: dict[str, int]
    markets: list[PredictionMarketOut]
    count: int
    paid: list[SkuOut]
    as_of: str | None = Field(None, description="the freshest observation among the markets' sources")
    sources: list[CatalogSourceOut] = Field(default_factory=list)


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
    as_of: str | None = Field(default=None, description="when the newest market row was seen (ISO 8601, UTC)")
    sources: list[CatalogSourceOut] = Field(default_factory=list)


class TokenizedAssetOut(Out):
    symbol: str
    name: str
    venue: str
    underlying: str
    last_price: float | None
    change_24h_pct: float | None
    updated_at: str
    underlying_price: float | None = Field(
        default=None, description="the underlying's reference quote (equities feed), in USD"
    )
    underlying_as_of: str | None = Field(default=None, description="ISO 8601 UTC: that quote's own time")
    premium_pct: float | None = Field(
        default=None, description="last_price / underlying_price - 1, in percent (+: above the underlying)"
    )
    premium_bps: float | None = Field(default=None, description="the same in basis points")


class TokenizedWatchlistOut(Out):
    watchlist: list[TokenizedAssetOut]
    trading_api: dict[str, Any]
    paid: list[SkuOut]
    as_of: str | None = Field(
        default=None, description="when the newest watchlist price was seen (ISO 8601, UTC)"
    )
    sources: list[CatalogSourceOut] = Field(default_factory=list)


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
    median_latency_ms: float | None = Field(description="median latency of the online nodes' last probes")
    last_seen_at: str | None
    as_of: str | None = Field(description="ISO 8601 UTC: when the newest node was last probed or seen")
    sources: list[CatalogSourceOut]


class TelemetryNodeOut(Out):
    region: str
    country: str
    online: bool


class TelemetryNodesOut(Out):
    nodes: list[TelemetryNodeOut]
    count: int
    as_of: str | None = Field(description="ISO 8601 UTC: when the newest node was last probed or seen")
    sources: list[CatalogSourceOut]


class SpreadSnapshotAcceptedOut(Out):
    accepted: int
    ids: list[int]


class PartnerFeedTeaserOut(TeaserOut):
    """The partner prediction feed's teaser, with a real excerpt of the current markets."""

    markets: list[PredictionMarketOut] = Field(
        description="the most traded open markets across venues now (empty when the feeds have none)"
    )
    venues: dict[str, int] = Field(description="open markets per venue")
    as_of: str | None = Field(description="ISO 8601 UTC: when the newest excerpt row was seen")
    sources: list[CatalogSourceOut] = Field(description="where the excerpt's rows came from")
