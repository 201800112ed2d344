"""Prediction-market intelligence computed from the Polymarket and Kalshi feeds: top 3 daily, the
resolution calendar and divergence alerts (run in catalog/products/prediction_intel.py). The event
graph and the starter bundle are in prediction_graph.py, the alert subscription pack in
webhooks/products.py."""

from __future__ import annotations

from catalog.products.prediction_intel import (
    DivergenceAlertsOut,
    DivergenceQuery,
    ResolutionCalendarOut,
    ResolutionCalendarQuery,
    Top3Out,
    divergence_alerts_run,
    divergence_available,
    markets_available,
    resolution_calendar_run,
    top3_daily_run,
)
from catalog.products.registry import ProductSpec, TeaserSpec, register

register(
    ProductSpec(
        sku="prediction_top3_daily",
        path="/prediction/top3-daily",
        headline="Top 3 prediction markets of the day",
        price="0.06",
        family="prediction",
        rank=29,
        run=top3_daily_run,
        output=Top3Out,
        pure=True,
        available=markets_available,
        session_callable=True,
        teaser="prediction-top3-daily",
        teasers=(
            TeaserSpec(
                name="prediction-top3-daily",
                title="Prediction top 3 daily",
                summary="The three prediction markets worth watching today.",
                highlights=("odds", "volume", "closes"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="prediction_resolution_calendar",
        path="/prediction/resolution-calendar",
        headline="Prediction resolution calendar: markets resolving soon",
        price="0.05",
        family="prediction",
        rank=30,
        run=resolution_calendar_run,
        params=ResolutionCalendarQuery,
        output=ResolutionCalendarOut,
        available=markets_available,
        session_callable=True,
        teaser="resolution-calendar",
        teasers=(
            TeaserSpec(
                name="resolution-calendar",
                title="Resolution calendar",
                summary="Prediction markets resolving soon.",
                highlights=("resolution time", "current odds"),
            ),
        ),
    )
)

register(
    ProductSpec(
        sku="prediction_divergence_alerts",
        path="/prediction/divergence-alerts",
        headline="Prediction divergence alerts: the same event priced apart across venues",
        price="0.08",
        family="prediction",
        rank=32,
        run=divergence_alerts_run,
        params=DivergenceQuery,
        output=DivergenceAlertsOut,
        available=divergence_available,
        session_callable=True,
    )
)
