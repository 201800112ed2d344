"""The trading desks and signals. Specs only: they are computed from the exchange feeds (issue 12) and answer 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import EXECUTION_INTELLIGENCE, CreditRoute, ProductSpec, TeaserSpec, register

register(
    ProductSpec(
        sku="grid_range_desk",
        path="/trading/grid-range-desk",
        headline="Grid range desk: ranges, grid levels and invalidation for liquid pairs",
        price="0.15",
        family="trading",
        tier="D",
        hero=True,
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=5,
        session_callable=True,
        teaser="grid-range-desk",
        teasers=(
            TeaserSpec(
                name="grid-range-desk",
                title="Grid range desk",
                summary="Ranges, grid levels and invalidation for liquid pairs.",
                highlights=("range", "grid levels"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="copy_signals",
        path="/copy/signals",
        headline="Copy signals in real time with routing addresses",
        price="0.15",
        family="trading",
        tier="D",
        hero=True,
        rank=13,
        session_callable=True,
        teaser="copy-signals",
        teasers=(
            TeaserSpec(
                name="copy-signals",
                title="Copy signals",
                summary="Desk signals you can copy; free tier delayed 10 minutes with masked routing.",
                highlights=("real-time when paid", "routing addresses when paid"),
            ),
        ),
        credit_routes=(
            CreditRoute(
                route="api/a2a/signals/copy-trade",
                operation_id="copy_trade_signals",
                summary="Copy-trade signals (free tier delayed 10 minutes, routing masked)",
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="mev_exec_hint_pack",
        path="/trading/mev-exec-hint-pack",
        headline="MEV execution hints: private routing and slippage guidance",
        price="0.18",
        family="trading",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=14,
        teaser="mev-exec-hint-pack",
        teasers=(
            TeaserSpec(
                name="mev-exec-hint-pack",
                title="MEV execution hint pack",
                summary="Private routing and slippage guidance.",
                highlights=("route", "slippage"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="intent_solver_desk",
        path="/trading/intent-solver",
        headline="Intent solver desk: solver quotes for a trading intent",
        price="0.25",
        family="trading",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=16,
        teaser="intent-solver",
        teasers=(
            TeaserSpec(
                name="intent-solver",
                title="Intent solver",
                summary="Solver quotes for a trading intent.",
                highlights=("quotes", "best route"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="pair_arb_desk",
        path="/trading/pair-arb-desk",
        headline="Pair arbitrage desk: cross-venue spreads worth trading",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=24,
        session_callable=True,
        teaser="pair-arb-desk",
        teasers=(
            TeaserSpec(
                name="pair-arb-desk",
                title="Pair arbitrage desk",
                summary="Cross-venue spreads worth trading after fees.",
                highlights=("spread in bps", "venues"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="dca_routing_desk",
        path="/trading/dca-routing-desk",
        headline="DCA routing desk: slice schedule and venue routing for accumulation",
        price="0.12",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=25,
        session_callable=True,
    )
)

register(
    ProductSpec(
        sku="funding_hedge_desk",
        path="/trading/funding-hedge-desk",
        headline="Funding hedge desk: funding-rate carry and hedge legs",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=26,
        session_callable=True,
        teaser="funding-hedge-desk",
        teasers=(
            TeaserSpec(
                name="funding-hedge-desk",
                title="Funding hedge desk",
                summary="Funding-rate carry opportunities with their hedge legs.",
                highlights=("carry", "hedge legs"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="broker_scalp_desk",
        path="/trading/broker-scalp-desk",
        headline="Broker scalp desk: short-horizon setups on broker venues",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=27,
        session_callable=True,
        teaser="broker-scalp-desk",
        teasers=(
            TeaserSpec(
                name="broker-scalp-desk",
                title="Broker scalp desk",
                summary="Short-horizon setups on broker venues.",
                highlights=("entry", "stop", "target"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="signals",
        path="/signals",
        headline="Trading signals from the desks",
        price="0.1",
        family="trading",
        rank=43,
        marketplace_paid=True,
        session_callable=True,
        teaser="trend-momentum-desk",
        teasers=(
            TeaserSpec(
                name="trend-momentum-desk",
                title="Trend and momentum desk",
                summary="Trend and momentum signals from the desks.",
                highlights=("direction", "strength"),
            ),
        ),
        credit_routes=(
            CreditRoute(route="api/a2a/signals", operation_id="signals", summary="Trading signals"),
            CreditRoute(
                route="api/a2a/intel/latest", operation_id="intel_latest", summary="Latest intelligence"
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="federation_signal_resale",
        path="/federation/signal-resale",
        headline="Federated partner signals, resold with attribution",
        price="0.15",
        family="federation",
        tier="C",
        intel_only=True,
        rank=15,
        teaser="federation-signal-resale",
        teasers=(
            TeaserSpec(
                name="federation-signal-resale",
                title="Federation signal resale",
                summary="Federated partner signals with attribution.",
                highlights=("partner", "signal"),
            ),
        ),
    )
)
