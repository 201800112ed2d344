"""The x402 rail: a payment proof held (claimed), settled, or released. The sequence is
billing/paid_call.py's; this rail fills it in. Raises domain errors only (PaymentRejected,
SettlementPending, ProductUnavailable).

The order, and why:
1. A proof whose signature was not checked locally (a smart wallet's) is verified by the
   facilitator before anything is claimed, so a forged proof leaves no row in anyone's name.
2. The proof is claimed: (payer, nonce) is unique, so a proof serves one call.
3. The product's `ready` check runs before the claim (e.g. the wallet needs an account):
   `admit` (1, and a proof seen before) runs before it, `hold` (2) after.
4. Content products run before settlement (a failed product releases the claim and nothing
   is charged); products with effects run only after it (no effect without payment).
5. A settlement the facilitator could not confirm in time keeps the claim `pending` with its
   transaction; the reconciler decides it from the chain. The agent is told so, and sends the
   same proof again to collect the content once it confirms.
6. A settled payment is delivered once: `delivered_at` is claimed in the transaction that
   runs the product, so a settled-but-undelivered payment is collected exactly once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.db import transaction
from x402.schemas import PaymentPayload, SettleResponse
from x402.schemas.v1 import PaymentPayloadV1

from a2a_service.core.errors import ApiError, ProductUnavailable
from a2a_service.core.observe import paid_call_observe, settlement_observe
from billing.models import Payment
from billing.rails.base import Answered, Content, Offer, Paid, Receipt, X402Receipt
from billing.services import (
    ProofAlreadyUsed,
    payment_claim,
    payment_fail,
    payment_mark_delivered,
    payment_pending,
    payment_release,
    payment_settle,
)
from billing.x402.challenge import Challenge, challenge_build
from billing.x402.facilitator_client import (
    FACILITATOR_UNREACHABLE,
    FacilitatorUnavailable,
    Settlement,
    SettleOutcome,
    facilitator_settle,
    facilitator_verify,
)
from billing.x402.proof import PROOF_ALREADY_USED, PaymentRejected, Proof, proof_check, proof_payer_nonce
from catalog.models import Sku
from catalog.products.registry import ProductFailed

# How long an agent should wait before asking again about a pending settlement.
PENDING_RETRY_SECONDS = 5
# How long before sending the same proof again when the facilitator or the chain's RPC could
# not be reached (nothing was claimed or charged).
UNREACHABLE_RETRY_SECONDS = 5


class SettlementPending(ApiError):
    """The payment was broadcast but is not confirmed yet. Nothing is lost: the same proof,
    sent again, collects the content once the reconciler has seen it on chain."""

    status_code = 202
    code = "settlement_pending"
    paid_call_outcome = "pending"


SETTLEMENT_STATUS_PATH = "/api/a2a/x402/settlement"


def settlement_status_url(*, base: str, payer: str, nonce: str) -> str:
    """Where the payer follows one payment (free): its state and its current transaction."""
    return f"{base}{SETTLEMENT_STATUS_PATH}?{urlencode({'payer': payer, 'nonce': nonce})}"


def _pending(payment: Payment) -> SettlementPending:
    resource = urlsplit(payment.resource)
    base = f"{resource.scheme}://{resource.netloc}" if resource.netloc else ""
    if payment.state == Payment.State.CLAIMED:
        # Claimed by another request that is still running, or whose process died (a worker
        # killed, the database lost after the claim committed). Answered as pending, not as a
        # final refusal: clients give up on a 402 "nonce already used", and this proof may still
        # be collected once the claim is decided (settled from the chain, or released).
        detail = (
            "your payment is being processed by another request with the same proof (or one that was "
            "interrupted); nothing is lost: send this same request with the same payment header again "
            "after Retry-After. If that request ended without answering, the reconciler decides the "
            "payment from the chain (settled: collect it with the same proof; unused once the "
            "authorization expires: released, nothing charged). `status` shows its state"
        )
    else:
        detail = (
            "your payment was broadcast but is not confirmed yet; nothing is lost: send this same request "
            "with the same payment header again to collect the content once it confirms. The transaction "
            "may be replaced (re-sent with more gas) before it is mined: `status` shows the current one and "
            "the payment's state, by the authorization's payer and nonce"
        )
    return SettlementPending(
        detail,
        extra={
            "sku": payment.sku.sku if payment.sku_id else None,
            "transaction": payment.tx_hash,
            "network": payment.network,
            "payer": payment.payer,
            "nonce": payment.nonce,
            "retry_after": PENDING_RETRY_SECONDS,
            "collect": {
                "method": "GET",
                "url": payment.resource,
                "header": "the same PAYMENT-SIGNATURE (or X-PAYMENT) header",
            },
            "status": {
                "method": "GET",
                "url": settlement_status_url(base=base, payer=payment.payer, nonce=payment.nonce),
            },
        },
        headers={"Retry-After": str(PENDING_RETRY_SECONDS)},
    )


def x402_payment_of(payload: PaymentPayload | PaymentPayloadV1) -> Payment | None:
    """The payment this proof already made (for any SKU), if any: to collect or wait on."""
    key = proof_payer_nonce(payload)
    if key is None:
        return None
    return Payment.objects.filter(payer=key[0], nonce=key[1]).select_related("sku").first()


def x402_challenge(offer: Offer, *, resource_url: str, price_atomic: int | None = None) -> Challenge:
    """What the offer asks an x402 payer for (at price_atomic instead, for a proof that already
    paid: it is checked against what it paid, not today's price)."""
    sku = _sku(offer)
    return challenge_build(
        sku=sku.sku,
        description=sku.headline,
        price_atomic=offer.price if price_atomic is None else price_atomic,
        resource_url=resource_url,
    )


def x402_payment(*, payload: PaymentPayload | PaymentPayloadV1, offer: Offer, resource_url: str) -> X402Rail:
    """The rail of a decoded proof, checked against the offer's challenge. A proof that
    already paid for this SKU (pending, or settled and not yet delivered) is checked against
    what it paid, not today's price or clock. Raises PaymentRejected carrying the challenge
    it was checked against (the x402 route answers the refusal with it)."""
    seen = x402_payment_of(payload)
    paid = seen if seen is not None and seen.sku_id == _sku(offer).id else None
    challenge = x402_challenge(
        offer, resource_url=resource_url, price_atomic=None if paid is None else paid.amount_atomic
    )
    try:
        proof = proof_check(payload, challenge, check_window=paid is None)
    except PaymentRejected as exc:
        exc.challenge = challenge
        paid_call_observe(rail="x402", outcome="refused")  # refused before paid_call
        raise
    rail = X402Rail(proof=proof, challenge=challenge)
    if proof_payer_nonce(payload) == (proof.payer, proof.nonce):
        rail.seen = (seen,)  # what admit() would read again
    return rail


class X402Rail:
    """A checked proof (billing.x402.proof.proof_check) for the challenge it answers."""

    rail_name: ClassVar[str] = "x402"
    final_before_effects: ClassVar[bool] = True
    runs_first: ClassVar[bool] = False
    scheme: ClassVar[str] = "exact"  # the Payment row's (billing/rails/upto.py is `upto`)

    def __init__(self, *, proof: Proof, challenge: Challenge) -> None:
        self.proof = proof
        self.challenge = challenge
        # The proof's payment row as read when the proof was checked (a 1-tuple), if it was.
        self.seen: tuple[Payment | None] | None = None

    def _receipt(self, settlement: SettleResponse) -> X402Receipt:
        return X402Receipt(settlement=settlement, version=self.proof.version, amount_atomic=self.challenge.price_atomic)

    def admit(self, offer: Offer) -> Paid | None:
        sku = _sku(offer)
        proof = self.proof
        if self.seen is not None:
            existing = self.seen[0]
        else:
            existing = Payment.objects.filter(payer=proof.payer, nonce=proof.nonce).select_related("sku").first()
        if existing is not None:
            return self._existing(existing, offer)
        if not proof.signature_checked:
            _verify(proof, sku=sku)
        offer.call.payer = proof.payer
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return body()

    def hold(self, offer: Offer, content: Content | None) -> X402Hold:
        sku, proof = _sku(offer), self.proof
        try:
            payment = payment_claim(
                sku=sku,
                resource=self.challenge.resource.url,
                payer=proof.payer,
                nonce=proof.nonce,
                amount_atomic=self.challenge.price_atomic,
                network=settings.X402_NETWORK,
                asset=settings.USDC_ADDRESS,
                pay_to=settings.TREASURY_ADDRESS,
                x402_version=proof.version,
                valid_before=proof.valid_before,
                scheme=self.scheme,
            )
        except ProofAlreadyUsed:
            # The same proof, claimed a moment ago by a concurrent request.
            existing = (
                Payment.objects.filter(payer=proof.payer, nonce=proof.nonce).select_related("sku").first()
            )
            if existing is None:
                raise PaymentRejected(PROOF_ALREADY_USED, "this payment proof was already used") from None
            raise Answered(self._existing(existing, offer)) from None
        if proof.signature_checked:
            _verify(proof, sku=sku, payment=payment)
        return X402Hold(self, payment, offer)

    def _existing(self, payment: Payment, offer: Offer) -> Paid:
        """A proof seen before: collect what it paid for, say it is still pending, or refuse it."""
        if payment.sku_id != _sku(offer).id:
            raise PaymentRejected(
                PROOF_ALREADY_USED, "this payment proof was already used for another product"
            )
        if payment.state == Payment.State.PENDING:
            raise _pending(payment)
        if payment.state == Payment.State.CLAIMED:
            # Another request holds it right now (or its process died: the reconciler then
            # settles or releases it, and a settled one can be collected with this proof).
            raise _pending(payment)
        if payment.state == Payment.State.SETTLED and payment.delivered_at is None:
            offer.call.payer = payment.payer
            content = _deliver(payment, lambda: offer.product.run(offer.call))
            settlement = SettleResponse(
                success=True, transaction=payment.tx_hash, network=payment.network, payer=payment.payer
            )
            return Paid(content, self._receipt(settlement))
        raise PaymentRejected(
            PROOF_ALREADY_USED, "this payment proof was already used; sign a new authorization (new nonce)"
        )


class X402Hold:
    def __init__(self, rail: X402Rail, payment: Payment, offer: Offer) -> None:
        self.rail = rail
        self.payment = payment
        self.offer = offer

    def commit(self, content: Content | None) -> Receipt:
        # Content that exists already (a product that ran first) is delivered as it settles.
        settlement = _settle(self.payment, self.rail.proof, delivered=content is not None)
        return self.rail._receipt(settlement)

    def release(self) -> None:
        payment_release(payment_id=self.payment.id)

    def deliver(self, run: Callable[[], Content]) -> Content:
        return _deliver(self.payment, run)


def _sku(offer: Offer) -> Sku:
    if offer.sku is None:
        raise RuntimeError(f"{offer.name}: an x402 payment needs the SKU row")
    return offer.sku


def _verify(proof: Proof, *, sku: Sku, payment: Payment | None = None) -> None:
    try:
        verified = facilitator_verify(proof)
    except FacilitatorUnavailable as exc:
        if payment is not None:
            payment_release(payment_id=payment.id)
        unreachable = _unreachable(f"{exc}; nothing was charged, the same proof may be sent again", sku)
        # Our side failed, not the product: a claim given back, or (before any claim) an error.
        unreachable.paid_call_outcome = "refunded" if payment is not None else "error"
        raise unreachable from exc
    if not verified.is_valid:
        reason = verified.invalid_reason or "invalid_payment"
        if payment is not None:
            payment_fail(payment_id=payment.id, error=f"verify: {reason} {verified.invalid_message or ''}")
        raise PaymentRejected(reason, verified.invalid_message or "the facilitator refused the payment")


class PaymentUnreachable(ProductUnavailable):
    """503 with Retry-After: the facilitator or the chain did not answer, the claim is withdrawn,
    and the agent sends the same proof again (not a new signature: nothing is wrong with it)."""


def _unreachable(detail: str, sku: Sku) -> PaymentUnreachable:
    return PaymentUnreachable(
        detail[:500],
        extra={"sku": sku.sku, "charged": False, "retry_after": UNREACHABLE_RETRY_SECONDS},
        headers={"Retry-After": str(UNREACHABLE_RETRY_SECONDS)},
    )


def _settle(payment: Payment, proof: Proof, *, delivered: bool) -> SettleResponse:
    started = time.perf_counter()
    outcome = facilitator_settle(proof)
    settlement_observe(outcome=_settlement_label(outcome), seconds=time.perf_counter() - started)
    if outcome.state is Settlement.SETTLED:
        payment_settle(payment_id=payment.id, tx_hash=outcome.tx_hash, held=payment, delivered=delivered)
        return outcome.response
    if outcome.state is Settlement.PENDING:
        payment_pending(payment_id=payment.id, tx_hash=outcome.tx_hash, error=f"settle: {outcome.message}")
        payment.refresh_from_db()
        raise _pending(payment)
    if outcome.reason == FACILITATOR_UNREACHABLE:
        payment_release(payment_id=payment.id)
        unreachable = _unreachable(
            f"the payment could not be settled: {outcome.message}; nothing was charged, the same proof may be "
            "sent again",
            payment.sku,
        )
        unreachable.paid_call_outcome = "refunded"  # the claim was given back
        raise unreachable
    payment_fail(payment_id=payment.id, error=f"settle: {outcome.reason} {outcome.message}")
    raise PaymentRejected(
        outcome.reason or "settlement_failed", outcome.message or "the payment could not be settled"
    )


def _settlement_label(outcome: SettleOutcome) -> str:
    if outcome.state is Settlement.SETTLED:
        return "settled"
    if outcome.state is Settlement.PENDING:
        return "pending"
    return "unreachable" if outcome.reason == "facilitator_unreachable" else "failed"


def _deliver(payment: Payment, run: Callable[[], Content]) -> Content:
    """Run the product for a settled payment, once. A product that fails leaves the payment
    settled and undelivered: the payer collects it later with the same proof."""
    try:
        with transaction.atomic():
            if not payment_mark_delivered(payment_id=payment.id):
                raise PaymentRejected(PROOF_ALREADY_USED, "this payment was already delivered")
            return run()
    except ProductFailed as exc:
        raise ProductUnavailable(
            f"{exc}. Your payment settled ({payment.tx_hash}) and is kept for you: send the same proof "
            "again to collect it",
            extra={"sku": payment.sku.sku, "charged": True, "transaction": payment.tx_hash},
        ) from exc
