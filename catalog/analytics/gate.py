"""The regime gate: each symbol's regime (catalog/analytics/regime.py on its 1h bars), the market
regime read from the majors (REGIME_MAJORS), and which strategy families each allows.

Market regime, from the majors' 1h regimes:
- high_volatility: any major is in high volatility;
- risk_on: every major is in an up-trend; risk_off: every major is in a down-trend;
- neutral: anything else (ranges, or majors that disagree).
Its confidence: the majors' mean trend strength (ADX/ADX_FULL, at most 1) for risk_on and
risk_off, the highest volatility percentile for high_volatility, and the mean weakness of the
trends (1 - strength) for neutral.

Strategy families: trend_following (trend desks), mean_reversion (grid and range desks) and
carry (funding and cross-venue spreads: market-neutral). A gate is open, reduced (trade at
half size) or closed. The family's gate on a symbol is the lower of the market's gate and the
symbol's own: trends open trend following and close mean reversion, ranges the reverse, high
volatility reduces both; carry is open except in high volatility."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
from django.conf import settings

from catalog.analytics.regime import Regime

MarketLabel = Literal["risk_on", "risk_off", "neutral", "high_volatility", "unknown"]
Gate = Literal["open", "reduced", "closed"]
FAMILIES = ("trend_following", "mean_reversion", "carry")
ADX_FULL = 40.0
GATE_ORDER: dict[str, int] = {"closed": 0, "reduced": 1, "open": 2}
# Trade size a gate allows, as a fraction of the full size.
GATE_SIZE: dict[str, float] = {"open": 1.0, "reduced": 0.5, "closed": 0.0}

MARKET_FAMILIES: dict[str, dict[str, Gate]] = {
    "risk_on": {"trend_following": "open", "mean_reversion": "reduced", "carry": "open"},
    "risk_off": {"trend_following": "open", "mean_reversion": "reduced", "carry": "open"},
    "neutral": {"trend_following": "reduced", "mean_reversion": "open", "carry": "open"},
    "high_volatility": {"trend_following": "reduced", "mean_reversion": "reduced", "carry": "reduced"},
    "unknown": {"trend_following": "closed", "mean_reversion": "closed", "carry": "closed"},
}
SYMBOL_FAMILIES: dict[str, dict[str, Gate]] = {
    "up_trend": {"trend_following": "open", "mean_reversion": "closed", "carry": "open"},
    "down_trend": {"trend_following": "open", "mean_reversion": "closed", "carry": "open"},
    "range": {"trend_following": "closed", "mean_reversion": "open", "carry": "open"},
    "high_volatility": {"trend_following": "reduced", "mean_reversion": "reduced", "carry": "reduced"},
    "unknown": {"trend_following": "closed", "mean_reversion": "closed", "carry": "closed"},
}
# The overall gate for new directional risk that /api/mcp/regime has always reported.
REGIME_GATES: dict[str, str] = {
    "risk_on": "open",
    "risk_off": "closed",
    "neutral": "reduced",
    "high_volatility": "reduced",
}


def strength(regime: Regime) -> float:
    return min((regime.adx or 0.0) / ADX_FULL, 1.0)


@dataclass(frozen=True)
class MarketRegime:
    label: MarketLabel
    confidence: float
    majors: dict[str, Regime]  # the majors that had a regime

    @property
    def families(self) -> dict[str, Gate]:
        return dict(MARKET_FAMILIES[self.label])

    @property
    def since(self) -> datetime | None:
        """The newest start among the majors' current regimes: the market is in this state
        at least since then."""
        stamps = [r.since for r in self.majors.values() if r.since is not None]
        return max(stamps) if stamps else None


def majors() -> list[str]:
    return [str(s).strip().upper() for s in settings.REGIME_MAJORS if str(s).strip()]


def market_regime(regimes: dict[str, Regime]) -> MarketRegime:
    """The market regime from the majors' regimes (the symbols of REGIME_MAJORS found in
    `regimes`, which should hold only fresh ones)."""
    found = {s: regimes[s] for s in majors() if s in regimes and regimes[s].label != "unknown"}
    if not found:
        return MarketRegime("unknown", 0.0, {})
    labels = [r.label for r in found.values()]
    strengths = np.array([strength(r) for r in found.values()])
    label: MarketLabel
    if "high_volatility" in labels:
        label = "high_volatility"
        confidence = (
            max((r.vol_percentile or 0.0) for r in found.values() if r.label == "high_volatility") / 100
        )
    elif all(x == "up_trend" for x in labels):
        label, confidence = "risk_on", float(np.mean(strengths))
    elif all(x == "down_trend" for x in labels):
        label, confidence = "risk_off", float(np.mean(strengths))
    else:
        label, confidence = "neutral", float(np.mean(1.0 - strengths))
    return MarketRegime(label, round(confidence, 4), found)


def symbol_families(regime: Regime) -> dict[str, Gate]:
    return dict(SYMBOL_FAMILIES[regime.label])


def gate_for(*, family: str, market: MarketRegime, regime: Regime) -> Gate:
    """A family's gate on one symbol: the lower of the market's and the symbol's."""
    a, b = market.families[family], symbol_families(regime)[family]
    return a if GATE_ORDER[a] <= GATE_ORDER[b] else b
