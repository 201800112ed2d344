from __future__ import annotations

from django.db import models

from a2a_service.core.money import usdc_from_atomic

X402_PREFIX = "/api/a2a/x402"


class SkuQuerySet(models.QuerySet["Sku"]):
    def live(self) -> SkuQuerySet:
        return self.filter(status=Sku.Status.LIVE)


class Sku(models.Model):
    """One thing the service sells. The path is fixed by code (it is a URL route); the
    price, status and presentation are staff-editable and read on every request."""

    class Status(models.TextChoices):
        LIVE = "live_x402", "live (x402)"
        DISABLED = "disabled", "disabled"

    class ProductType(models.TextChoices):
        LIVE_INTEL = "live_intel", "live intel"
        EXECUTION_INTELLIGENCE = "execution_intelligence", "execution intelligence"

    class Tier(models.TextChoices):
        L = "L", "L (lead)"
        A = "A", "A"
        B = "B", "B"
        C = "C", "C"
        D = "D", "D"

    sku = models.CharField(max_length=64, unique=True, help_text="SKU name, e.g. morning_brief")
    path = models.CharField(max_length=200, unique=True, help_text="paid x402 path")
    headline = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    family = models.CharField(max_length=32, db_index=True, help_text="news, brief, prediction, trading, ...")
    env_price = models.CharField(
        max_length=80, help_text="name of the environment setting that seeds the price"
    )
    price_base_atomic = models.PositiveBigIntegerField(
        help_text="list (default) price in atomic USDC (6 decimals)"
    )
    price_atomic = models.PositiveBigIntegerField(help_text="current price in atomic USDC (6 decimals)")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LIVE, db_index=True)
    marketplace_paid = models.BooleanField(default=False)
    tier = models.CharField(max_length=1, choices=Tier.choices, blank=True)
    hero = models.BooleanField(default=False)
    free_teaser = models.CharField(max_length=200, blank=True, help_text="path of the free teaser")
    intel_only = models.BooleanField(default=False)
    product_type = models.CharField(
        max_length=32, choices=ProductType.choices, default=ProductType.LIVE_INTEL
    )
    session_callable = models.BooleanField(default=False, help_text="may be called with a prepaid session")
    client_bundle = models.BooleanField(default=False, help_text="part of the curated client bundle")
    sort_order = models.PositiveIntegerField(default=100)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SkuQuerySet.as_manager()

    class Meta:
        ordering = ["sort_order", "sku"]
        verbose_name = "SKU"

    def __str__(self) -> str:
        return f"{self.sku} ({self.price_usdc} USDC)"

    @property
    def price_usdc(self) -> float:
        return usdc_from_atomic(self.price_atomic)

    @property
    def price_base_usdc(self) -> float:
        return usdc_from_atomic(self.price_base_atomic)

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE

    @property
    def short_path(self) -> str:
        """The path below /api/a2a/x402, as the interface's SKU table writes it."""
        return self.path.removeprefix(X402_PREFIX)
