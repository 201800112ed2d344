"""Execution desks: spreads, pair arbitrage, funding carry, DCA routing, intent solving, tokenized routing and DeFi yields, computed from the ingested books, funding rates and pools."""

from __future__ import annotations

from catalog.products.registry import EXECUTION_INTELLIGENCE, ProductSpec, TeaserSpec, register

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
        sku="tokenized_auto_route",
        path="/tokenized/auto-route",
        headline="Tokenized auto-route: venue routing for tokenized assets (manual routing only)",
        price="0.2",
        family="tokenized",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=18,
    )
)


register(
    ProductSpec(
        sku="defi_yield_scout",
        path="/defi/yield-scout",
        headline="DeFi yield scout: ranked yields with risk notes",
        price="0.1",
        family="defi",
        tier="C",
        hero=True,
        rank=17,
        teaser="defi-yield-scout",
        teasers=(
            TeaserSpec(
                name="defi-yield-scout",
                title="DeFi yield scout",
                summary="Yields across lending and liquidity venues, ranked with risk notes.",
                highlights=("ranked yields", "risk notes per venue"),
            ),
            TeaserSpec(
                name="exchange-earn-desk",
                title="Exchange earn desk",
                summary="Earn products across exchanges and on-chain venues, compared.",
                highlights=("rates", "lockups"),
            ),
        ),
    )
)
