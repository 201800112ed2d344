"""Products: one registered callable per SKU. Every payment route (x402, credits,
sessions, marketplace) runs the same callable, so a product is written once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from a2a_service.core.inputs import QueryModel


class ProductFailed(Exception):
    """The product could not produce its content (e.g. no data yet). The caller is not
    charged; the route answers 503 with this message."""


@dataclass
class ProductCall:
    """What a product needs to run: validated parameters and who is calling."""

    sku: Any  # catalog.models.Sku
    params: BaseModel | None
    base_url: str
    payer: str | None = None
    account: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Product:
    sku: str
    run: Callable[[ProductCall], dict[str, Any]]
    params: type[QueryModel] | None = None
    # Called before any payment: raises NotFound/RequestValidationError for bad input and
    # may return an item-specific price in atomic USDC (news items carry their own price).
    price_for: Callable[[ProductCall], int | None] | None = None
    # A pure product's content depends only on the shop's data (not on the caller, the SKU
    # row or any parameter) and running it writes nothing. Such a product may be run before
    # the caller is charged and its content thrown away if the charge is refused, which is
    # what the credit fast path does (billing/api/credit_fastpath.py).
    pure: bool = False
    # A product with effects (a pack, a pass, an entitlement) changes state when it runs.
    # Paid by x402 it runs only after the payment settled: an effect created first would be
    # kept by a payer who empties the wallet between verify and settle.
    effects: bool = False
    # Called once the payer is known and before any payment is held (e.g. "this wallet needs
    # a credit account"): raises ProductFailed so nothing is claimed, settled or charged.
    ready: Callable[[ProductCall], None] | None = None
    # A cheap check, without running the product, of whether it has content to deliver now:
    # returns (True, "") or (False, reason). Free teasers use it so they do not advertise a
    # product that would answer 503 (e.g. a brief before any piece is published).
    available: Callable[[], tuple[bool, str]] | None = None
    # The model of the content `run` returns: the documented 200 answer of every route that
    # sells it (REST, and the MCP tool's outputSchema / the A2A artifact). None: not documented yet.
    output: type[BaseModel] | None = None


_PRODUCTS: dict[str, Product] = {}


def register(
    sku: str,
    *,
    params: type[QueryModel] | None = None,
    price_for: Callable[[ProductCall], int | None] | None = None,
    pure: bool = False,
    effects: bool = False,
    ready: Callable[[ProductCall], None] | None = None,
    available: Callable[[], tuple[bool, str]] | None = None,
) -> Callable[[Callable[[ProductCall], dict[str, Any]]], Callable[[ProductCall], dict[str, Any]]]:
    def decorator(func: Callable[[ProductCall], dict[str, Any]]) -> Callable[[ProductCall], dict[str, Any]]:
        if sku in _PRODUCTS:
            raise ValueError(f"product {sku} registered twice")
        _PRODUCTS[sku] = Product(
            sku=sku,
            run=func,
            params=params,
            price_for=price_for,
            pure=pure,
            effects=effects,
            ready=ready,
            available=available,
        )
        return func

    return decorator


def product_get(sku: str) -> Product | None:
    return _PRODUCTS.get(sku)


def products_built() -> set[str]:
    return set(_PRODUCTS)


def product_has_content(sku: str) -> tuple[bool, str]:
    """Whether a built product has content to deliver now, by its cheap check (no check: yes)."""
    product = _PRODUCTS.get(sku)
    if product is None:
        return False, "the product is not built yet"
    if product.available is None:
        return True, ""
    return product.available()
