"""The credit rail: an API key's account pays from its prepaid balance. The debit (one
conditional UPDATE that never goes below zero, with its ledger row), the product, what the
product unlocked and the Idempotency-Key's stored answer commit in one transaction, or none
of them does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from django.conf import settings
from django.db import IntegrityError, transaction

from a2a_service.core.errors import PaymentRequired, RequestValidationError
from a2a_service.core.money import usdc_from_atomic, usdc_text
from billing.credits import InsufficientCredit, credit_call_commit_relax, credit_debit
from billing.models import Account, BillingSettings, IdempotentCall
from billing.once import OwnedItem, owned_item_claim, owned_item_of
from billing.rails.base import Content, CreditReceipt, Offer, Paid, Receipt, ReplayReceipt


@dataclass(frozen=True)
class Idempotency:
    """An Idempotency-Key and what makes two calls the same call (the route's fingerprint of
    method, path, query and body): a retry of the same call is answered as the first was."""

    key: str
    fingerprint: str
    path: str


def credit_headers(charged_atomic: int, balance_atomic: int) -> dict[str, str]:
    """The receipt as the HTTP routes tell it (and as an Idempotency-Key replay repeats it)."""
    return {
        "X-Credit-Charged": usdc_text(charged_atomic),
        "X-Credit-Balance": usdc_text(balance_atomic),
    }


class CreditRail:
    rail_name: ClassVar[str] = "credits"
    final_before_effects: ClassVar[bool] = False  # the debit and the effect commit together
    runs_first: ClassVar[bool] = False

    def __init__(self, *, account: Account, reference: str, idempotency: Idempotency | None = None) -> None:
        self.account = account
        self.reference = reference  # the ledger row's reference (the route's path)
        self.idempotency = idempotency
        self.charge = 0
        # An item the account pays for once (billing/once.py), and whether this call holds its
        # claim (inside the rail's transaction).
        self.item: OwnedItem | None = None
        self.item_claimed = False

    def admit(self, offer: Offer) -> Paid | None:
        account = self.account
        offer.call.payer = account.wallet_address
        offer.call.account = account
        price = offer.price
        self.item = owned_item_of(offer)
        if self.idempotency is not None:
            done = IdempotentCall.objects.filter(account=account, key=self.idempotency.key).first()
            if done is not None:
                return _replay(done, self.idempotency.fingerprint)
        self.charge = price if BillingSettings.load().credit_billing_enabled else 0
        # What this call is charged, for a product that records it (e.g. txgen's call record).
        offer.call.extra["charge_atomic"] = self.charge
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        try:
            with transaction.atomic():
                return body()
        except IntegrityError:
            if self.idempotency is None:
                raise
            # The same Idempotency-Key committed first in a concurrent request: answer as it did.
            done = IdempotentCall.objects.get(account=self.account, key=self.idempotency.key)
            return _replay(done, self.idempotency.fingerprint)

    def owned_claim(self, offer: Offer) -> None:
        """Inside the rail's transaction, before anything is charged: claim the item this call
        buys once per account (a conditional insert). Owned already (now, or by a concurrent
        call that committed first): the call is free. Never a read before the write: two
        concurrent first unlocks would both see it unowned and both pay."""
        if self.item is None or self.item_claimed:
            return
        self.item_claimed = True
        if not owned_item_claim(account_id=self.account.id, item=self.item):
            self.charge = 0  # owned before: free again
            offer.call.extra["charge_atomic"] = 0

    def hold(self, offer: Offer, content: Content | None) -> CreditHold:
        self.owned_claim(offer)
        if not self.charge:  # free (unlocked before, or billing off): the balance as it stands
            balance = Account.objects.values_list("credit_balance_atomic", flat=True).get(pk=self.account.id)
            return CreditHold(self, balance)
        credit_call_commit_relax()
        try:
            balance = credit_debit(
                account_id=self.account.id,
                amount_atomic=self.charge,
                sku_id=offer.sku.id if offer.sku is not None else None,
                reference=self.reference,
            )
        except InsufficientCredit as exc:
            raise insufficient_credit(exc, x402_path=offer.sku.path if offer.sku else None) from None
        return CreditHold(self, balance)


class CreditHold:
    """The debit, inside the rail's transaction: a failed product rolls it back with it."""

    def __init__(self, rail: CreditRail, balance: int) -> None:
        self.rail = rail
        self.balance = balance

    def commit(self, content: Content | None) -> Receipt:
        rail = self.rail
        if rail.idempotency is not None:
            IdempotentCall.objects.create(
                account=rail.account,
                key=rail.idempotency.key,
                path=rail.idempotency.path[:300],
                fingerprint=rail.idempotency.fingerprint,
                status_code=200,
                body=content,
                headers=credit_headers(rail.charge, self.balance),
            )
        return CreditReceipt(charged_atomic=rail.charge, balance_atomic=self.balance)

    def release(self) -> None:
        return None  # the rail's transaction rolls the debit back

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


def insufficient_credit(exc: InsufficientCredit, *, x402_path: str | None) -> PaymentRequired:
    return PaymentRequired(
        f"not enough credit: {usdc_text(exc.balance_atomic)} USDC for a price of "
        f"{usdc_text(exc.price_atomic)} USDC",
        extra={
            "code": "insufficient_credit",
            "balance_usdc": usdc_from_atomic(exc.balance_atomic),
            "price_usdc": usdc_from_atomic(exc.price_atomic),
            "topup": {
                "topup_info": "/api/a2a/account/topup-info",
                "treasury_address": settings.TREASURY_ADDRESS,
                "min_deposit_usdc": BillingSettings.load().min_deposit_usdc,
                "steps": "send USDC from your registered wallet to the treasury; it is credited after "
                "its confirmations (see /api/a2a/account)",
            },
            "x402_alternative": x402_path,
        },
    )


def _replay(done: IdempotentCall, fingerprint: str) -> Paid:
    """The stored answer, if the key was first sent with this same call; a key reused for
    another call would otherwise be answered with that call's (paid) content."""
    if done.fingerprint != fingerprint:
        raise RequestValidationError.single(
            ["header", "Idempotency-Key"],
            f"this Idempotency-Key was first used for another call ({done.path} or other parameters); "
            "nothing was charged. Send a new key for a new call.",
            "idempotency_key_reused",
        )
    return Paid(done.body, ReplayReceipt(status_code=done.status_code, headers=done.headers))
