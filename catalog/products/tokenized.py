"""Tokenized-asset desks. Specs only: computed from the feeds (issue 12); 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import EXECUTION_INTELLIGENCE, ProductSpec, register

register(
    ProductSpec(
        sku="tokenized_session_desk",
        path="/tokenized/session-desk",
        headline="Tokenized session desk: market-hours plan for tokenized equities",
        price="0.2",
        family="tokenized",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=38,
    )
)
