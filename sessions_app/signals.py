"""A product added to the catalog after the session packs exist is covered by them when it is
session-callable, as the packs' first seed covered every such SKU (staff may then change a
pack's coverage in the admin; an existing SKU's coverage is never changed here)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from catalog.models import Sku
from sessions_app.models import SessionPack


@receiver(post_save, sender=Sku)
def cover_new_session_callable_sku(sender: type[Sku], instance: Sku, created: bool, **kwargs: Any) -> None:
    if created and instance.session_callable and not kwargs.get("raw"):
        for pack in SessionPack.objects.all():
            pack.covered_skus.add(instance)
