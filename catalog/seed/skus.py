"""The SKU table. Paths are routes (code); prices, status and presentation seed the
database once and are then the staff's to edit in the admin.

Columns: sku, path below /api/a2a/x402, price USDC, tier, hero, intel_only,
product_type, family, teaser name, session_callable, headline.
The first 23 rows are the interface's SKU table; the rest are its further paid paths,
priced by us.
"""

from __future__ import annotations

from dataclasses import dataclass

LIVE = "live_intel"
EXEC = "execution_intelligence"


@dataclass(frozen=True)
class SkuRow:
    sku: str
    path: str
    price: str
    tier: str
    hero: bool
    intel_only: bool
    product_type: str
    family: str
    teaser: str
    session_callable: bool
    headline: str
    marketplace_paid: bool = False
    client_bundle: bool = False

    @property
    def full_path(self) -> str:
        return "/api/a2a/x402" + self.path

    @property
    def env_price(self) -> str:
        return "X402_PRICE_" + self.sku.upper()


R = SkuRow
SKU_TABLE: tuple[SkuRow, ...] = (
    R("news_unlock", "/news/unlock", "0.1", "L", True, False, LIVE, "news", "daily-digest", False,
      "Full text of one news item (query news_id); charged at the item's own price"),
    R("news_digest", "/news/digest", "0.1", "", False, False, LIVE, "news", "daily-digest", True,
      "Digest of the latest ingested news, grouped by category"),
    R("morning_brief_promo", "/morning-brief/promo", "0.06", "A", True, False, LIVE, "brief", "morning-brief", False,
      "Today's morning brief at the promotional price"),
    R("morning_brief", "/morning-brief", "0.08", "A", True, False, LIVE, "brief", "morning-brief", True,
      "Today's morning brief: the staff-written market brief in full", client_bundle=True),
    R("prediction_starter_bundle", "/prediction/starter-bundle", "0.39", "A", True, False, LIVE, "prediction",
      "prediction-top3-daily", False, "Prediction starter bundle: top markets, resolution calendar and event graph"),
    R("grid_range_desk", "/trading/grid-range-desk", "0.15", "D", True, True, EXEC, "trading", "grid-range-desk", True,
      "Grid range desk: ranges, grid levels and invalidation for liquid pairs"),
    R("m2m_session_desk", "/session/desk-pack", "1.5", "A", True, False, LIVE, "session", "m2m-desk", False,
      "Desk session pack: 40 calls in 24 hours across the brief and the trading and risk desks"),
    R("m2m_session_enterprise", "/session/enterprise-pack", "4.99", "", False, False, LIVE, "session", "m2m-desk", False,
      "Enterprise session pack: 200 calls in 7 days"),
    R("risk_exit_alerts", "/trading/risk-exit-alerts", "0.06", "B", True, False, LIVE, "risk", "risk-exit-alerts", True,
      "Risk exit alerts: positions whose exit conditions have triggered"),
    R("risk_decision_pack", "/risk/decision-pack", "0.12", "B", True, False, LIVE, "risk", "pre-trade-checklist", True,
      "Risk decision pack: pre-trade checklist, regime and calendar gates in one call", client_bundle=True),
    R("agent_subcontract_desk", "/agent/subcontract-desk", "0.22", "A", True, False, LIVE, "agent",
      "execution-delegation", False, "Agent subcontract desk: delegate a research or execution task to the desk"),
    R("sentiment", "/sentiment", "0.05", "L", True, False, LIVE, "intel", "daily-digest", True,
      "Market sentiment computed from ingested news and markets", marketplace_paid=True, client_bundle=True),
    R("telemetry_detail", "/telemetry/detail", "0.04", "L", True, False, LIVE, "telemetry", "", False,
      "Telemetry detail: the full node table with latency, versions and regions"),
    R("copy_signals", "/copy/signals", "0.15", "D", True, False, LIVE, "trading", "copy-signals", True,
      "Copy signals in real time with routing addresses"),
    R("mev_exec_hint_pack", "/trading/mev-exec-hint-pack", "0.18", "D", False, True, EXEC, "trading",
      "mev-exec-hint-pack", False, "MEV execution hints: private routing and slippage guidance"),
    R("federation_signal_resale", "/federation/signal-resale", "0.15", "C", False, True, LIVE, "federation",
      "federation-signal-resale", False, "Federated partner signals, resold with attribution"),
    R("intent_solver_desk", "/trading/intent-solver", "0.25", "D", False, True, EXEC, "trading", "intent-solver", False,
      "Intent solver desk: solver quotes for a trading intent"),
    R("defi_yield_scout", "/defi/yield-scout", "0.1", "C", True, False, LIVE, "defi", "defi-yield-scout", False,
      "DeFi yield scout: ranked yields with risk notes"),
    R("tokenized_auto_route", "/tokenized/auto-route", "0.2", "D", False, True, EXEC, "tokenized", "", False,
      "Tokenized auto-route: venue routing for tokenized assets (manual routing only)"),
    R("signal_desk_pack", "/webhooks/signal-desk-pack", "0.29", "", False, False, LIVE, "webhooks", "copy-signals", False,
      "Signal desk pack: webhook push of copy signals, regime attestations and alerts"),
    R("grant_scout_desk", "/intel/grant-scout-desk", "0.06", "", False, False, LIVE, "intel", "grant-scout", False,
      "Grant scout desk: open grants and programs matched to agent builders"),
    R("tech_regulatory_digest", "/intel/tech-regulatory-digest", "0.08", "", False, False, LIVE, "intel",
      "tech-regulatory-digest", False, "Tech regulatory digest: rules and enforcement that move markets"),
    R("equity_news_digest", "/equity/news/digest", "0.1", "", False, False, LIVE, "equity", "equity-news-digest", True,
      "Equity news digest: the latest equity news, summarised"),
    # Further paid paths of the interface (prices ours).
    R("market_groups_digest", "/intel/market-groups-digest", "0.08", "", False, False, LIVE, "intel",
      "market-groups-digest", True, "Market groups digest: what each market agent group reported"),
    R("pair_arb_desk", "/trading/pair-arb-desk", "0.15", "", False, True, EXEC, "trading", "pair-arb-desk", True,
      "Pair arbitrage desk: cross-venue spreads worth trading"),
    R("dca_routing_desk", "/trading/dca-routing-desk", "0.12", "", False, True, EXEC, "trading", "", True,
      "DCA routing desk: slice schedule and venue routing for accumulation"),
    R("funding_hedge_desk", "/trading/funding-hedge-desk", "0.15", "", False, True, EXEC, "trading",
      "funding-hedge-desk", True, "Funding hedge desk: funding-rate carry and hedge legs"),
    R("broker_scalp_desk", "/trading/broker-scalp-desk", "0.15", "", False, True, EXEC, "trading",
      "broker-scalp-desk", True, "Broker scalp desk: short-horizon setups on broker venues"),
    R("webhook_outcome_pricing", "/webhooks/outcome-pricing", "0.01", "", False, False, LIVE, "webhooks", "", False,
      "Outcome-based webhook pricing: the price of each pushed event kind"),
    R("prediction_top3_daily", "/prediction/top3-daily", "0.06", "", False, False, LIVE, "prediction",
      "prediction-top3-daily", True, "Top 3 prediction markets of the day"),
    R("prediction_resolution_calendar", "/prediction/resolution-calendar", "0.05", "", False, False, LIVE,
      "prediction", "resolution-calendar", True, "Prediction resolution calendar: markets resolving soon"),
    R("prediction_event_graph", "/prediction/event-graph", "0.1", "", False, False, LIVE, "prediction",
      "event-graph", False, "Prediction event graph: linked markets and their implied probabilities"),
    R("prediction_divergence_alerts", "/prediction/divergence-alerts", "0.08", "", False, False, LIVE, "prediction",
      "", True, "Prediction divergence alerts: the same event priced apart across venues"),
    R("prediction_alert_subscription_pack", "/prediction/alert-subscription-pack", "0.25", "", False, False, LIVE,
      "prediction", "", False, "Prediction alert subscription pack: push alerts for chosen markets"),
    R("macro_gate", "/risk/macro-gate", "0.06", "", False, False, LIVE, "risk", "macro-gate", True,
      "Macro gate: whether today's macro calendar allows new risk"),
    R("regime_gate", "/risk/regime-gate", "0.06", "", False, False, LIVE, "risk", "macro-gate", True,
      "Regime gate: the current market regime and what it allows"),
    R("research_weekly_digest", "/research/weekly-digest", "0.12", "", False, False, LIVE, "research", "", False,
      "Weekly research digest"),
    R("calendar_risk", "/calendar/risk", "0.05", "", False, False, LIVE, "risk", "calendar-risk", True,
      "Calendar risk: scheduled events that move markets this week"),
    R("tokenized_session_desk", "/tokenized/session-desk", "0.2", "", False, True, EXEC, "tokenized", "", False,
      "Tokenized session desk: market-hours plan for tokenized equities"),
    R("mcp_managed_pack", "/mcp/managed-pack", "0.5", "", False, False, LIVE, "mcp", "", False,
      "MCP managed pack: hosted MCP tools for this catalog"),
    R("payments_dual_rail_status", "/payments/dual-rail-status", "0.01", "", False, False, LIVE, "payments", "", False,
      "Dual-rail payment status: x402 and the agent-payment network"),
    R("morning_brief_pro", "/morning-brief/pro", "0.15", "", False, False, LIVE, "brief", "morning-brief", False,
      "Morning brief pro, with webhook routing"),
    R("bounties", "/bounties", "0.05", "", False, False, LIVE, "agent", "", False,
      "Open bounties for agents"),
    R("signals", "/signals", "0.1", "", False, False, LIVE, "trading", "trend-momentum-desk", True,
      "Trading signals from the desks", marketplace_paid=True),
)
