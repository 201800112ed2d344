"""One x402 payment as its payer follows it, by the authorization's (payer, nonce): its state
and its current settlement transaction (a pending transaction may be replaced by one with more
gas before it is mined; the reconciler records whichever carried the authorization)."""

from __future__ import annotations

from a2a_service.core.formats import iso
from a2a_service.core.money import usdc_from_atomic
from billing import schemas as s
from billing.models import Payment
from billing.rails.x402 import PENDING_RETRY_SECONDS

COLLECT_HEADER = "the same PAYMENT-SIGNATURE (or X-PAYMENT) header"



def _next(state: Payment.State, *, delivered: bool) -> str:
    """What the payer does now."""
    if state == Payment.State.CLAIMED:
        return "being settled: ask again shortly"
    if state == Payment.State.PENDING:
        return (
            "broadcast, not confirmed yet: ask again after retry_after; once settled, collect the content by "
            "sending the same request with the same payment header"
        )
    if state == Payment.State.SETTLED and not delivered:
        return "settled: collect the content by sending the same request with the same payment header (once)"
    if state == Payment.State.SETTLED:
        return "settled and delivered: nothing left to do"
    return "failed: nothing was paid; sign a new authorization (new nonce) to buy again"


def x402_settlement(base: str, *, payer: str, nonce: str) -> s.SettlementStatusOut | None:
    payment = (
        Payment.objects.filter(payer=payer.lower(), nonce=nonce.lower()).select_related("sku").first()
    )
    if payment is None:
        return None
    state = Payment.State(payment.state)
    delivered = payment.delivered_at is not None
    final = state in (Payment.State.SETTLED, Payment.State.FAILED)
    collectable = state == Payment.State.PENDING or (state == Payment.State.SETTLED and not delivered)
    return s.SettlementStatusOut(
        payer=payment.payer,
        nonce=payment.nonce,
        sku=payment.sku.sku,
        amount_atomic=payment.amount_atomic,
        amount_usdc=usdc_from_atomic(payment.amount_atomic),
        network=payment.network,
        state=state.value,
        final=final,
        transaction=payment.tx_hash,
        settled_at=iso(payment.settled_at),
        delivered=delivered,
        error=payment.error,
        next=_next(state, delivered=delivered),
        retry_after=None if final else PENDING_RETRY_SECONDS,
        collect=s.SettlementCollectHowOut(method="GET", url=payment.resource, header=COLLECT_HEADER)
        if collectable
        else None,
    )
