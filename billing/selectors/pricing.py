"""Price reads: the live surge catalog (current over base price) and the whale tiers."""

from __future__ import annotations

from a2a_service.core.formats import iso
from a2a_service.core.money import usdc_from_atomic
from billing import schemas as s
from billing.models import WhaleTier
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


def whale_catalog(base: str) -> s.WhaleCatalogOut:
    return s.WhaleCatalogOut(
        tiers=[
            s.WhaleTierOut(
                name=t.name,
                min_balance_usdc=usdc_from_atomic(t.min_balance_atomic),
                bonus_pct=float(t.bonus_pct),
                perks=[str(p) for p in t.perks],
            )
            for t in WhaleTier.objects.all()
        ],
        status_endpoint=absolute(base, "/api/a2a/account/whale/status"),
        token_endpoint=absolute(base, "/api/a2a/account/whale/token"),
    )
