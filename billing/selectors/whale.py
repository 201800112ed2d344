"""An account's whale standing, as GET /api/a2a/account/whale/status shows it."""

from __future__ import annotations

from django.db.models import Sum
from django.utils import timezone

from a2a_service.core.formats import iso
from a2a_service.core.money import usdc_from_atomic
from billing import schemas as s
from billing.models import Account, LedgerEntry, WhaleToken
from billing.selectors.pricing import base_rate_limit, whale_tier_out
from billing.tiers import Standing, tier_standing
from billing.whale import TOKEN_ENDPOINT

CATALOG_ENDPOINT = "/api/a2a/account/whale/catalog"


def next_tier_out(standing: Standing) -> s.WhaleNextTierOut | None:
    nxt = standing.next_tier
    if nxt is None:
        return None
    return s.WhaleNextTierOut(
        name=nxt.name,
        min_deposit_atomic=nxt.min_deposit_atomic,
        min_deposit_usdc=nxt.min_deposit_usdc,
        needed_atomic=standing.needed_atomic,
        needed_usdc=usdc_from_atomic(standing.needed_atomic),
        progress_pct=standing.progress_pct,
    )


def whale_status(account: Account) -> s.WhaleStatusOut:
    standing = tier_standing(account_id=account.id)
    tier = standing.tier
    bonus = (
        LedgerEntry.objects.filter(
            account=account,
            kind=LedgerEntry.Kind.WHALE_BONUS,
            created_at__gt=standing.window_start,
            created_at__lte=standing.window_end,
        ).aggregate(s=Sum("amount_atomic"))["s"]
        or 0
    )
    return s.WhaleStatusOut(
        wallet_address=account.wallet_address,
        tier=whale_tier_out(tier) if tier is not None else None,
        rate_limit=(
            s.RateLimitOut(
                requests=tier.rate_limit_per_minute, per_seconds=60, applies_to="account and caller address"
            )
            if tier is not None
            else base_rate_limit()
        ),
        window_days=standing.window_days,
        window_start=iso(standing.window_start) or "",
        window_end=iso(standing.window_end) or "",
        deposited_atomic=standing.deposited_atomic,
        deposited_usdc=usdc_from_atomic(standing.deposited_atomic),
        deposits_counted=standing.deposits,
        tier_holds_until=iso(standing.holds_until),
        next_tier=next_tier_out(standing),
        whale_bonus_earned_atomic=int(bonus),
        whale_bonus_earned_usdc=usdc_from_atomic(int(bonus)),
        active_tokens=WhaleToken.objects.filter(
            account=account, revoked_at__isnull=True, expires_at__gt=timezone.now()
        ).count(),
        token_endpoint=TOKEN_ENDPOINT,
        catalog_endpoint=CATALOG_ENDPOINT,
    )
