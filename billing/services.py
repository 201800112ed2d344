"""Writes to billing records. A payment proof is claimed by inserting its (payer, nonce)
row: the unique constraint makes the claim atomic, across processes and databases."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from billing.models import Payment
from catalog.models import Sku


class ProofAlreadyUsed(Exception):
    pass


def payment_claim(
    *,
    sku: Sku,
    resource: str,
    payer: str,
    nonce: str,
    amount_atomic: int,
    network: str,
    asset: str,
    pay_to: str,
    x402_version: int,
) -> Payment:
    try:
        with transaction.atomic():
            return Payment.objects.create(
                sku=sku,
                resource=resource[:500],
                payer=payer.lower(),
                nonce=nonce.lower(),
                amount_atomic=amount_atomic,
                network=network,
                asset=asset,
                pay_to=pay_to,
                x402_version=x402_version,
                state=Payment.State.CLAIMED,
            )
    except IntegrityError:
        raise ProofAlreadyUsed(f"payment proof {nonce} of {payer} was already used") from None


def payment_release(*, payment_id: int) -> None:
    """Nothing was settled and nothing served (facilitator unreachable, product failed): the
    claim is withdrawn so the agent may send the same proof again."""
    Payment.objects.filter(pk=payment_id, state=Payment.State.CLAIMED).delete()


def payment_fail(*, payment_id: int, error: str) -> None:
    Payment.objects.filter(pk=payment_id, state=Payment.State.CLAIMED).update(
        state=Payment.State.FAILED, error=error[:500]
    )


def payment_settle(*, payment_id: int, tx_hash: str) -> None:
    updated = Payment.objects.filter(pk=payment_id, state=Payment.State.CLAIMED).update(
        state=Payment.State.SETTLED, tx_hash=tx_hash[:66], settled_at=timezone.now()
    )
    if updated != 1:
        raise RuntimeError(f"payment {payment_id} was not in the claimed state")
