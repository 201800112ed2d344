"""An optional rephrasing of the deterministic reply by an OpenAI-compatible model
(POST {CHAT_LLM_URL}/chat/completions), off while CHAT_LLM_URL is empty. The model is given
the reply and the facts it quotes and may only reword them: an answer that carries a number
the deterministic reply does not, or any failure (timeout, error status, odd JSON), falls
back to the deterministic reply. It goes through the service's one outbound HTTP function."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from django.conf import settings

from a2a_service.core.http import outbound_request

logger = logging.getLogger(__name__)

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
SYSTEM = (
    "You rephrase a market-data service's answer for the agent that asked. Use only the facts in the "
    "answer: do not add, round or change any number, price, symbol, URL or header; keep the exact call "
    "and its price. Answer in at most five sentences."
)


def _endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER.findall(text)}


def rephrase(reply: str, *, facts: dict[str, Any], question: str) -> str:
    url = str(settings.CHAT_LLM_URL or "")
    if not url:
        return reply
    headers = {"Content-Type": "application/json"}
    key = str(settings.CHAT_LLM_API_KEY or "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    payload = {
        "model": str(settings.CHAT_LLM_MODEL or ""),
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": json.dumps({"question": question, "answer": reply, "facts": facts}, default=str),
            },
        ],
    }
    timeout = float(settings.CHAT_LLM_TIMEOUT_SECONDS)
    try:
        # The operator configures this address (it may be a model on their own network, like
        # the facilitator), so private targets are allowed; the deadline bounds the whole call.
        resp = outbound_request(
            "POST",
            _endpoint(url),
            json=payload,
            headers=headers,
            timeout=timeout,
            deadline=timeout,
            max_body_bytes=200_000,
            public_only=False,
        )
        resp.raise_for_status()
        text = resp.json()["choices"][0]["message"]["content"]
    except Exception as exc:  # any failure: the deterministic reply stands
        logger.warning("chat LLM rephrase failed: %s", exc)
        return reply
    if not isinstance(text, str) or not text.strip():
        return reply
    invented = _numbers(text) - _numbers(reply)
    if invented:
        logger.warning("chat LLM rephrase dropped: numbers not in the reply %s", sorted(invented)[:5])
        return reply
    return text.strip()
