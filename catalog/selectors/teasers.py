"""Free teasers: what a paid product would deliver now, and why not when it would not."""

from __future__ import annotations

from a2a_service.core.formats import iso
from catalog.api import schemas as s
from catalog.models import (
    Sku,
    Teaser,
)
from catalog.selectors.skus import SKU_COMING_SOON, SKU_UNAVAILABLE, sku_status


def teaser_availability(sku: Sku | None) -> tuple[bool, str]:
    """Whether a teaser's paid product would deliver now, and why not: on sale, then the
    product's own cheap content check (a query, never a run of the product)."""
    from catalog.products.registry import product_has_content

    if sku is None:
        return False, "this teaser has no paid product"
    status = sku_status(sku)
    if status == SKU_COMING_SOON:
        return False, f"{sku.sku} is not built yet (coming soon)"
    if status == Sku.Status.DISABLED:
        return False, f"{sku.sku} is switched off"
    if status == SKU_UNAVAILABLE:
        return False, "the x402 payment route is not available"
    return product_has_content(sku.sku)


def _teaser_out(teaser: Teaser) -> s.TeaserOut:
    sku = teaser.sku
    available, reason = teaser_availability(sku)
    return s.TeaserOut(
        name=teaser.name,
        title=teaser.title,
        summary=teaser.summary,
        highlights=[str(h) for h in teaser.highlights],
        sku=sku.sku if sku else None,
        paid_path=sku.path if sku else None,
        price_usdc=sku.price_usdc if sku else None,
        credit_path=teaser.credit_path or None,
        session_callable=bool(sku and sku.session_callable),
        available=available,
        unavailable_reason=reason or None,
        updated_at=iso(teaser.updated_at) or "",
    )


def teaser(base: str, name: str) -> s.TeaserOut | None:
    """None for an unknown name (the view answers 404)."""
    obj = Teaser.objects.select_related("sku").filter(name=name).first()
    return _teaser_out(obj) if obj is not None else None


def grants_readiness(base: str) -> s.TeaserOut | None:
    return teaser(base, "grant-scout")


def indexer_teaser(base: str) -> s.TeaserOut | None:
    return teaser(base, "feeds-indexer")


def partner_feed_teaser(base: str) -> s.TeaserOut | None:
    return teaser(base, "prediction-partner-feed")
