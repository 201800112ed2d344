"""Market intelligence from the news and markets. Specs only: computed from the feeds (issue 12); 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import CreditRoute, ProductSpec, TeaserSpec, register

register(
    ProductSpec(
        sku="sentiment",
        path="/sentiment",
        headline="Market sentiment computed from ingested news and markets",
        price="0.05",
        family="intel",
        tier="L",
        hero=True,
        rank=11,
        marketplace_paid=True,
        client_bundle=True,
        session_callable=True,
        teaser="daily-digest",
        credit_routes=(
            CreditRoute(route="api/a2a/sentiment", operation_id="sentiment", summary="Market sentiment"),
        ),
    )
)

register(
    ProductSpec(
        sku="market_groups_digest",
        path="/intel/market-groups-digest",
        headline="Market groups digest: what each market agent group reported",
        price="0.08",
        family="intel",
        rank=23,
        session_callable=True,
        teaser="market-groups-digest",
        teasers=(
            TeaserSpec(
                name="market-groups-digest",
                title="Market groups digest",
                summary="What each market agent group reported.",
                highlights=("per-group headlines",),
            ),
        ),
    )
)
