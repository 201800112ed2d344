"""Whale tiers, read from the deposits: an account holds the highest tier whose minimum its
credited deposits of the window reach (the window: the last BillingSettings.whale_window_days
days, up to now). Only what reached the treasury counts: credited deposits (billing/deposits.py,
the watcher), not their bonuses, not staff adjustments; a deposit a reorganisation took back
(reorged) stops counting. The tier is computed at each read, so it lapses on its own as
deposits leave the window.

The tier's deposit bonus (deposit_settle in billing/credits.py) is the tier the account held
before that deposit: the deposit that crosses a threshold earns the new tier from the next
deposit on. The bonus rewards standing, the bundle bonus (BillingSettings) rewards one large
deposit, and a deposit's bonus never depends on itself."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Sum
from django.utils import timezone

from billing.models import BillingSettings, Deposit, WhaleTier


@dataclass(frozen=True)
class Standing:
    """An account's whale standing at `window_end`."""

    account_id: int
    window_days: int
    window_start: datetime  # exclusive
    window_end: datetime  # inclusive
    deposited_atomic: int
    deposits: int
    tier: WhaleTier | None
    next_tier: WhaleTier | None
    # When the tier lapses if nothing more is deposited (a counted deposit leaves the window).
    holds_until: datetime | None

    @property
    def needed_atomic(self) -> int:
        """USDC still to deposit (in the window) for the next tier; 0 at the top."""
        if self.next_tier is None:
            return 0
        return max(self.next_tier.min_deposit_atomic - self.deposited_atomic, 0)

    @property
    def progress_pct(self) -> float:
        """Deposited in the window as a percent of the next tier's minimum (100 at the top)."""
        if self.next_tier is None or self.next_tier.min_deposit_atomic == 0:
            return 100.0
        return round(min(self.deposited_atomic / self.next_tier.min_deposit_atomic, 1.0) * 100, 2)


def tier_for(deposited_atomic: int, tiers: list[WhaleTier]) -> tuple[WhaleTier | None, WhaleTier | None]:
    """(the tier these deposits hold, the next one) among `tiers` ordered by minimum."""
    held = None
    for tier in tiers:
        if deposited_atomic >= tier.min_deposit_atomic:
            held = tier
        else:
            return held, tier
    return held, None


def _window(at: datetime | None) -> tuple[datetime, datetime, int]:
    end = at or timezone.now()
    days = BillingSettings.load().whale_window_days
    return end - timedelta(days=days), end, days


def counted_deposits(account_id: int, *, at: datetime | None = None) -> list[tuple[int, datetime]]:
    start, end, _ = _window(at)
    return [
        (amount, when)
        for amount, when in Deposit.objects.filter(
            account_id=account_id,
            state=Deposit.State.CREDITED,
            credited_at__gt=start,
            credited_at__lte=end,
        )
        .order_by("credited_at", "id")
        .values_list("amount_atomic", "credited_at")
        if when is not None
    ]


def tier_standing(*, account_id: int, at: datetime | None = None) -> Standing:
    start, end, days = _window(at)
    rows = counted_deposits(account_id, at=end)
    total = sum(amount for amount, _ in rows)
    tier, next_tier = tier_for(total, list(WhaleTier.objects.all()))
    holds_until = None
    if tier is not None:
        left = total
        for amount, when in rows:  # oldest first: the order they leave the window
            left -= amount
            if left < tier.min_deposit_atomic:
                holds_until = when + timedelta(days=days)
                break
    return Standing(
        account_id=account_id,
        window_days=days,
        window_start=start,
        window_end=end,
        deposited_atomic=total,
        deposits=len(rows),
        tier=tier,
        next_tier=next_tier,
        holds_until=holds_until,
    )


def account_tier(account_id: int) -> WhaleTier | None:
    """The tier the account holds now (one aggregate query and the tier table)."""
    start, end, _ = _window(None)
    total = (
        Deposit.objects.filter(
            account_id=account_id,
            state=Deposit.State.CREDITED,
            credited_at__gt=start,
            credited_at__lte=end,
        ).aggregate(s=Sum("amount_atomic"))["s"]
        or 0
    )
    return tier_for(int(total), list(WhaleTier.objects.all()))[0]
