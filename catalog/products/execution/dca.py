"""The DCA routing desk: buys of equal atomic USDC on a schedule, and the venue where one buy
costs least all in."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, cast

from django.utils import timezone
from pydantic import BaseModel, Field, model_validator

from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics.execution.books import BPS
from catalog.analytics.execution.slicing import USDC_ATOMIC, slices_atomic, usdc_text
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.products.execution.common import (
    BOOK_MAX_AGE,
    Notional,
    Symbol,
    VenueCostOut,
    _books_for,
    _fresh_books,
    _known_symbol,
    _price,
    _r,
    _venue_costs,
)
from catalog.products.registry import EXECUTION_INTELLIGENCE, ProductCall, ProductSpec, register

DCA_MAX_BUYS = 500


class DcaParams(QueryModel):
    symbol: Symbol = "BTC/USDT"
    notional_usdc: Notional = 1000
    days: Annotated[int, Field(ge=1, le=365, description="how long to accumulate")] = 30
    interval_hours: Annotated[int, Field(ge=1, le=720, description="hours between buys")] = 24

    @model_validator(mode="after")
    def _few_enough_buys(self) -> DcaParams:
        if self.buys > DCA_MAX_BUYS:
            raise ValueError(f"days x 24 / interval_hours gives more than {DCA_MAX_BUYS} buys")
        return self

    @property
    def buys(self) -> int:
        return max(1, self.days * 24 // self.interval_hours)


class DcaBuyOut(BaseModel):
    n: int
    at: str = Field(description="ISO 8601 UTC")
    amount_atomic: int = Field(
        description="USDC atomic units (6 decimals); the buys add up to the notional exactly"
    )
    amount_usdc: str = Field(description="the same, as an exact decimal")


class DcaOut(Provenanced):
    symbol: str
    notional_usdc: float
    buys: int
    interval_hours: int
    schedule: list[DcaBuyOut]
    consolidated_mid: float
    venues: list[VenueCostOut] = Field(description="cheapest first (all-in cost of one buy)")
    recommended_venue: str | None
    est_total_cost_usdc: float | None = Field(
        description="the all-in cost of every buy at the recommended venue, at today's book"
    )


def dca_routing_desk(call: ProductCall) -> dict[str, Any]:
    params = cast(DcaParams, call.params)
    prov = Provenance(
        method="buys of equal atomic USDC every interval_hours; each venue's order book walked for one "
        "buy: average price plus taker fee against the consolidated mid (price premium + half spread "
        "+ depth slippage + fee), cheapest first",
        max_age=BOOK_MAX_AGE,
    )
    books = _books_for(params.symbol, prov)
    total = round(params.notional_usdc * USDC_ATOMIC)
    amounts = slices_atomic(total, params.buys)
    start = timezone.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    step = timedelta(hours=params.interval_hours)
    schedule = [
        {"n": i + 1, "at": iso(start + step * i), "amount_atomic": a, "amount_usdc": usdc_text(a)}
        for i, a in enumerate(amounts)
    ]
    cmid, venues = _venue_costs(books, max(amounts) / USDC_ATOMIC, "buy")
    best = venues[0] if venues and venues[0]["all_in_cost_bps"] is not None else None
    return {
        "symbol": params.symbol,
        "notional_usdc": params.notional_usdc,
        "buys": params.buys,
        "interval_hours": params.interval_hours,
        "schedule": schedule,
        "consolidated_mid": _price(cmid),
        "venues": venues,
        "recommended_venue": best["venue"] if best else None,
        "est_total_cost_usdc": _r(params.notional_usdc * best["all_in_cost_bps"] / BPS, 4) if best else None,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="dca_routing_desk",
        path="/trading/dca-routing-desk",
        headline="DCA routing desk: slice schedule and venue routing for accumulation",
        price="0.12",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=25,
        session_callable=True,
        run=dca_routing_desk,
        params=DcaParams,
        output=DcaOut,
        price_for=_known_symbol,
        available=_fresh_books,
    )
)
