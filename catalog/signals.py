"""A changed SKU or news item makes every stored 402 challenge stale: they are dropped once
the change commits, so the next request is priced from the database."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal, receiver

from billing.x402.fastpath import challenges_forget
from catalog.models import NewsItem, Sku


@receiver([post_save, post_delete], sender=Sku)
@receiver([post_save, post_delete], sender=NewsItem)
def forget_stored_challenges(sender: type, **kwargs: Any) -> None:
    transaction.on_commit(challenges_forget)


# Sent (in the ingest's transaction) with `rows`, the SpreadSnapshot rows a bulk ingest created:
# bulk_create sends no post_save, and listeners (the webhooks app's pair_arb_alert) are not
# catalog's to import.
spreads_ingested = Signal()
