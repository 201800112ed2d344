"""Price reads: the live surge catalog (current over base price) and the whale tiers."""

from __future__ import annotations

from a2a_service.core.formats import iso
from a2a_service.core.throttling import ClientRateThrottle
from billing import schemas as s
from billing.models import BillingSettings, WhaleTier
from catalog.selectors.desks import latest_regime
from catalog.selectors.payment import absolute
from catalog.selectors.skus import live_skus


def pricing_surge(base: str) -> s.SurgeOut:
    regime = latest_regime()
    return s.SurgeOut(
        regime=regime.regime if regime else None,
        regime_as_of=iso(regime.computed_at) if regime else None,
        skus=[
            s.SurgeSkuOut(
                sku=x.sku,
                price_usdc=x.price_usdc,
                price_usdc_base=x.price_base_usdc,
                surge_multiplier=round(x.price_atomic / x.price_base_atomic, 4)
                if x.price_base_atomic
                else 1.0,
            )
            for x in live_skus()
        ],
    )


def whale_tier_out(t: WhaleTier) -> s.WhaleTierOut:
    """A tier as the catalog and the status show it: its benefits read from its own figures."""
    return s.WhaleTierOut(
        name=t.name,
        min_deposit_atomic=t.min_deposit_atomic,
        min_deposit_usdc=t.min_deposit_usdc,
        min_balance_usdc=t.min_deposit_usdc,
        bonus_pct=float(t.bonus_pct),
        rate_limit_per_minute=t.rate_limit_per_minute,
        benefits=[
            *(
                [f"{float(t.bonus_pct):g}% bonus on each deposit (a whale_bonus ledger row)"]
                if t.bonus_pct
                else []
            ),
            f"{t.rate_limit_per_minute} requests per minute with the account's X-API-Key or X-Whale-Token",
            "whale tokens (X-Whale-Token) that give sub-agents this rate limit without the API key",
        ],
        perks=[str(p) for p in t.perks],
    )


def base_rate_limit() -> s.RateLimitOut | None:
    """The rate limit without a tier (THROTTLE_ANON), or None if none is configured."""
    throttle = ClientRateThrottle()
    if throttle.rate is None:
        return None
    return s.RateLimitOut(
        requests=throttle.num_requests, per_seconds=throttle.duration, applies_to="caller address"
    )


def whale_catalog(base: str) -> s.WhaleCatalogOut:
    days = BillingSettings.load().whale_window_days
    return s.WhaleCatalogOut(
        tiers=[whale_tier_out(t) for t in WhaleTier.objects.all()],
        window_days=days,
        base_rate_limit=base_rate_limit(),
        token_header="X-Whale-Token",
        how_earned=f"A tier is held while the USDC an account deposited (credited deposits to the treasury, "
        f"bonuses not counted) within the last {days} days reaches its minimum; it lapses on its own as "
        "deposits leave the window. The tier's bonus applies to each deposit made while the tier is held "
        "(the deposit that reaches a tier earns its bonus from the next deposit on). The rate limit applies "
        "to calls with the account's X-API-Key, or with a whale token from the token endpoint, per caller "
        "address; a token never pays for a call.",
        status_endpoint=absolute(base, "/api/a2a/account/whale/status"),
        token_endpoint=absolute(base, "/api/a2a/account/whale/token"),
    )
