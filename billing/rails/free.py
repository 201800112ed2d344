"""No payment: a call served free, allowed only while billing is off (the switch staff use for
a free period, BillingSettings.credit_billing_enabled)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from a2a_service.core.errors import PaymentRequired
from billing.models import BillingSettings
from billing.rails.base import Content, FreeReceipt, Offer, Paid, Receipt


class FreeRail:
    rail_name: ClassVar[str] = "free"
    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = False

    def admit(self, offer: Offer) -> Paid | None:
        if BillingSettings.load().credit_billing_enabled:
            raise PaymentRequired(
                f"{offer.name} is paid: pay it by x402, with prepaid credits or a session",
                extra={"sku": offer.name, "price_atomic": offer.price_atomic},
            )
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return body()

    def hold(self, offer: Offer, content: Content | None) -> _FreeHold:
        return _FreeHold()


class _FreeHold:
    def commit(self, content: Content | None) -> Receipt:
        return FreeReceipt()

    def release(self) -> None:
        return None

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()
