"""Writes to billing records. A payment proof is claimed by inserting its (payer, nonce)
row: the unique constraint makes the claim atomic, across processes and databases.

Every state change of a claim is a conditional UPDATE on the state it expects, so two
workers (a request and the reconciler, say) can never both move the same payment."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from a2a_service.core.money import atomic_from_usdc
from a2a_service.core.observe import money_event
from billing.models import BillingSettings, Payment, WhaleTier
from catalog.models import Sku

# (name, USDC deposited in the window, bonus percent, requests per minute). Perks beyond these
# benefits (priority support, say) are added by staff in the admin, when someone delivers them.
WHALE_TIERS: list[tuple[str, str, str, int]] = [
    ("dolphin", "25", "2", 1200),
    ("whale", "100", "5", 3000),
    ("leviathan", "500", "8", 6000),
]


def billing_seed() -> None:
    """The settings row and the whale tiers (run by catalog_seed; staff edits are kept)."""
    BillingSettings.load()
    for name, min_usdc, bonus, per_minute in WHALE_TIERS:
        WhaleTier.objects.get_or_create(
            name=name,
            defaults={
                "min_deposit_atomic": atomic_from_usdc(min_usdc),
                "bonus_pct": bonus,
                "rate_limit_per_minute": per_minute,
                "perks": [],
            },
        )


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
    valid_before: int | None = None,
    scheme: str = "exact",
) -> Payment:
    try:
        with transaction.atomic():
            payment = Payment.objects.create(
                sku=sku,
                resource=resource[:500],
                payer=payer.lower(),
                nonce=nonce.lower(),
                amount_atomic=amount_atomic,
                network=network,
                asset=asset,
                pay_to=pay_to,
                x402_version=x402_version,
                scheme=scheme,
                state=Payment.State.CLAIMED,
                # Stored for the reconciler only; a far-future value is capped to what a
                # PositiveBigIntegerField holds (it then simply never expires).
                valid_before=min(valid_before, 2**63 - 1) if valid_before is not None else None,
            )
            money_event("claim", amount_atomic=amount_atomic, **_payment_ids(payment))
    except IntegrityError:
        raise ProofAlreadyUsed(f"payment proof {nonce} of {payer} was already used") from None
    return payment


def _payment_ids(payment: Payment) -> dict[str, Any]:
    return {
        "payment_id": payment.id,
        "payer": payment.payer,
        "nonce": payment.nonce,
        "sku": payment.sku.sku if payment.sku_id else None,
    }


def _payment_event(event: str, payment_id: int, **more: Any) -> None:
    """A money event of a payment whose state just changed (read again for its ids)."""
    payment = Payment.objects.select_related("sku").filter(pk=payment_id).first()
    if payment is not None:
        money_event(event, amount_atomic=payment.amount_atomic, **_payment_ids(payment), **more)


def payment_release(*, payment_id: int) -> bool:
    """Nothing was settled and nothing served (facilitator unreachable, product failed, the
    broadcast reverted or expired): the claim is withdrawn so the agent may send the same
    proof again. Only a claim that is not settled can be released."""
    with transaction.atomic():
        payment = (
            Payment.objects.select_related("sku")
            .filter(pk=payment_id, state__in=(Payment.State.CLAIMED, Payment.State.PENDING))
            .first()
        )
        deleted, _ = Payment.objects.filter(
            pk=payment_id, state__in=(Payment.State.CLAIMED, Payment.State.PENDING)
        ).delete()
        if deleted and payment is not None:
            money_event("release", amount_atomic=payment.amount_atomic, **_payment_ids(payment))
    return bool(deleted)


def payment_fail(*, payment_id: int, error: str) -> None:
    with transaction.atomic():
        failed = Payment.objects.filter(
            pk=payment_id, state__in=(Payment.State.CLAIMED, Payment.State.PENDING)
        ).update(state=Payment.State.FAILED, error=error[:500])
        if failed:
            _payment_event("fail", payment_id, error=error[:200])


def payment_pending(*, payment_id: int, tx_hash: str, error: str) -> None:
    """The settlement was broadcast (or may have been) but not confirmed in time: keep the
    claim, with its transaction hash when known, for the reconciler."""
    Payment.objects.filter(pk=payment_id, state=Payment.State.CLAIMED).update(
        state=Payment.State.PENDING, tx_hash=(tx_hash or "")[:66], error=error[:500]
    )


def payment_meter(*, payment_id: int, amount_atomic: int) -> bool:
    """An `upto` claim's amount becomes what the call used (at most what was authorized), before
    it is settled: the settlement, the reconciler and the sale all read it from the row."""
    # No money event of its own: the settle event that follows carries the metered amount.
    updated = Payment.objects.filter(
        pk=payment_id, scheme="upto", state=Payment.State.CLAIMED, amount_atomic__gte=amount_atomic
    ).update(amount_atomic=amount_atomic)
    return updated == 1


def payment_settle(*, payment_id: int, tx_hash: str, held: Payment | None = None, delivered: bool = False) -> bool:
    """claimed or pending -> settled. False when another worker already moved it.

    `held`: the row as the paid call that claimed it holds it (ids, and the amount it settles),
    so the money event needs no second read; `delivered`: that call's content exists already
    (a product that ran before the charge), marked delivered by the same statement. One UPDATE
    in autocommit: the paid call's settlement costs one round trip to the database, not five."""
    now = timezone.now()
    changes: dict[str, Any] = {"state": Payment.State.SETTLED, "tx_hash": tx_hash[:66], "settled_at": now, "error": ""}
    if delivered:
        changes["delivered_at"] = now
    updated = Payment.objects.filter(
        pk=payment_id, state__in=(Payment.State.CLAIMED, Payment.State.PENDING)
    ).update(**changes)
    if updated == 1:
        if held is not None:
            money_event("settle", amount_atomic=held.amount_atomic, **_payment_ids(held), tx_hash=tx_hash[:66])
        else:
            _payment_event("settle", payment_id, tx_hash=tx_hash[:66])
    return updated == 1


def payment_mark_delivered(*, payment_id: int) -> bool:
    """Claim the delivery of a settled payment's content: true once, for one caller. Run it
    in the transaction that creates the product's effect, so both commit or neither."""
    return bool(
        Payment.objects.filter(pk=payment_id, state=Payment.State.SETTLED, delivered_at__isnull=True).update(
            delivered_at=timezone.now()
        )
    )
