"""What a rail is, and what a paid call returns (see billing/paid_call.py for the sequence).

A rail is one object per call, built by the payment front (billing/front/) from what the
caller sent (an x402 proof, an API key's account, a session token): billing/rails/x402.py, billing/rails/credits.py,
billing/rails/free.py, billing/api/credit_fastpath.py (the WSGI fast path's rail) and, one
layer up, sessions_app/rail.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from django.conf import settings
from x402.schemas import SettleResponse

from a2a_service.core.errors import ProductUnavailable
from catalog.models import Sku
from catalog.products.registry import Product, ProductCall, ProductFailed, product_has_content

Content = dict[str, Any]


@dataclass
class Offer:
    """A call prepared before any payment: what runs, for whom, at which price. One offer
    serves one call (the rail writes who pays into its ProductCall)."""

    sku: Sku | None  # None only where a rail reads the SKU itself (the credit fast path)
    product: Product
    call: ProductCall
    # The price in atomic USDC (price_for's, else the SKU's); None where the SKU row was not
    # read (the credit fast path's debit statement reads it in its own transaction).
    price_atomic: int | None
    # Writes that belong to the call's payment, run inside the rail's scope before its hold (in
    # its transaction where the rail has one): a call that fails leaves none of them (e.g. the
    # sign-in's nonce, used once by a call that was served). Each raises to refuse the call.
    with_payment: list[Callable[[], None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.product.sku

    @property
    def price(self) -> int:
        if self.price_atomic is None:
            raise RuntimeError(f"{self.name}: this offer was prepared without its price")
        return self.price_atomic


# --- receipts: what the payment did, for the route to tell the caller ------------------------
@dataclass(frozen=True)
class X402Receipt:
    settlement: SettleResponse
    version: int  # the x402 version of the proof (v1 routes also answer X-PAYMENT-RESPONSE)
    amount_atomic: int = 0  # what the proof paid (its challenge's price)
    rail: Literal["x402"] = "x402"


@dataclass(frozen=True)
class CreditReceipt:
    charged_atomic: int
    balance_atomic: int
    rail: Literal["credits"] = "credits"


@dataclass(frozen=True)
class ReplayReceipt:
    """The first answer to this Idempotency-Key, replayed as it was stored (nothing charged)."""

    status_code: int
    headers: Mapping[str, str]
    rail: Literal["replay"] = "replay"


@dataclass(frozen=True)
class SessionReceipt:
    """A prepaid call: one of a pack's calls used (a session's; a managed MCP pack's names its
    own rail)."""

    calls_remaining: int
    rail: str = "session"


@dataclass(frozen=True)
class FreeReceipt:
    """No payment: billing is off."""

    rail: Literal["free"] = "free"


Receipt = X402Receipt | CreditReceipt | ReplayReceipt | SessionReceipt | FreeReceipt


@dataclass(frozen=True)
class Paid:
    content: Content
    receipt: Receipt


# --- the rail protocol: one object per call, built by the route from what it was sent ---------
class Hold(Protocol):
    """A payment held for one call."""

    def commit(self, content: Content | None) -> Receipt:
        """Make the charge final (content is None when committing before an effect runs)."""
        ...

    def release(self) -> None:
        """The product failed: nothing is charged."""
        ...

    def deliver(self, run: Callable[[], Content]) -> Content:
        """Run a product with effects after commit (rails with final_before_effects only)."""
        ...


class Rail(Protocol):
    # Its label in the paid-call metrics (a2a_service/core/metrics.py RAILS); "" for a rail
    # whose caller counts its calls itself (the credit fast path).
    rail_name: ClassVar[str]
    # A product with effects runs only after the payment is final (commit, then deliver).
    final_before_effects: ClassVar[bool]
    # A pure product runs before the hold (the hold is final on its own; see the module doc).
    runs_first: ClassVar[bool]

    def admit(self, offer: Offer) -> Paid | None:
        """Who pays and what is charged; an answer already given, or None to go on."""
        ...

    def scope(self, body: Callable[[], Paid]) -> Paid:
        """Run hold, product and commit inside what the rail needs (e.g. a transaction)."""
        ...

    def hold(self, offer: Offer, content: Content | None) -> Hold:
        """Hold the payment (content: the product's, for runs_first rails only)."""
        ...


class Answered(Exception):  # noqa: N818 - a result carried out of a hold, not a fault
    """Raised by a hold that found the call already answered (e.g. the same x402 proof,
    claimed a moment ago by a concurrent request that has since settled it)."""

    def __init__(self, paid: Paid) -> None:
        super().__init__("answered")
        self.paid = paid


def _retry_after() -> tuple[dict[str, Any], dict[str, str]]:
    """When to ask a product with nothing to deliver again: in the body (for surfaces without
    headers: MCP, A2A) and as Retry-After."""
    retry = int(settings.PRODUCT_UNAVAILABLE_RETRY_SECONDS)
    return {"retry_after": retry}, {"Retry-After": str(retry)}


class NothingToDeliver(ProductUnavailable):
    """Asked before a payment is asked for (product_available): the product's own check says it
    has nothing to deliver now, so no payment is asked for; a 503 like the product's own."""


def product_available(offer: Offer) -> None:
    """Before a payment is asked for: a product whose own cheap check says it has nothing to
    deliver now (no brief yet, no fresh data) is 503, so no agent signs, and nobody is asked to
    top up, for nothing. A product without a check is taken to have content."""
    ok, reason = product_has_content(offer.name)
    if not ok:
        body, headers = _retry_after()
        raise NothingToDeliver(
            f"{offer.name} has nothing to deliver now: {reason}; nothing was charged",
            extra={"sku": offer.name, "charged": False, **body},
            headers=headers,
        )


def product_run(offer: Offer) -> Content:
    """Run the product; a product that cannot deliver is ProductUnavailable, nothing charged."""
    try:
        return offer.product.run(offer.call)
    except ProductFailed as exc:
        body, headers = _retry_after()
        raise ProductUnavailable(
            str(exc), extra={"sku": offer.name, "charged": False, **body}, headers=headers
        ) from exc


def product_ready(offer: Offer) -> None:
    if offer.product.ready is None:
        return
    try:
        offer.product.ready(offer.call)
    except ProductFailed as exc:
        raise ProductUnavailable(str(exc), extra={"sku": offer.name, "charged": False}) from exc
