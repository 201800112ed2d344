"""The trading desks and signals. Specs only: they are computed from the exchange feeds (issue 12) and answer 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import EXECUTION_INTELLIGENCE, ProductSpec, TeaserSpec, register

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
