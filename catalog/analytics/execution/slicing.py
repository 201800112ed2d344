"""TWAP / DCA slicing: an atomic USDC amount split in near-equal integer parts that add up exactly."""

from __future__ import annotations

from decimal import Decimal

USDC_ATOMIC = 1_000_000


def slices_atomic(total_atomic: int, n: int) -> list[int]:
    """`total_atomic` split in `n` near-equal integer parts that add up exactly (the first
    parts carry the remainder, one atomic unit each)."""
    share, rest = divmod(total_atomic, n)
    return [share + (1 if i < rest else 0) for i in range(n)]


def usdc_text(atomic: int) -> str:
    """Atomic USDC as an exact decimal string (6 places)."""
    return str((Decimal(atomic) / USDC_ATOMIC).quantize(Decimal("0.000001")))
