"""Seed content: the teasers of no product, the catalog agents, integrations, trading modules."""

from __future__ import annotations

from catalog.products.registry import TeaserSpec, specs_all

# Teasers of no product: their content is served at X-API-Key routes or free feed paths.
# Every other teaser is declared by the product it sells (ProductSpec.teasers).
FREE_TEASERS: tuple[TeaserSpec, ...] = (
    TeaserSpec(
        name="equity-scalp",
        title="Equity scalp",
        summary="Short-horizon equity setups (X-API-Key route).",
        highlights=("entry", "stop", "target"),
        credit_path="/api/a2a/equity/scalp",
    ),
    TeaserSpec(
        name="feeds-indexer",
        title="Chain indexer feed",
        summary="Indexed on-chain activity feeding the desks.",
        highlights=("blocks indexed", "transfers"),
        credit_path="/api/a2a/intel/latest",
    ),
)
# Teasers served at their own paths rather than /api/a2a/teaser/<name>.
FEED_TEASER_NAMES = ("feeds-indexer", "prediction-partner-feed")


def teasers_all() -> list[tuple[TeaserSpec, str]]:
    """Every teaser with the SKU it sells ("" for none): the products' first, in display order."""
    return [(t, spec.sku) for spec in specs_all() for t in spec.teasers] + [(t, "") for t in FREE_TEASERS]


def interface_teaser_names() -> list[str]:
    """The teasers the interface lists under /api/a2a/teaser/<name>."""
    return [t.name for t, _ in teasers_all() if t.name not in FEED_TEASER_NAMES]


# The catalog agents. An agent's skills are not written here: they are the SKUs it sells (while on
# sale) and the free catalogs in free_skills, so it lists only what its endpoint answers.
AGENTS: list[dict] = [
    {
        "slug": "m2m-desk",
        "name": "M2M Desk",
        "description": "Sells prepaid desk sessions and routes calls to the trading and risk desks.",
        "skus": [
            "m2m_session_desk",
            "m2m_session_enterprise",
            "morning_brief",
            "grid_range_desk",
            "risk_exit_alerts",
            "risk_decision_pack",
        ],
        "free_skills": [],
    },
    {
        "slug": "grant-scout",
        "name": "Grant Scout",
        "description": "Finds grants and programs for agent builders.",
        "skus": ["grant_scout_desk", "tech_regulatory_digest"],
        "free_skills": [],
    },
    {
        "slug": "equity-news",
        "name": "Equity News",
        "description": "Equity news catalog, unlocks and digests.",
        "skus": ["equity_news_digest", "news_unlock"],
        "free_skills": ["news_catalog"],
    },
    {
        "slug": "news",
        "name": "News",
        "description": "The news catalog: teasers free, full text by unlock, digests.",
        "skus": ["news_unlock", "news_digest", "sentiment", "market_groups_digest"],
        "free_skills": ["news_catalog", "market_agent_news"],
    },
    {
        "slug": "prediction",
        "name": "Prediction",
        "description": "Prediction-market catalogs, daily picks, calendars and alerts.",
        "skus": [
            "prediction_starter_bundle",
            "prediction_top3_daily",
            "prediction_resolution_calendar",
            "prediction_event_graph",
            "prediction_divergence_alerts",
        ],
        "free_skills": [],
    },
]

INTEGRATIONS: list[dict] = [
    {
        "slug": "x402",
        "name": "x402 per-call payments",
        "category": "payments",
        "description": "HTTP 402 challenge on every paid path; pay USDC on Base and retry with the proof.",
        "docs_path": "/.well-known/x402",
    },
    {
        "slug": "credit-prepay",
        "name": "Prepaid credits",
        "category": "payments",
        "description": "Register a wallet, deposit USDC to the treasury, call with X-API-Key.",
        "docs_path": "/api/a2a/account/credit-prepay-guide",
    },
    {
        "slug": "prepaid-sessions",
        "name": "Prepaid sessions",
        "category": "payments",
        "description": "Buy a session pack by x402, then call session SKUs with the token.",
        "docs_path": "/api/a2a/teaser/m2m-desk",
    },
    {
        "slug": "webhook-push",
        "name": "Webhook push",
        "category": "delivery",
        "description": "Signed push events for signal desk pack holders.",
        "docs_path": "/api/a2a/x402/webhooks/outcome-pricing",
    },
    {
        "slug": "mcp",
        "name": "MCP tool catalog",
        "category": "agent-protocol",
        "description": "The catalog as MCP tools.",
        "docs_path": "/api/a2a/mcp/catalog",
    },
    {
        "slug": "a2a-agent-card",
        "name": "A2A agent card",
        "category": "agent-protocol",
        "description": "Agent card for A2A clients.",
        "docs_path": "/.well-known/agent.json",
        "registration_target": True,
    },
    {
        "slug": "erc8004",
        "name": "ERC-8004 identity registry",
        "category": "registry",
        "description": "On-chain agent identity and registration file.",
        "docs_path": "/api/a2a/registry/erc8004",
        "registration_target": True,
    },
    {
        "slug": "marketplace-listing",
        "name": "Marketplace listing",
        "category": "marketplace",
        "description": "Full listing for external agent marketplaces; execution via marketplace/execute.",
        "docs_path": "/api/a2a/marketplace/listing",
        "registration_target": True,
    },
    {
        "slug": "agent-frameworks",
        "name": "Agent framework skill packs",
        "category": "sdk",
        "description": "SKILL.md packs that teach agent frameworks to call this service.",
        "docs_path": "/api/a2a/discovery/agent-frameworks",
    },
    {
        "slug": "openapi",
        "name": "OpenAPI 3.1",
        "category": "sdk",
        "description": "The full interface for code generators.",
        "docs_path": "/api/a2a/openapi.json",
    },
]

TRADING_MODULES: list[tuple[str, str, str, str]] = [
    ("grid-range", "Grid range", "Range detection and grid levels.", "grid_range_desk"),
    ("pair-arb", "Pair arbitrage", "Cross-venue spread capture.", "pair_arb_desk"),
    ("funding-hedge", "Funding hedge", "Funding carry with hedge legs.", "funding_hedge_desk"),
    ("broker-scalp", "Broker scalp", "Short-horizon broker setups.", "broker_scalp_desk"),
    ("trend-momentum", "Trend momentum", "Trend and momentum signals.", "signals"),
    ("dca-routing", "DCA routing", "Accumulation slicing and routing.", "dca_routing_desk"),
    ("intent-solver", "Intent solver", "Solver quotes for intents.", "intent_solver_desk"),
    ("mev-exec-hint", "MEV execution hints", "Private routing guidance.", "mev_exec_hint_pack"),
]

PACKS: list[tuple[str, str, str, str]] = [
    (
        "langchain",
        "LangChain tools",
        "LangChain",
        "Python tools for LangChain agents: discovery, x402, credits.",
    ),
    ("crewai", "CrewAI tools", "CrewAI", "CrewAI tools that pay per call or use prepaid credits."),
    (
        "openai-agents",
        "OpenAI Agents SDK tools",
        "OpenAI Agents SDK",
        "function tools for the OpenAI Agents SDK.",
    ),
    ("mcp-client", "MCP client", "Model Context Protocol", "Use the catalog from any MCP client."),
]
