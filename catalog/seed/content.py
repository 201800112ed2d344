"""Seed content: the 28 teasers, the catalog agents, integrations, trading modules."""

from __future__ import annotations

# name -> (sku or "", title, summary, highlights). A teaser without an x402 SKU points
# to its X-API-Key route instead (credit_path).
TEASERS: dict[str, tuple[str, str, str, list[str]]] = {
    "morning-brief": (
        "morning_brief",
        "Morning brief",
        "The staff-written market brief, published every morning.",
        ["headline and summary free", "full brief paid", "session-callable"],
    ),
    "defi-yield-scout": (
        "defi_yield_scout",
        "DeFi yield scout",
        "Yields across lending and liquidity venues, ranked with risk notes.",
        ["ranked yields", "risk notes per venue"],
    ),
    "calendar-risk": (
        "calendar_risk",
        "Calendar risk",
        "Scheduled events that can move markets in the coming week.",
        ["event time", "expected impact"],
    ),
    "copy-signals": (
        "copy_signals",
        "Copy signals",
        "Desk signals you can copy; free tier delayed 10 minutes with masked routing.",
        ["real-time when paid", "routing addresses when paid"],
    ),
    "pre-trade-checklist": (
        "risk_decision_pack",
        "Pre-trade checklist",
        "The checks a desk runs before opening risk: regime, calendar, liquidity.",
        ["regime gate", "calendar gate", "go / no-go"],
    ),
    "daily-digest": (
        "news_digest",
        "Daily digest",
        "The day's ingested news, grouped by category.",
        ["per-category headlines", "unlock links"],
    ),
    "funding-hedge-desk": (
        "funding_hedge_desk",
        "Funding hedge desk",
        "Funding-rate carry opportunities with their hedge legs.",
        ["carry", "hedge legs"],
    ),
    "broker-scalp-desk": (
        "broker_scalp_desk",
        "Broker scalp desk",
        "Short-horizon setups on broker venues.",
        ["entry", "stop", "target"],
    ),
    "market-groups-digest": (
        "market_groups_digest",
        "Market groups digest",
        "What each market agent group reported.",
        ["per-group headlines"],
    ),
    "tech-regulatory-digest": (
        "tech_regulatory_digest",
        "Tech regulatory digest",
        "Technology regulation and enforcement that moves markets.",
        ["rules", "enforcement"],
    ),
    "grant-scout": (
        "grant_scout_desk",
        "Grant scout",
        "Open grants and programs for agent builders.",
        ["deadlines", "amounts", "fit"],
    ),
    "m2m-desk": (
        "m2m_session_desk",
        "Machine-to-machine desk",
        "A prepaid session: many desk calls, one x402 payment.",
        ["40 calls / 24 h", "200 calls / 7 days"],
    ),
    "pair-arb-desk": (
        "pair_arb_desk",
        "Pair arbitrage desk",
        "Cross-venue spreads worth trading after fees.",
        ["spread in bps", "venues"],
    ),
    "grid-range-desk": (
        "grid_range_desk",
        "Grid range desk",
        "Ranges, grid levels and invalidation for liquid pairs.",
        ["range", "grid levels"],
    ),
    "risk-exit-alerts": (
        "risk_exit_alerts",
        "Risk exit alerts",
        "Positions whose exit conditions have triggered.",
        ["trigger", "suggested exit"],
    ),
    "trend-momentum-desk": (
        "signals",
        "Trend and momentum desk",
        "Trend and momentum signals from the desks.",
        ["direction", "strength"],
    ),
    "exchange-earn-desk": (
        "defi_yield_scout",
        "Exchange earn desk",
        "Earn products across exchanges and on-chain venues, compared.",
        ["rates", "lockups"],
    ),
    "prediction-top3-daily": (
        "prediction_top3_daily",
        "Prediction top 3 daily",
        "The three prediction markets worth watching today.",
        ["odds", "volume", "closes"],
    ),
    "resolution-calendar": (
        "prediction_resolution_calendar",
        "Resolution calendar",
        "Prediction markets resolving soon.",
        ["resolution time", "current odds"],
    ),
    "event-graph": (
        "prediction_event_graph",
        "Event graph",
        "Linked prediction markets and their implied probabilities.",
        ["links", "implied odds"],
    ),
    "macro-gate": (
        "macro_gate",
        "Macro gate",
        "Whether today's macro calendar allows new risk.",
        ["gate state", "blocking events"],
    ),
    "execution-delegation": (
        "agent_subcontract_desk",
        "Execution delegation",
        "Delegate execution to the desk and report fills back.",
        ["activate", "report fill"],
    ),
    "mev-exec-hint-pack": (
        "mev_exec_hint_pack",
        "MEV execution hint pack",
        "Private routing and slippage guidance.",
        ["route", "slippage"],
    ),
    "federation-signal-resale": (
        "federation_signal_resale",
        "Federation signal resale",
        "Federated partner signals with attribution.",
        ["partner", "signal"],
    ),
    "intent-solver": (
        "intent_solver_desk",
        "Intent solver",
        "Solver quotes for a trading intent.",
        ["quotes", "best route"],
    ),
    "equity-intel": (
        "equity_news_digest",
        "Equity intel",
        "Equity news and intelligence.",
        ["headlines", "tickers"],
    ),
    "equity-scalp": (
        "",
        "Equity scalp",
        "Short-horizon equity setups (X-API-Key route).",
        ["entry", "stop", "target"],
    ),
    "equity-news-digest": (
        "equity_news_digest",
        "Equity news digest",
        "The latest equity news, summarised.",
        ["headlines", "unlock links"],
    ),
    # Teasers of feeds, served at their own paths.
    "feeds-indexer": (
        "",
        "Chain indexer feed",
        "Indexed on-chain activity feeding the desks.",
        ["blocks indexed", "transfers"],
    ),
    "prediction-partner-feed": (
        "prediction_starter_bundle",
        "Partner prediction feed",
        "Multi-venue prediction markets from partner venues.",
        ["venues", "markets"],
    ),
}
TEASER_CREDIT_PATHS = {
    "equity-intel": "/api/a2a/equity/intel",
    "equity-scalp": "/api/a2a/equity/scalp",
    "feeds-indexer": "/api/a2a/intel/latest",
}
INTERFACE_TEASER_NAMES = [n for n in TEASERS if n not in ("feeds-indexer", "prediction-partner-feed")]

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
        "skills": [
            {
                "id": "session-packs",
                "name": "Session packs",
                "description": "Buy and use prepaid desk sessions.",
                "tags": ["session", "x402"],
            },
            {
                "id": "desk-routing",
                "name": "Desk routing",
                "description": "Pick the desk for a trading question.",
                "tags": ["trading", "risk"],
            },
        ],
    },
    {
        "slug": "grant-scout",
        "name": "Grant Scout",
        "description": "Finds grants and programs for agent builders.",
        "skus": ["grant_scout_desk", "tech_regulatory_digest"],
        "skills": [
            {
                "id": "grant-search",
                "name": "Grant search",
                "description": "Open grants matched to a project.",
                "tags": ["grants"],
            },
        ],
    },
    {
        "slug": "equity-news",
        "name": "Equity News",
        "description": "Equity news catalog, unlocks and digests.",
        "skus": ["equity_news_digest", "news_unlock"],
        "skills": [
            {
                "id": "equity-news",
                "name": "Equity news",
                "description": "Latest equity news and digests.",
                "tags": ["equity", "news"],
            },
        ],
    },
    {
        "slug": "news",
        "name": "News",
        "description": "The news catalog: teasers free, full text by unlock, digests.",
        "skus": ["news_unlock", "news_digest", "sentiment", "market_groups_digest"],
        "skills": [
            {
                "id": "news-catalog",
                "name": "News catalog",
                "description": "Browse and unlock news items.",
                "tags": ["news"],
            },
            {
                "id": "news-digest",
                "name": "News digest",
                "description": "Digest of the latest news.",
                "tags": ["news", "digest"],
            },
        ],
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
        "skills": [
            {
                "id": "prediction-catalog",
                "name": "Prediction catalog",
                "description": "Markets across venues.",
                "tags": ["prediction"],
            },
            {
                "id": "prediction-picks",
                "name": "Daily picks",
                "description": "Top markets of the day.",
                "tags": ["prediction", "daily"],
            },
        ],
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
