"""Execution hints from the chain feed's fee history (eth_feeHistory)."""

from __future__ import annotations

from catalog.products.registry import EXECUTION_INTELLIGENCE, ProductSpec, TeaserSpec, register

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
