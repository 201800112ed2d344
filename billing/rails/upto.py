"""The `upto` rail: a metered call paid by an x402 `upto` proof (a Permit2 authorization of a
maximum, through x402UptoPermit2Proxy), settled for what the call used.

It is the x402 rail (billing/rails/x402.py) with three differences, so the claim, the replay
refusal, the pending settlement, the reconciler and the sale are the same machinery:
1. The proof is checked here against the `upto` requirements the product offered (scheme,
   network, asset, payTo, the maximum, the Permit2 spender, the deadline), then verified by
   our facilitator before anything is claimed (signature, the payer's Permit2 allowance and
   balance, a simulation), as the x402 rail does for a proof it cannot check itself.
   The facilitator is asked directly, like `exact` (billing/x402/facilitator_client.py), not
   through the SDK's x402ResourceServerSync: the upto server scheme has no verify or settle
   hooks (it only builds requirements, which billing/x402/upto.py uses), and the direct path
   keeps what the x402 rail knows of an unreachable chain, a pending or replaced transaction.
2. The claim (payer, Permit2 nonce) holds the maximum; once the product ran, the meter
   (ProductSpec.metered) says what the call used, at most the maximum. The row's amount
   becomes that (`payment_meter`), then it is settled with the offered requirements at that
   amount. Zero settles nothing on chain: the payment is settled with no transaction (the
   proof is used; the sale is worth 0).
3. The receipt, the sale and PAYMENT-RESPONSE carry the amount settled, not the price.

A product that failed releases the claim: nothing is settled or charged."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import ClassVar

from django.conf import settings
from x402.mechanisms.evm.constants import (
    ERR_NETWORK_MISMATCH,
    ERR_PERMIT2_AMOUNT_MISMATCH,
    ERR_PERMIT2_DEADLINE_EXPIRED,
    ERR_PERMIT2_INVALID_SPENDER,
    ERR_PERMIT2_RECIPIENT_MISMATCH,
    ERR_PERMIT2_TOKEN_MISMATCH,
    ERR_UNSUPPORTED_SCHEME,
    X402_UPTO_PERMIT2_PROXY_ADDRESS,
)
from x402.mechanisms.evm.types import UptoPermit2Payload
from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse

from a2a_service.core.observe import paid_call_observe
from billing.models import Payment
from billing.rails.base import Content, Offer, Paid, Receipt, X402Receipt
from billing.rails.x402 import X402Hold, X402Rail, x402_challenge
from billing.services import payment_mark_delivered, payment_meter, payment_settle
from billing.x402.challenge import Challenge
from billing.x402.proof import (
    ADDRESS,
    ASSET_MISMATCH,
    INVALID_PAYLOAD,
    INVALID_VALID_BEFORE,
    PROOF_ALREADY_USED,
    SETTLE_MARGIN_SECONDS,
    VALID_BEFORE_SLACK_SECONDS,
    PaymentRejected,
    Proof,
)
from billing.x402.upto import SCHEME

logger = logging.getLogger(__name__)


def _same(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def upto_proof(payload: PaymentPayload, challenge: Challenge, *, check_window: bool = True) -> Proof:
    """The proof checked against the `upto` requirements the challenge offers. Raises
    PaymentRejected with a facilitator-style reason (the SDK's own for Permit2)."""
    offered = challenge.offered(SCHEME)
    accepted = payload.accepted
    if offered is None:
        raise PaymentRejected(
            ERR_UNSUPPORTED_SCHEME, f"{challenge.sku} is not metered: `upto` is not accepted; use 'exact'"
        )
    if accepted.network != settings.X402_NETWORK:
        raise PaymentRejected(
            ERR_NETWORK_MISMATCH,
            f"network {accepted.network!r} is not accepted; use {settings.X402_NETWORK!r}",
        )
    if not _same(accepted.asset, settings.USDC_ADDRESS):
        raise PaymentRejected(ASSET_MISMATCH, "the payment is not in the requested asset")
    if not _same(accepted.pay_to, settings.TREASURY_ADDRESS):
        raise PaymentRejected(ERR_PERMIT2_RECIPIENT_MISMATCH, "the payment is not to this service's treasury")
    try:
        permit = UptoPermit2Payload.from_dict(payload.payload)
        auth = permit.permit2_authorization
        nonce, deadline, maximum = int(auth.nonce), int(auth.deadline), int(auth.permitted.amount)
        if not (ADDRESS.fullmatch(auth.from_address) and 0 <= nonce < 2**256 and 0 <= deadline < 2**256):
            raise ValueError("from must be a 0x address, nonce and deadline uint256")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PaymentRejected(INVALID_PAYLOAD, f"not a Permit2 upto authorization: {exc}") from None
    if check_window:  # a proof that already paid is checked against what it paid (the x402 rail)
        if accepted.amount != offered.amount or maximum != int(offered.amount):
            raise PaymentRejected(
                ERR_PERMIT2_AMOUNT_MISMATCH,
                f"the maximum is {offered.amount} atomic USDC, the authorization permits {maximum}",
            )
        now = int(time.time())
        if deadline < now + SETTLE_MARGIN_SECONDS:
            raise PaymentRejected(ERR_PERMIT2_DEADLINE_EXPIRED, "the authorization has expired (deadline)")
        if deadline > now + settings.X402_MAX_TIMEOUT_SECONDS + VALID_BEFORE_SLACK_SECONDS:
            # As for `exact`: the claim of a proof stays undecided at most this long.
            raise PaymentRejected(
                INVALID_VALID_BEFORE,
                f"the deadline is more than maxTimeoutSeconds ({settings.X402_MAX_TIMEOUT_SECONDS} s) away",
            )
    if not _same(auth.spender, X402_UPTO_PERMIT2_PROXY_ADDRESS):
        raise PaymentRejected(ERR_PERMIT2_INVALID_SPENDER, "the Permit2 spender is not x402UptoPermit2Proxy")
    if not _same(auth.witness.to, settings.TREASURY_ADDRESS):
        raise PaymentRejected(
            ERR_PERMIT2_RECIPIENT_MISMATCH, "the authorization does not pay this service's treasury"
        )
    if not _same(auth.permitted.token, settings.USDC_ADDRESS):
        raise PaymentRejected(
            ERR_PERMIT2_TOKEN_MISMATCH, "the authorization does not move the requested asset"
        )
    return Proof(
        payload=payload,
        requirements=offered,
        payer=auth.from_address.lower(),
        nonce=f"0x{nonce:064x}",
        version=payload.x402_version,
        signature_checked=False,  # the facilitator checks it before the claim (Permit2 domain, smart wallets)
        valid_before=deadline,
    )


def upto_payment(*, payload: PaymentPayload, offer: Offer, resource_url: str) -> UptoRail:
    """The rail of an `upto` proof (registered for the front in billing/front/schemes.py).
    Raises PaymentRejected carrying the challenge it was checked against. A proof that already
    paid for this SKU is not held to today's maximum or clock (as the x402 rail): the claim
    decides whether it collects, waits, or is refused as used."""
    challenge = x402_challenge(offer, resource_url=resource_url)
    try:
        try:
            proof = upto_proof(payload, challenge)
        except PaymentRejected as exc:
            if exc.reason not in (ERR_PERMIT2_AMOUNT_MISMATCH, ERR_PERMIT2_DEADLINE_EXPIRED):
                raise
            seen = upto_proof(payload, challenge, check_window=False)
            if not Payment.objects.filter(payer=seen.payer, nonce=seen.nonce, sku=offer.sku).exists():
                raise
            proof = seen
    except PaymentRejected as exc:
        exc.challenge = challenge
        paid_call_observe(rail="x402", outcome="refused")  # refused before paid_call
        raise
    return UptoRail(proof=proof, challenge=challenge)


class UptoRail(X402Rail):
    """A checked `upto` proof; the x402 rail's claim, replay refusal and collection."""

    scheme: ClassVar[str] = SCHEME

    def __init__(self, *, proof: Proof, challenge: Challenge) -> None:
        super().__init__(proof=proof, challenge=challenge)
        self.settled_atomic = 0

    def _receipt(self, settlement: SettleResponse) -> X402Receipt:
        return X402Receipt(
            settlement=settlement, version=self.proof.version, amount_atomic=self.settled_atomic
        )

    def _existing(self, payment: Payment, offer: Offer) -> Paid:
        self.settled_atomic = payment.amount_atomic  # a settled payment collected: what it paid
        return super()._existing(payment, offer)

    def hold(self, offer: Offer, content: Content | None) -> UptoHold:
        held = super().hold(offer, content)
        return UptoHold(self, held.payment, offer)


class UptoHold(X402Hold):
    rail: UptoRail

    def commit(self, content: Content | None) -> Receipt:
        rail, offer = self.rail, self.offer
        meter = offer.product.metered
        if content is None or meter is None:  # a metered product has no effects (ProductSpec)
            raise RuntimeError(
                f"{offer.name}: an upto payment is settled only for a metered product's content"
            )
        offered = rail.proof.requirements
        assert isinstance(offered, PaymentRequirements)  # upto is x402 version 2 only
        maximum = int(offered.amount)
        asked = int(meter(offer.call, content, maximum))
        used = min(max(asked, 0), maximum)
        if used != asked:
            logger.error(
                "%s: the meter said %s of at most %s atomic USDC; %s settled",
                offer.name,
                asked,
                maximum,
                used,
            )
        if not payment_meter(payment_id=self.payment.id, amount_atomic=used):
            # Only a claim still held is metered: the reconciler took it (the call ran longer
            # than PAYMENT_CLAIM_STALE_SECONDS). Nothing was settled by this request.
            raise PaymentRejected(
                PROOF_ALREADY_USED, "this payment is no longer held for this call; send it again"
            )
        self.payment.amount_atomic = used
        rail.settled_atomic = used
        if used == 0:
            # Nothing to move: no transaction, the proof is used, a sale worth 0.
            payment_settle(payment_id=self.payment.id, tx_hash="")
            payment_mark_delivered(payment_id=self.payment.id)
            return rail._receipt(
                SettleResponse(
                    success=True,
                    transaction="",
                    network=settings.X402_NETWORK,
                    payer=rail.proof.payer,
                    amount="0",
                )
            )
        requirements = offered.model_copy(update={"amount": str(used)})
        rail.proof = replace(rail.proof, requirements=requirements)
        return super().commit(content)
