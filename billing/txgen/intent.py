"""Prompt -> intent, deterministically: a table of sentence patterns, each word checked.

    send|transfer|pay <amount> <token> to <address>
    approve <amount> <token> for|to <address>
    wrap <amount> ETH
    unwrap <amount> WETH

What cannot be understood is refused with the part that failed (TxgenRefused: a type and a
message the API answers as 422), never guessed: a transaction is signed by its sender, and a
wrong guess would be money sent to the wrong place."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from django.conf import settings
from web3 import Web3

Action = Literal["transfer", "approve", "wrap", "unwrap"]
UINT256_MAX = 2**256 - 1


class TxgenRefused(Exception):
    """The prompt (or the request) cannot become a transaction; `field` is what failed."""

    def __init__(self, type_: str, message: str, field: str = "prompt") -> None:
        super().__init__(message)
        self.type = type_
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Token:
    symbol: str
    decimals: int
    address: str | None  # None: the chain's native ether


def tokens() -> dict[str, Token]:
    """The tokens prompts may name, from settings (read per call: tests point them elsewhere)."""
    return {
        "USDC": Token("USDC", 6, Web3.to_checksum_address(settings.USDC_ADDRESS)),
        "WETH": Token("WETH", 18, Web3.to_checksum_address(settings.WETH_ADDRESS)),
        "ETH": Token("ETH", 18, None),
    }


@dataclass(frozen=True)
class Pattern:
    action: Action
    # The words after the verb: "amount", "token", "address", or a literal alternative ("to|for").
    slots: tuple[str, ...]
    # The tokens this action takes (None: any ERC-20 of the table; native ETH only where listed).
    allowed: tuple[str, ...]
    form: str


PATTERNS: dict[str, Pattern] = {
    verb: pattern
    for verbs, pattern in (
        (
            ("send", "transfer", "pay"),
            Pattern(
                "transfer",
                ("amount", "token", "to", "address"),
                ("USDC", "WETH", "ETH"),
                "send <amount> <token> to <address>",
            ),
        ),
        (
            ("approve",),
            Pattern(
                "approve",
                ("amount", "token", "for|to", "address"),
                ("USDC", "WETH"),
                "approve <amount> <token> for <address>",
            ),
        ),
        (("wrap",), Pattern("wrap", ("amount", "token"), ("ETH",), "wrap <amount> ETH")),
        (("unwrap",), Pattern("unwrap", ("amount", "token"), ("WETH",), "unwrap <amount> WETH")),
    )
    for verb in verbs
}

_AMOUNT = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


@dataclass(frozen=True)
class Intent:
    action: Action
    token: Token
    amount_atomic: int
    amount: str  # as written, normalised (e.g. "5", "0.1")
    counterparty: str | None  # recipient (transfer) or spender (approve), checksummed

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "token": self.token.symbol,
            "token_address": self.token.address,
            "decimals": self.token.decimals,
            "amount": self.amount,
            "amount_atomic": str(self.amount_atomic),
            "counterparty": self.counterparty,
        }


def intent_parse(prompt: str) -> Intent:
    words = prompt.strip().rstrip(".!").split()
    if not words:
        raise TxgenRefused("txgen_empty_prompt", "the prompt is empty")
    verb = words[0].lower()
    pattern = PATTERNS.get(verb)
    if pattern is None:
        known = ", ".join(sorted(PATTERNS))
        raise TxgenRefused(
            "txgen_unknown_action", f"unknown action {words[0]!r}: the prompt must start with one of {known}"
        )
    rest = words[1:]
    amount: tuple[int, str] | None = None
    token: Token | None = None
    counterparty: str | None = None
    for i, slot in enumerate(pattern.slots):
        word = rest[i] if i < len(rest) else None
        if slot == "amount":
            if word is None or not _AMOUNT.match(word):
                raise TxgenRefused(
                    "txgen_missing_amount",
                    f"missing amount: expected a number after {words[0]!r} ({pattern.form})",
                )
        elif slot == "token":
            token = _token(word, pattern)
            assert amount is None
            amount = _amount(rest[i - 1], token)
        elif slot == "address":
            counterparty = _address(word, pattern)
        elif word is None or word.lower() not in slot.split("|"):
            raise TxgenRefused(
                "txgen_not_understood",
                f"expected {' or '.join(repr(w) for w in slot.split('|'))} after the token ({pattern.form})",
            )
    if len(rest) > len(pattern.slots):
        raise TxgenRefused(
            "txgen_not_understood",
            f"could not understand {' '.join(rest[len(pattern.slots) :])!r} ({pattern.form})",
        )
    assert token is not None and amount is not None
    return Intent(pattern.action, token, amount[0], amount[1], counterparty)


def _token(word: str | None, pattern: Pattern) -> Token:
    if word is None:
        raise TxgenRefused("txgen_missing_token", f"missing token after the amount ({pattern.form})")
    token = tokens().get(word.upper())
    if token is None:
        raise TxgenRefused(
            "txgen_unknown_token", f"unknown token {word!r}: known tokens are {', '.join(tokens())}"
        )
    if token.symbol not in pattern.allowed:
        raise TxgenRefused(
            "txgen_unknown_token",
            f"{pattern.action} takes {' or '.join(pattern.allowed)}, not {token.symbol} ({pattern.form})",
        )
    return token


def _amount(word: str, token: Token) -> tuple[int, str]:
    try:
        value = Decimal(word)
    except InvalidOperation:  # the amount slot matched a number: not reached
        raise TxgenRefused("txgen_missing_amount", f"{word!r} is not an amount") from None
    exponent = value.normalize().as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    if places > token.decimals:
        raise TxgenRefused(
            "txgen_amount_precision",
            f"{word} {token.symbol} has {places} decimals; {token.symbol} has {token.decimals}",
        )
    atomic = int(value * 10**token.decimals)
    if atomic <= 0:
        raise TxgenRefused("txgen_amount_not_positive", f"the amount must be greater than 0, not {word}")
    if atomic > UINT256_MAX:
        raise TxgenRefused("txgen_amount_too_large", f"{word} {token.symbol} does not fit in a uint256")
    return atomic, format(value.normalize(), "f")


def _address(word: str | None, pattern: Pattern) -> str:
    if word is None:
        raise TxgenRefused("txgen_bad_address", f"missing address ({pattern.form})")
    if not _ADDRESS.match(word):
        raise TxgenRefused("txgen_bad_address", f"{word!r} is not an address (0x followed by 40 hex digits)")
    mixed = word[2:] != word[2:].lower() and word[2:] != word[2:].upper()
    if mixed and not Web3.is_checksum_address(word):
        # A mixed-case address carries an EIP-55 checksum: a wrong one is a mistyped address.
        raise TxgenRefused("txgen_bad_address", f"{word} fails its EIP-55 checksum (mistyped?)")
    if int(word, 16) == 0:
        raise TxgenRefused("txgen_bad_address", "the zero address would burn the tokens")
    return Web3.to_checksum_address(word)
