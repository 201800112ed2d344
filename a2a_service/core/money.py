"""USDC amounts: integers of atomic units (6 decimals) inside, plain numbers outside."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

USDC_DECIMALS = 6
ATOMIC_PER_USDC = 10**USDC_DECIMALS


def usdc_from_atomic(atomic: int) -> float:
    """0.1 in the API for 100000 in the database. Floats are only for display: every
    stored or compared amount stays an integer of atomic units."""
    return float(Decimal(int(atomic)) / ATOMIC_PER_USDC)


def usdc_text(atomic: int) -> str:
    """An amount as text, exact and as people write it: "0.1", "1000000", "0.00001", "0".
    Where an agent parses a figure out of a header, `:g` of the float would say 1e+06 for a
    million USDC and 1e-05 for ten atomic units."""
    whole, fraction = divmod(abs(int(atomic)), ATOMIC_PER_USDC)
    text = str(whole) + (f".{fraction:0{USDC_DECIMALS}d}".rstrip("0") if fraction else "")
    return f"-{text}" if atomic < 0 else text


def atomic_from_usdc(amount: Decimal | str | int | float) -> int:
    value = Decimal(str(amount)) * ATOMIC_PER_USDC
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))
