"""Venue fees: the venue's public taker/maker rate from ccxt's static exchange description
(`exchange.fees["trading"]`, no network: the base tier a keyless caller pays), unless
EXCHANGE_TAKER_FEES / EXCHANGE_MAKER_FEES ("id=0.001,...") set the venue's rate."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from django.conf import settings

from catalog.analytics.execution.books import BPS


@dataclass(frozen=True)
class Fees:
    exchange: str
    taker: float | None  # a fraction of the notional (0.001 = 10 bps); None: unknown venue
    maker: float | None
    source: Literal["setting", "ccxt", "unknown"]

    @property
    def taker_bps(self) -> float | None:
        return None if self.taker is None else self.taker * BPS

    @property
    def maker_bps(self) -> float | None:
        return None if self.maker is None else self.maker * BPS


@lru_cache(maxsize=64)
def _ccxt_fees(exchange_id: str) -> tuple[float | None, float | None]:
    """ccxt's static description of the venue's spot trading fees (no request is made)."""
    import ccxt

    if exchange_id not in ccxt.exchanges:
        return None, None
    trading = getattr(ccxt, exchange_id)().fees.get("trading") or {}
    if trading.get("percentage") is False:  # a flat amount per trade, not a rate: not comparable
        return None, None
    taker, maker = trading.get("taker"), trading.get("maker")
    return (
        float(taker) if isinstance(taker, int | float) else None,
        float(maker) if isinstance(maker, int | float) else None,
    )


def fees_for(exchange_id: str) -> Fees:
    taker_set = dict(settings.EXCHANGE_TAKER_FEES).get(exchange_id)
    maker_set = dict(settings.EXCHANGE_MAKER_FEES).get(exchange_id)
    taker, maker = _ccxt_fees(exchange_id)
    if taker_set is not None or maker_set is not None:
        return Fees(
            exchange=exchange_id,
            taker=float(taker_set) if taker_set is not None else taker,
            maker=float(maker_set) if maker_set is not None else maker,
            source="setting",
        )
    return Fees(
        exchange=exchange_id, taker=taker, maker=maker, source="ccxt" if taker is not None else "unknown"
    )


def taker_bps(exchange_id: str) -> float | None:
    return fees_for(exchange_id).taker_bps
