"""Catalog-agent chat: a question understood (agents/intent.py understand: the SKU and its
params from the words and the ingested data), answered from the product's own free teaser cut
(a rolled-back run with the question's params, catalog/selectors/teasers.py product_excerpt)
with the exact call that buys the full answer by each payment route; or, when the message
brings payment (X-API-Key, X-Session-Token, an x402 proof), the product's content itself.
Nothing in a reply is invented: every figure comes from the excerpt or the product's run.

    answer.py  the deterministic reply (teaser, next call, suggestions, not-found)
    pay.py     the paid run, through the payment front (billing/front/) like every surface
    llm.py     an optional rephrasing by an OpenAI-compatible model (CHAT_LLM_URL), never facts"""

from __future__ import annotations

from agents.chat.answer import chat_reply

__all__ = ["chat_reply"]
