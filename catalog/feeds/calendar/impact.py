"""How much an event may move markets: the feed's own PRIORITY when it sets one (RFC 5545:
1-4 high, 5 medium, 6-9 low, 0 undefined), else the first of the rules below whose pattern
matches the title or a category. The rules are data: add a row to rank a new release."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

HIGH, MEDIUM, LOW = "high", "medium", "low"


@dataclass(frozen=True)
class ImpactRule:
    name: str
    pattern: re.Pattern[str]
    impact: str
    category: str


def _rule(name: str, pattern: str, impact: str, category: str) -> ImpactRule:
    return ImpactRule(name=name, pattern=re.compile(pattern, re.IGNORECASE), impact=impact, category=category)


# First match wins, so the specific rows come before the general ones (a "Producer Price
# Index" must not be read as a consumer price index, nor "Employment Cost Index" as payrolls).
IMPACT_RULES: tuple[ImpactRule, ...] = (
    _rule(
        "rate decision",
        r"\b(fomc|federal open market committee|rate decision|interest rate decision|"
        r"monetary policy (decision|statement|announcement|meeting)|policy rate|bank rate|"
        r"governing council|mpc decision|cash rate)\b",
        HIGH,
        "rates",
    ),
    _rule("ppi", r"\b(producer price index|ppi)\b", MEDIUM, "inflation"),
    _rule("cpi", r"\b(consumer price index|cpi|hicp)\b", HIGH, "inflation"),
    # The Fed's preferred inflation gauge (BEA's Personal Income and Outlays release).
    _rule("pce", r"\b(personal income and outlays|pce)\b", HIGH, "inflation"),
    _rule("payrolls", r"\b(employment situation|non-?farm payrolls?|nfp|payrolls?)\b", HIGH, "jobs"),
    _rule("gdp", r"\b(gross domestic product|gdp)\b", HIGH, "growth"),
    _rule(
        "jobless claims",
        r"\b(jobless claims|initial claims|unemployment insurance weekly claims)\b",
        MEDIUM,
        "jobs",
    ),
    _rule("pmi", r"\b(pmi|purchasing managers'?|ism (manufacturing|services))\b", MEDIUM, "activity"),
    _rule("retail sales", r"\b(retail sales|advance monthly retail trade)\b", MEDIUM, "consumption"),
)


@dataclass(frozen=True)
class Impact:
    impact: str
    basis: str  # "priority", "rule" or "default"
    category: str  # the matching rule's category, else ""
    rule: str = ""


def priority_impact(priority: int | None) -> str | None:
    """RFC 5545 PRIORITY: 1-4 high, 5 medium, 6-9 low; 0 or absent says nothing."""
    if priority is None or not 1 <= priority <= 9:
        return None
    if priority <= 4:
        return HIGH
    return MEDIUM if priority == 5 else LOW


def rule_for(title: str, categories: Sequence[str] = ()) -> ImpactRule | None:
    texts = [title, *categories]
    for rule in IMPACT_RULES:
        if any(rule.pattern.search(t) for t in texts if t):
            return rule
    return None


def impact_for(*, title: str, categories: Sequence[str] = (), priority: int | None = None) -> Impact:
    rule = rule_for(title, categories)
    category = rule.category if rule else ""
    by_priority = priority_impact(priority)
    if by_priority is not None:
        return Impact(impact=by_priority, basis="priority", category=category, rule=rule.name if rule else "")
    if rule is not None:
        return Impact(impact=rule.impact, basis="rule", category=category, rule=rule.name)
    return Impact(impact=LOW, basis="default", category="")
