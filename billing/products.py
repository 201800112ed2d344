"""Billing's own product: the state of the payment routes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from billing.routes import routes_state
from catalog.products.registry import ProductCall, product
from catalog.selectors import payment_alternatives
from catalog.selectors.schemas import PaymentAlternatives


class PaymentRouteOut(BaseModel):
    name: str = Field(description="x402, credits, sessions, ...")
    available: bool = Field(description="whether this build serves the route")
    how: str


class DualRailStatusOut(BaseModel):
    routes: list[PaymentRouteOut]
    payment_alternatives: PaymentAlternatives


@product(
    sku="payments_dual_rail_status",
    path="/payments/dual-rail-status",
    headline="Dual-rail payment status: x402 and the agent-payment network",
    price="0.01",
    family="payments",
    rank=40,
    output=DualRailStatusOut,
    pure=True,
)
def payments_dual_rail_status(call: ProductCall) -> dict[str, Any]:
    return {"routes": routes_state(), "payment_alternatives": payment_alternatives(call.base_url)}
