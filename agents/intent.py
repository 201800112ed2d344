"""What an agent asks for, understood from its words: the one function every agent surface
(chat, A2A text messages, the hub) uses to go from a sentence to a SKU and its parameters.

    intent = understand("BTC regime?", agent=None)
    intent.sku       -> "regime_gate" (or None when nothing matched)
    intent.params    -> {"symbol": "BTC/USDT"} (the product's params, as the product validates them)

This first version matches words against SKU names and headlines; the entity extraction
(symbols, venues, amounts, dates) replaces it behind the same signature."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from catalog.models import CatalogAgent, Sku

WORD = re.compile(r"[a-z0-9]+")
STOP = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "to",
    "for",
    "me",
    "i",
    "is",
    "what",
    "how",
    "my",
    "on",
    "in",
    "with",
}


@dataclass
class Intent:
    sku: str | None
    params: dict[str, Any] = field(default_factory=dict)
    # Other SKUs that fit, best first (for "see also" suggestions).
    alternatives: list[str] = field(default_factory=list)
    # What was recognised in the text, e.g. {"symbol": "BTC/USDT", "amount_usdc": 500}.
    entities: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


def understand(text: str, *, agent: CatalogAgent | None = None) -> Intent:
    pool = list(agent.skus.filter(status=Sku.Status.LIVE)) if agent else list(Sku.objects.live())
    asked = _words(text)
    scored = []
    for sku in pool:
        vocab = _words(f"{sku.sku.replace('_', ' ')} {sku.headline} {sku.family}")
        score = len(asked & vocab)
        if score:
            scored.append((score, sku.sort_order, sku.sku))
    scored.sort(key=lambda t: (-t[0], t[1]))
    names = [t[2] for t in scored]
    if not names:
        return Intent(sku=None)
    return Intent(
        sku=names[0], alternatives=names[1:3], confidence=min(1.0, scored[0][0] / max(1, len(asked)))
    )
