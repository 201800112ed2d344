"""Optional: an LLM rewrites a prompt the patterns did not understand into one of their forms
(off unless TXGEN_LLM_URL is set). Its answer is never trusted as such: it goes through the same
deterministic parser, and every address and the amount it names must be written in the caller's
own prompt, so a model cannot invent a recipient or change an amount."""

from __future__ import annotations

import logging
import re
from decimal import Decimal, InvalidOperation

import requests
from django.conf import settings

from a2a_service.core.http import TargetRefused, outbound_request
from billing.txgen.intent import Intent, TxgenRefused, intent_parse

logger = logging.getLogger(__name__)

# The refusals a rewording may cure; the others (a bad address, too many decimals, an unknown
# token, the wrong chain) are precise and stay refusals.
RETRYABLE = {"txgen_unknown_action", "txgen_not_understood", "txgen_missing_amount", "txgen_missing_token"}

SYSTEM = (
    "Rewrite the user's request as exactly one line in one of these forms, with the amount and "
    "addresses copied exactly from the request, or answer UNKNOWN:\n"
    "send <amount> <USDC|WETH|ETH> to <0x address>\n"
    "approve <amount> <USDC|WETH> for <0x address>\n"
    "wrap <amount> ETH\n"
    "unwrap <amount> WETH"
)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?|\.\d+")


def llm_enabled() -> bool:
    return bool(settings.TXGEN_LLM_URL)


def _numbers(text: str) -> set[Decimal]:
    out = set()
    for raw in _NUMBER.findall(_ADDRESS.sub(" ", text)):
        try:
            out.add(Decimal(raw))
        except InvalidOperation:  # the pattern matched digits: not reached
            continue
    return out


def _ask(prompt: str) -> str:
    """The model's first line, through the service's one outbound function: no redirect is
    followed, the whole exchange has a deadline (TXGEN_LLM_TIMEOUT_SECONDS) and the answer a
    size cap (TXGEN_LLM_MAX_BODY_BYTES). Raises on anything else than a readable 200."""
    timeout = float(settings.TXGEN_LLM_TIMEOUT_SECONDS)
    cap = int(settings.TXGEN_LLM_MAX_BODY_BYTES)
    resp = outbound_request(
        "POST",
        settings.TXGEN_LLM_URL,
        json={
            "model": settings.TXGEN_LLM_MODEL,
            "temperature": 0,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        },
        headers={"Authorization": f"Bearer {settings.TXGEN_LLM_API_KEY}"} if settings.TXGEN_LLM_API_KEY else {},
        timeout=timeout,
        deadline=timeout,
        max_body_bytes=cap + 1,  # one byte more: a body cut at the cap is told from one that fits
        # The operator configures this address (a model on their own network, like the
        # facilitator): it may be private. A redirect from it is never followed.
        public_only=False,
    )
    if resp.status_code != 200:
        raise ValueError(f"the language model answered {resp.status_code}")
    if len(resp.content) > cap:
        raise ValueError(f"the language model's answer is over {cap} bytes")
    return str(resp.json()["choices"][0]["message"]["content"]).strip().splitlines()[0].strip()


def llm_understand(prompt: str, refused: TxgenRefused) -> Intent:
    """The intent of an LLM's rewording of `prompt`, checked; else `refused` (with why)."""
    try:
        line = _ask(prompt)
    except (requests.RequestException, TargetRefused, ValueError, KeyError, IndexError, TypeError) as exc:
        logger.warning("txgen language model not asked: %s", exc)
        raise TxgenRefused(
            refused.type, f"{refused.message} (the language model could not be asked)"
        ) from None
    if line.upper() == "UNKNOWN":
        raise refused
    try:
        intent = intent_parse(line)
    except TxgenRefused as exc:
        raise TxgenRefused(
            refused.type, f"{refused.message} (the language model's reading {line!r}: {exc.message})"
        ) from None
    written = {a.lower() for a in _ADDRESS.findall(prompt)}
    if intent.counterparty is not None and intent.counterparty.lower() not in written:
        raise TxgenRefused("txgen_bad_address", f"{refused.message} (the address read is not in the prompt)")
    if Decimal(intent.amount) not in _numbers(prompt):
        raise TxgenRefused(
            "txgen_missing_amount", f"{refused.message} (the amount read is not in the prompt)"
        )
    return intent
