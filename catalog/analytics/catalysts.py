"""Catalysts of equity news, classified by rules: which kinds of event a headline reports.

A headline (title and teaser) is matched, case-insensitively and on whole words, against one
rule per kind; it may report several kinds ("misses estimates and cuts guidance" is earnings
and guidance) or none (a market wrap). The kinds, and what each rule looks for:

- earnings: earnings, EPS, quarterly/Qn results, revenue, profit, net income/loss, beating or
  missing estimates;
- guidance: guidance, outlook, forecasts, profit warnings;
- mna: mergers, acquisitions, takeovers, buyouts, tender offers, agreements to buy, spin-offs,
  divestitures, stakes;
- analyst_rating: upgrades, downgrades, price targets raised or cut, ratings (overweight,
  outperform, buy/sell/hold), coverage initiated;
- regulation_legal: regulators (SEC, FTC, DOJ), antitrust, lawsuits, probes, fines,
  settlements, courts, rulings, charges, sanctions;
- product: launches, unveilings, roll-outs, new models/products/chips/drugs, FDA approvals,
  recalls, patents;
- macro: the Fed and central banks, rates, inflation/CPI, jobs data, GDP, Treasury yields,
  tariffs, oil and OPEC, recession."""

from __future__ import annotations

import re
from typing import Literal

CatalystKind = Literal[
    "earnings", "guidance", "mna", "analyst_rating", "regulation_legal", "product", "macro"
]

_RULES: tuple[tuple[CatalystKind, re.Pattern[str]], ...] = (
    (
        "earnings",
        re.compile(
            r"\b(earnings|EPS|quarterly (?:results|loss|profit|revenue|sales)|"
            r"(?:first|second|third|fourth)[- ]quarter (?:results|earnings|profit|loss|revenue|sales)|"
            r"Q[1-4] (?:results|earnings|revenue|sales|profit|loss)|results|revenue|profits?|"
            r"net (?:income|loss)|(?:beat|beats|beating|miss|misses|missed|missing|tops?|topped) "
            r"(?:\w+'? )?(?:estimates|expectations|forecasts|consensus))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "guidance",
        re.compile(
            r"\b(guidance|outlook|forecasts?|profit warning|warns? (?:on|of) (?:sales|profits?|revenue|earnings))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "mna",
        re.compile(
            r"\b(mergers?|merge[sd]?|acquir(?:e|es|ed|ing)|acquisitions?|takeovers?|buyouts?|tender offer|"
            r"(?:agrees?|agreed|deal|offer|bid) to (?:buy|acquire)|bid for|spin-?offs?|spins? off|"
            r"divest\w*|stake in)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "analyst_rating",
        re.compile(
            r"\b(upgrades?|upgraded|downgrades?|downgraded|price targets?|target price|"
            r"(?:lift|lifts|lifted|raise|raises|raised|cut|cuts|lower|lowers|lowered) "
            r"(?:its |their )?(?:price )?targets?|overweight|underweight|outperform|underperform|"
            r"(?:buy|sell|hold|neutral) rating|(?:cut|cuts|raise|raises|raised) (?:its |their )?ratings?|"
            r"initiat\w* coverage)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "regulation_legal",
        re.compile(
            r"\b(SEC|FTC|DOJ|Justice Department|antitrust|lawsuits?|sue[sd]?|suing|probes?|investigations?|"
            r"regulators?|regulatory|fined|fines|penalt(?:y|ies)|settle(?:s|d|ment)|court|judge|ruling|"
            r"subpoena\w*|class action|indict\w*|sanctions?|charged)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "product",
        re.compile(
            r"\b(launch(?:es|ed|ing)?|unveil\w*|introduc(?:es|ed|ing)|rolls? out|rollout|"
            r"new (?:model|product|chip|device|service|feature|drug)s?|FDA|recalls?|recalled|patents?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "macro",
        re.compile(
            r"\b(Federal Reserve|FOMC|Fed|central banks?|monetary policy|interest rates?|rate (?:cut|hike)s?|"
            r"inflation|CPI|payrolls|jobs report|unemployment|GDP|Treasury yields?|tariffs?|OPEC\+?|"
            r"oil prices|recession)\b",
            re.IGNORECASE,
        ),
    ),
)

CATALYST_KINDS: tuple[CatalystKind, ...] = tuple(kind for kind, _ in _RULES)


def catalysts_of(text: str) -> list[CatalystKind]:
    """The kinds of event `text` reports, in the order of CATALYST_KINDS."""
    return [kind for kind, rule in _RULES if rule.search(text)]
