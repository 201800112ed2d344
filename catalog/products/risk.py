"""Risk gates and alerts. Specs only: computed from the feeds and the calendar (issues 12 and 13); 503 uncharged until then."""

from __future__ import annotations

from catalog.products.registry import ProductSpec, TeaserSpec, register

register(
    ProductSpec(
        sku="risk_exit_alerts",
        path="/trading/risk-exit-alerts",
        headline="Risk exit alerts: positions whose exit conditions have triggered",
        price="0.06",
        family="risk",
        tier="B",
        hero=True,
        rank=8,
        session_callable=True,
        teaser="risk-exit-alerts",
        teasers=(
            TeaserSpec(
                name="risk-exit-alerts",
                title="Risk exit alerts",
                summary="Positions whose exit conditions have triggered.",
                highlights=("trigger", "suggested exit"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="risk_decision_pack",
        path="/risk/decision-pack",
        headline="Risk decision pack: pre-trade checklist, regime and calendar gates in one call",
        price="0.12",
        family="risk",
        tier="B",
        hero=True,
        rank=9,
        client_bundle=True,
        session_callable=True,
        teaser="pre-trade-checklist",
        teasers=(
            TeaserSpec(
                name="pre-trade-checklist",
                title="Pre-trade checklist",
                summary="The checks a desk runs before opening risk: regime, calendar, liquidity.",
                highlights=("regime gate", "calendar gate", "go / no-go"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="macro_gate",
        path="/risk/macro-gate",
        headline="Macro gate: whether today's macro calendar allows new risk",
        price="0.06",
        family="risk",
        rank=34,
        session_callable=True,
        teaser="macro-gate",
        teasers=(
            TeaserSpec(
                name="macro-gate",
                title="Macro gate",
                summary="Whether today's macro calendar allows new risk.",
                highlights=("gate state", "blocking events"),
            ),
        ),
    )
)


register(
    ProductSpec(
        sku="calendar_risk",
        path="/calendar/risk",
        headline="Calendar risk: scheduled events that move markets this week",
        price="0.05",
        family="risk",
        rank=37,
        session_callable=True,
        teaser="calendar-risk",
        teasers=(
            TeaserSpec(
                name="calendar-risk",
                title="Calendar risk",
                summary="Scheduled events that can move markets in the coming week.",
                highlights=("event time", "expected impact"),
            ),
        ),
    )
)
