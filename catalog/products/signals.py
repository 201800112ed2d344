"""Signals, copy signals and the regime gate: computed from the exchange feeds' candles (catalog/analytics/) and recorded as the desks' track record."""

from __future__ import annotations

from catalog.products.registry import CreditRoute, ProductSpec, TeaserSpec, register

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
        sku="regime_gate",
        path="/risk/regime-gate",
        headline="Regime gate: the current market regime and what it allows",
        price="0.06",
        family="risk",
        rank=35,
        session_callable=True,
        teaser="macro-gate",
    )
)
