"""The payment front's two steps, and the one call that does both around billing.paid_call:

    decision = payment_choose(brought=..., sale=...)   # Chosen(scheme, rail) or Refused
    result = payment_result(paid_or_exception, sale=..., scheme=...)   # Sold or Refused
    result = payment_sell(brought=..., sale=...)        # choose, paid_call, result

Every refusal a payment can meet becomes a `Refused`; anything else (a bug, the database
lost) is raised as it came."""

from __future__ import annotations

from a2a_service.core.errors import ApiError, ProductUnavailable, RequestValidationError
from billing.front.identifier import payment_named, payment_named_sell
from billing.front.schemes import SCHEMES
from billing.front.types import Brought, Charge, Chosen, RefusalKind, Refused, Sale, Sold
from billing.paid_call import paid_call
from billing.rails.base import (
    CreditReceipt,
    FreeReceipt,
    NothingToDeliver,
    Paid,
    Receipt,
    ReplayReceipt,
    SessionReceipt,
    X402Receipt,
    product_available,
)
from billing.rails.x402 import PaymentUnreachable, SettlementPending, x402_challenge
from billing.x402.challenge import Challenge
from billing.x402.proof import PaymentRejected


def payment_brought(brought: Brought, accepts: tuple[str, ...]) -> str | None:
    """The scheme the material pays by, of those accepted (the first found), or None."""
    for name in accepts:
        if SCHEMES[name].brought(brought):
            return name
    return None


def payment_choose(*, brought: Brought, sale: Sale) -> Chosen | Refused:
    """The rail that pays this sale, or why not: material that does not pay (a refused proof, an
    unknown key), or nothing brought (the x402 challenge). A refused proof, and nothing brought,
    are 503 instead when the product has nothing to deliver (nobody signs for nothing)."""
    scheme = payment_brought(brought, sale.accepts)
    if scheme is not None:
        try:
            return Chosen(scheme=scheme, rail=SCHEMES[scheme].rail(brought, sale))
        except (ApiError, PaymentRejected) as exc:
            return _refused(exc, sale, scheme)
    try:
        product_available(sale.offer)
    except NothingToDeliver as exc:
        return _refused(exc, sale, None)
    challenge = _challenge(sale)
    price = sale.offer.price
    return Refused(
        kind="unpaid",
        status=402,
        code="payment_required",
        message=sale.asking or f"this resource costs {price} atomic USDC; pay it and retry",
        challenge=challenge,
    )


def payment_result(outcome: Paid | BaseException, *, sale: Sale, scheme: str | None) -> Sold | Refused:
    """What a paid call came to: the content and its charge, or the refusal (any other
    exception is raised again)."""
    if isinstance(outcome, Paid):
        return Sold(content=outcome.content, charge=_charge(outcome.receipt, sale))
    if isinstance(outcome, ApiError | PaymentRejected):
        return _refused(outcome, sale, scheme)
    raise outcome


def payment_sell(*, brought: Brought, sale: Sale) -> Sold | Refused:
    """Choose and pay; an x402 payment the client named (payment-identifier) is answered once
    (billing/front/identifier.py), whatever its scheme."""
    try:
        named = payment_named(brought, sale) if payment_brought(brought, sale.accepts) == "x402" else None
    except RequestValidationError as exc:
        return _refused(exc, sale, "x402")
    if named is not None:
        return payment_named_sell(named, sale, lambda: _choose_and_pay(brought, sale))
    return _choose_and_pay(brought, sale)


def _choose_and_pay(brought: Brought, sale: Sale) -> Sold | Refused:
    decision = payment_choose(brought=brought, sale=sale)
    if isinstance(decision, Refused):
        return decision
    return payment_pay(decision, sale=sale)


def payment_pay(chosen: Chosen, *, sale: Sale) -> Sold | Refused:
    try:
        paid = paid_call(product=sale.offer, payment=chosen.rail)
    except (ApiError, PaymentRejected) as exc:
        return payment_result(exc, sale=sale, scheme=chosen.scheme)
    return payment_result(paid, sale=sale, scheme=chosen.scheme)


def _challenge(sale: Sale) -> Challenge | None:
    if "x402" not in sale.accepts:
        return None
    return x402_challenge(sale.offer, resource_url=sale.resource_url)


def _refused(exc: ApiError | PaymentRejected, sale: Sale, scheme: str | None) -> Refused:
    if isinstance(exc, PaymentRejected):
        try:
            product_available(sale.offer)  # a refused proof is not asked again for nothing
        except NothingToDeliver as nothing:
            return _refused(nothing, sale, scheme)
        return Refused(
            kind="rejected",
            status=402,
            code=exc.reason,
            message=exc.message,
            challenge=exc.challenge or _challenge(sale),
            scheme=scheme,
        )
    kind: RefusalKind = "refused"
    if isinstance(exc, SettlementPending):
        kind = "pending"
    elif isinstance(exc, PaymentUnreachable):
        kind = "unreachable"
    elif isinstance(exc, ProductUnavailable):
        kind = "unavailable"
    retry = exc.extra.get("retry_after")
    return Refused(
        kind=kind,
        status=exc.status_code,
        code=str(exc.extra.get("code") or exc.code),
        message=exc.detail,
        challenge=_challenge(sale) if exc.status_code == 402 else None,
        scheme=scheme,
        charged=bool(exc.extra.get("charged", False)),
        retry_after=retry if isinstance(retry, int) else None,
        error=exc,
    )


def _charge(receipt: Receipt, sale: Sale) -> Charge:
    if isinstance(receipt, X402Receipt):
        settlement = receipt.settlement
        return Charge(
            rail="x402",
            charged_atomic=receipt.amount_atomic,
            receipt=receipt,
            transaction=settlement.transaction,
            payer=(settlement.payer or "").lower(),
            settlement=settlement,
        )
    if isinstance(receipt, CreditReceipt):
        return Charge(
            rail="credits",
            charged_atomic=receipt.charged_atomic,
            receipt=receipt,
            balance_atomic=receipt.balance_atomic,
            payer=sale.offer.call.payer or "",
        )
    if isinstance(receipt, ReplayReceipt):
        account = sale.offer.call.account
        balance = None
        if account is not None:
            account.refresh_from_db(fields=["credit_balance_atomic"])
            balance = account.credit_balance_atomic
        return Charge(
            rail="credits",
            charged_atomic=0,
            receipt=receipt,
            balance_atomic=balance,
            replay=True,
            payer=sale.offer.call.payer or "",
        )
    if isinstance(receipt, SessionReceipt):
        return Charge(
            rail=receipt.rail,
            charged_atomic=None,
            receipt=receipt,
            calls_remaining=receipt.calls_remaining,
            payer=sale.offer.call.payer or "",
        )
    assert isinstance(receipt, FreeReceipt)
    return Charge(rail="free", charged_atomic=0, receipt=receipt)
