"""The payment-route registry lives in a2a_service/core/payment_routes.py, so the catalog (which
says whether a SKU is live) can read it without importing billing; billing fills it when ready."""

from __future__ import annotations

from a2a_service.core.payment_routes import (
    ROUTES,
    PaymentRoute,
    RouteState,
    route_available,
    route_mark_available,
    routes_state,
)

__all__ = ["ROUTES", "PaymentRoute", "RouteState", "route_available", "route_mark_available", "routes_state"]
