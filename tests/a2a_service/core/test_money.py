"""USDC amounts as text: exact, never in exponent form (agents parse them out of headers)."""

from __future__ import annotations

import pytest

from a2a_service.core.money import atomic_from_usdc, usdc_text
from billing.rails.credits import credit_headers


@pytest.mark.parametrize(
    "atomic, text",
    [
        (0, "0"),
        (10, "0.00001"),
        (1, "0.000001"),
        (100_000, "0.1"),
        (180_000, "0.18"),
        (1_000_000, "1"),
        (1_000_000_000_000, "1000000"),
        (123_456_789_012, "123456.789012"),
        (-250_000, "-0.25"),
    ],
)
def test_an_amount_is_written_exactly_and_parses_back(atomic, text):
    assert usdc_text(atomic) == text
    assert atomic_from_usdc(text) == atomic


def test_the_credit_headers_of_a_large_balance_and_a_tiny_charge():
    assert credit_headers(10, 1_000_000_000_000) == {"X-Credit-Charged": "0.00001", "X-Credit-Balance": "1000000"}
