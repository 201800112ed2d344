"""Stored answers are dropped once a write that changes them commits, so the next request
is answered from the database: any write but those in FREE_CACHE_IGNORED_MODELS makes the
stored free documents stale (a2a_service/core/fastcache.py). The 402 challenges billing
stores are dropped by billing's own receivers (billing/signals.py)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Model
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import Signal, receiver

from a2a_service.core.fastcache import free_documents_forget

# Writes that no cached free document shows (the route-table rows marked cacheable, gathered in
# a2a_service/urls.py CACHEABLE_ROUTES; a test checks that none of them reads these tables). They are frequent (every hit, payment, call,
# probe, delivery), so they must not empty the cache; every other model's write does.
FREE_CACHE_IGNORED_APPS = frozenset({"admin", "auth", "sessions", "contenttypes"})
FREE_CACHE_IGNORED_MODELS = frozenset(
    {
        "catalog.DailyCounter",
        "catalog.WorkerHeartbeat",
        "catalog.RpcProbe",
        "catalog.SpreadSnapshot",
        "billing.Payment",
        "billing.Account",
        "billing.ApiKey",
        "billing.OwnershipChallenge",
        "billing.ChainCursor",
        "billing.Deposit",
        "billing.LedgerEntry",
        "billing.IdempotentCall",
        "billing.NewsUnlock",
        "billing.WhaleToken",
        "sessions_app.PrepaidSession",
        "sessions_app.SessionCall",
        "webhooks.WebhookSubscription",
        "webhooks.WebhookEvent",
        "webhooks.WebhookDelivery",
        "webhooks.DeliveryAttempt",
        "webhooks.PushEntitlement",
        # Written on every answer of an agent surface, call paid from a managed MCP pack,
        # delegated order, fill, pooled delivery, bounty claim and generated transaction: no
        # cached document shows them (agent status and the account routes are not cached).
        "agents.AgentInteraction",
        "agents.A2aTask",
        "agents.McpAllowance",
        "agents.McpAllowanceCall",
        "billing.BountyClaim",
        "billing.TxgenCall",
        "billing.AccountReferral",
        "webhooks.Delegation",
        "webhooks.DelegatedOrder",
        "webhooks.DelegatedFill",
        "webhooks.PoolMembership",
        "webhooks.PoolDelivery",
    }
)


def free_documents_change(model: type[Model]) -> bool:
    """Whether a write to `model` may change a cached free document."""
    meta = model._meta
    return meta.app_label not in FREE_CACHE_IGNORED_APPS and meta.label not in FREE_CACHE_IGNORED_MODELS


@receiver([post_save, post_delete, m2m_changed])
def forget_stored_free_documents(sender: type, **kwargs: Any) -> None:
    # m2m_changed's sender is the through model; the changed model is `instance`'s.
    model = type(kwargs["instance"]) if "instance" in kwargs else sender
    if free_documents_change(model):
        transaction.on_commit(free_documents_forget)


# Sent (in the ingest's transaction) with `rows`, the SpreadSnapshot rows a bulk ingest created:
# bulk_create sends no post_save, and listeners (the webhooks app's pair_arb_alert) are not
# catalog's to import.
spreads_ingested = Signal()

# Sent (in the write's transaction) with `sku_ids` after a bulk update of SKUs (the admin's
# status actions): .update() sends no post_save, and the listeners (billing's stored 402
# challenges) are not catalog's to import.
skus_updated = Signal()

# Sent once the transaction that published a desk signal committed (catalog/editorial/track_record.py
# desk_signal_publish), with `signal_id`: execution delegation and the coordination pool (webhooks
# app) turn it into orders and pooled deliveries. After the commit, so a listener never acts on a
# signal that rolled back; the listener's own sweep covers a process that died in between.
desk_signal_published = Signal()

# Sent at the end of every pass that writes the catalog's data (a feed pass, a prune, the
# analytics pass), whatever it wrote: what changed may make a product (un)available, and the
# products (catalog/products/availability.py) are above the passes, not theirs to import.
data_pass_finished = Signal()

# Sent (after the write that caused it committed) with `skus`, the products whose availability
# (their spec's `available` check) changed since the last look (catalog/products/availability.py):
# billing drops the 402 challenges it stores in front of Django, which are not catalog's to import.
product_availability_changed = Signal()


@receiver(product_availability_changed)
def forget_stored_free_documents_on_availability(sender: Any, **kwargs: Any) -> None:
    """The stored teasers say whether their product is available: a change makes them stale."""
    transaction.on_commit(free_documents_forget)
