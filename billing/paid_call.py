"""One paid call, for every payment route, knowing nothing of HTTP.

    offer = paid_offer(product="news_unlock", params={"news_id": 7}, base_url=base)
    paid = paid_call(product=offer, payment=rail)        # or paid_call(product=..., params=..., ...)

The sequence, the same whatever pays:

1. prepare (`paid_offer`): the SKU is on sale (404), its product is built (503), the parameters
   are valid (422), the item exists and its price is known (`price_for`); nothing is held yet.
   A route that must show the price before it is paid (an x402 challenge) prepares first and
   passes the offer; everything else passes the product's name and its parameters.
2. admit (`Rail.admit`): the rail says who pays (`ProductCall.payer`/`account`) and what it
   charges, and answers a call it has answered before (an Idempotency-Key replay, an x402
   proof collecting what it paid for) without holding anything again.
3. `Product.ready` (the payer may buy this: e.g. a pack needs a credit account): a refusal
   holds and charges nothing.
4. hold (`Rail.hold`): x402 claims the proof, credits debit conditionally, a session uses
   one call. A hold that asks for a payment (not enough credit, a used-up session) is 503
   instead when the product has nothing to deliver now (`product_available`, which the
   unpaid surfaces also ask before they show a challenge). Then the product runs, and the
   hold commits (settle / keep the debit, its ledger row and the replay row / keep the
   call) or, if the product failed, is released.
   Two rail-declared variations of that order:
   - `final_before_effects` (x402): a product with `effects` runs only once the payment is
     final, so an effect is never kept by a payer whose payment then fails; its delivery is
     the rail's (`Hold.deliver`: delivered once);
   - `runs_first` (the credit fast path): a pure product runs before the hold, whose hold is
     then final by itself (one statement); the rail may look at the content before it holds.
   `Rail.scope` wraps steps 4's hold-run-commit in what the rail needs (a transaction, so a
   failed product rolls the debit back with everything else).

Errors are domain errors only: a2a_service.core.errors.ApiError subclasses (mapped to HTTP by
the one exception handler) and billing.x402.proof.PaymentRejected (an x402 refusal, which
the x402 route answers with its payment requirements). A product that fails answers
ProductUnavailable with `charged: false`, except where the payment was already final (an
effect after an x402 settlement: `charged: true`, collect it again with the same proof)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from a2a_service.core.errors import (
    ApiError,
    NotFound,
    PaymentRequired,
    ProductUnavailable,
    RequestValidationError,
)
from a2a_service.core.observe import paid_call_observe
from billing.rails.base import (
    Answered,
    Content,
    CreditReceipt,
    FreeReceipt,
    Offer,
    Paid,
    Rail,
    Receipt,
    ReplayReceipt,
    SessionReceipt,
    X402Receipt,
    product_available,
    product_ready,
    product_run,
)
from billing.rails.free import FreeRail
from catalog.models import Sku
from catalog.products.registry import ProductCall, product_get

__all__ = [
    "Content",
    "CreditReceipt",
    "FreeReceipt",
    "Offer",
    "Paid",
    "Rail",
    "Receipt",
    "ReplayReceipt",
    "SessionReceipt",
    "X402Receipt",
    "paid_call",
    "paid_offer",
    "sku_on_sale",
]


# --- 1. prepare ------------------------------------------------------------------------------
def sku_on_sale(name: str) -> Sku:
    sku = Sku.objects.filter(sku=name).first()
    if sku is None or not sku.is_live:
        raise NotFound(f"SKU {name} is not for sale")
    return sku


def paid_offer(
    *,
    product: str,
    params: BaseModel | Mapping[str, Any] | None,
    base_url: str,
    params_in: str = "query",
    sku: Sku | None = None,
    sku_row: bool = True,
) -> Offer:
    """The call prepared, before any payment. `params` is the product's params model, or a
    mapping to validate with it (errors answer 422 with loc [params_in, field]). `sku` is the
    row if the route already read it; sku_row=False skips reading it (pure products without
    params or price_for only: the credit fast path, whose debit reads the price)."""
    if sku is None and sku_row:
        sku = sku_on_sale(product)
    built = product_get(product)
    if built is None:
        raise ProductUnavailable(
            f"{product} is not available yet; nothing was charged", extra={"sku": product, "charged": False}
        )
    model: BaseModel | None = None
    if built.params is not None:
        if isinstance(params, built.params):
            model = params
        else:
            data = params.model_dump() if isinstance(params, BaseModel) else dict(params or {})
            try:
                model = built.params.model_validate(data)
            except ValidationError as exc:
                raise RequestValidationError.from_pydantic(exc, params_in) from exc
    # params_in: where the parameters came from, for a product whose own checks (price_for,
    # run) refuse a parameter with a 422 naming it.
    call = ProductCall(sku=sku, params=model, base_url=base_url, extra={"params_in": params_in})
    if sku is None:
        if built.price_for is not None or built.params is not None:
            raise RuntimeError(f"{product}: only a product without parameters is prepared without its SKU")
        return Offer(sku=None, product=built, call=call, price_atomic=None)
    price = built.price_for(call) if built.price_for else None
    return Offer(sku=sku, product=built, call=call, price_atomic=sku.price_atomic if price is None else price)


def paid_call(
    *,
    product: str | Offer,
    payment: Rail | None,
    params: BaseModel | Mapping[str, Any] | None = None,
    base_url: str = "",
    params_in: str = "query",
) -> Paid:
    """Sell one call of `product` (its name, with params and base_url; or an Offer from
    paid_offer) paid by `payment` (a rail; None: free, only while billing is off)."""
    offer = (
        product
        if isinstance(product, Offer)
        else paid_offer(product=product, params=params, base_url=base_url, params_in=params_in)
    )
    rail = FreeRail() if payment is None else payment
    held = [False]  # whether a payment was held (then a failure gave it back)
    try:
        paid = _sell(offer, rail, held)
    except BaseException as exc:
        outcome = paid_call_failure(exc, held=held[0])
        if outcome and rail.rail_name:
            paid_call_observe(rail=rail.rail_name, outcome=outcome)
        raise
    if rail.rail_name:
        replayed = isinstance(paid.receipt, ReplayReceipt)
        paid_call_observe(rail=rail.rail_name, outcome="replayed" if replayed else "served")
    return paid


def paid_call_failure(exc: BaseException, *, held: bool) -> str | None:
    """What a paid call that raised `exc` came to (a2a_service/core/metrics.py PAID_OUTCOMES).
    An error may say it itself (`paid_call_outcome`: a refused x402 proof, a settlement pending)."""
    declared: str | None = getattr(exc, "paid_call_outcome", None)
    if declared:
        return declared
    if isinstance(exc, ProductUnavailable):
        if exc.extra.get("charged"):
            return "pending"  # paid, kept for the payer to collect with the same proof
        return "refunded" if held else "unavailable"
    if isinstance(exc, PaymentRequired) or (isinstance(exc, ApiError) and exc.status_code < 500):
        return "refused"
    return "error"


def _sell(offer: Offer, rail: Rail, held: list[bool]) -> Paid:
    answered = rail.admit(offer)
    if answered is not None:
        return answered
    product_ready(offer)

    def body() -> Paid:
        for write in offer.with_payment:
            write()
        if rail.runs_first:
            if not offer.product.pure:
                raise RuntimeError(f"{offer.name} is not pure: it cannot run before it is paid")
            content = product_run(offer)
            debited = rail.hold(offer, content)
            held[0] = True
            return Paid(content, debited.commit(content))
        try:
            hold = rail.hold(offer, None)
        except PaymentRequired:
            # Not enough credit, a used-up session: no payment is asked for nothing.
            product_available(offer)
            raise
        held[0] = True
        if offer.product.effects and rail.final_before_effects:
            receipt = hold.commit(None)
            return Paid(hold.deliver(lambda: offer.product.run(offer.call)), receipt)
        try:
            content = product_run(offer)
        except BaseException:
            hold.release()
            raise
        return Paid(content, hold.commit(content))

    try:
        return rail.scope(body)
    except Answered as done:
        return done.paid
