"""Catalog-agent chat: answers from the catalog itself. It matches the question's
words against the agent's SKUs and says what to buy and how; it never invents data."""

from __future__ import annotations

import re

from agents.discovery import schemas as s
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


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


def chat_reply(*, agent: CatalogAgent | None, message: str, base: str) -> s.ChatOut:
    pool = list(agent.skus.filter(status=Sku.Status.LIVE)) if agent else list(Sku.objects.live())
    asked = _words(message)
    scored = []
    for sku in pool:
        vocab = _words(f"{sku.sku.replace('_', ' ')} {sku.headline} {sku.family}")
        score = len(asked & vocab)
        if score:
            scored.append((score, sku.sort_order, sku))
    scored.sort(key=lambda t: (-t[0], t[1]))
    matches = [t[2] for t in scored[:3]]
    name = agent.name if agent else "Agent hub"
    if matches:
        listing = "; ".join(f"{m.sku} ({m.price_usdc} USDC): {m.headline}" for m in matches)
        reply = f"{name}: for that, see {listing}. Each is a GET on its path; unpaid calls answer 402 with how to pay."
    else:
        matches = [x for x in pool if x.hero][:3] or pool[:3]
        listing = ", ".join(f"{m.sku} ({m.price_usdc} USDC)" for m in matches)
        reply = (
            f"{name}: I found nothing in my catalog matching your words. What I sell most: {listing}. "
            "Ask about news, signals, sentiment, prediction markets, desks or sessions."
        )
    return s.ChatOut(
        agent=agent.slug if agent else "agenthub",
        reply=reply,
        suggestions=[
            s.ChatSuggestionOut(sku=m.sku, path=base + m.path, price_usdc=m.price_usdc, headline=m.headline)
            for m in matches
        ],
        links={
            "storefront": base + "/api/a2a/discovery/storefront",
            "topup_info": base + "/api/a2a/account/topup-info",
            "openapi": base + "/api/a2a/openapi.json",
        },
    )
