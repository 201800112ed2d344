"""A changed SKU (price, status) or news item (its own price) makes every stored 402
challenge stale: they are dropped once the write commits (billing/x402/fastpath.py). A bulk
update of SKUs sends no post_save: the catalog sends skus_updated instead. A product whose
availability changed (catalog/products/availability.py) must not keep a challenge either."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from billing.x402.fastpath import challenges_forget
from catalog.models import NewsItem, Sku
from catalog.signals import product_availability_changed, skus_updated


@receiver([post_save, post_delete], sender=Sku)
@receiver([post_save, post_delete], sender=NewsItem)
@receiver(skus_updated)
@receiver(product_availability_changed)
def forget_stored_challenges(sender: type, **kwargs: Any) -> None:
    transaction.on_commit(challenges_forget)
