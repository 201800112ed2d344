"""Premium (or discount) of a tokenized asset's price over its underlying's reference price."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal


@dataclass(frozen=True)
class Premium:
    pct: float  # +2.0: the token trades 2 % above the underlying
    bps: float  # +200.0

    @property
    def direction(self) -> Literal["premium", "discount", "par"]:
        return "premium" if self.bps > 0 else "discount" if self.bps < 0 else "par"


def premium(last_price: Decimal | None, underlying_price: Decimal | None) -> Premium | None:
    """last / underlying - 1, in exact decimals (one token = one unit of the underlying);
    None without both prices."""
    if last_price is None or underlying_price is None or underlying_price <= 0 or last_price <= 0:
        return None
    ratio = Decimal(last_price) / Decimal(underlying_price) - 1
    return Premium(pct=round(float(ratio * 100), 4), bps=round(float(ratio * 10_000), 2))
