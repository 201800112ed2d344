"""How the catalog shows a SKU: its honest status (live only when it answers 402), its listing
row, and the querysets of SKUs on sale or listed."""

from __future__ import annotations

from django.db.models import QuerySet

from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.payment_routes import route_available
from catalog.models import Sku
from catalog.products.registry import products_built
from catalog.selectors import schemas as s

# Statuses a listing shows besides the row's own live_x402/disabled: the SKU is switched on
# but its product is not built yet, or the x402 route that would take the payment is down.
SKU_COMING_SOON = "coming_soon"
SKU_UNAVAILABLE = "unavailable"


def sku_status(sku: Sku) -> str:
    """What a listing may honestly say about a SKU. Only a SKU that answers 402 is live_x402:
    staff switched it on, its product is built and the x402 route is up."""
    if not sku.is_live:
        return Sku.Status.DISABLED.value
    if sku.sku not in products_built():
        return SKU_COMING_SOON
    if not route_available("x402"):
        return SKU_UNAVAILABLE
    return Sku.Status.LIVE.value


def sku_out(sku: Sku) -> s.SkuOut:
    return s.SkuOut(
        sku=sku.sku,
        path=sku.path,
        env_price=sku.env_price,
        default=sku.price_base_usdc,
        status=sku_status(sku),
        marketplace_paid=sku.marketplace_paid,
        tier=sku.tier or None,
        hero=sku.hero,
        free_teaser=sku.free_teaser or None,
        headline=sku.headline,
        price_usdc=sku.price_usdc,
        price_usdc_base=sku.price_base_usdc,
        intel_only=sku.intel_only,
        product_type=sku.product_type,
        session_callable=sku.session_callable,
    )


def on_sale() -> QuerySet[Sku]:
    """SKUs that answer 402 now (the only ones a list of things for sale may name, and the
    only ones a live count counts): switched on by staff and with a built product."""
    if not route_available("x402"):
        return Sku.objects.none()
    return Sku.objects.live().filter(sku__in=products_built())


def live_skus() -> list[Sku]:
    return list(on_sale())


def listed_skus() -> list[Sku]:
    """SKUs switched on by staff, built or not: the manifest and the marketplace listing name
    them all, each with its honest status (coming_soon until its product is built)."""
    return list(Sku.objects.live())


def sku_available(sku: Sku) -> bool:
    """On sale now: live, its product built, and a route that can take the payment."""
    return sku_status(sku) == Sku.Status.LIVE.value


def client_bundle(base: str) -> s.ClientBundleOut:
    skus = list(on_sale().filter(client_bundle=True))
    return s.ClientBundleOut(
        skus=[sku_out(x) for x in skus],
        total_price_usdc=usdc_from_atomic(sum(x.price_atomic for x in skus)),
        note="Curated by the operators; each SKU is bought on its own path, or all of them inside a desk session.",
    )
