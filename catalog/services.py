"""Writes to the catalog. Each service is keyword-only and atomic."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from a2a_service.core.fastcache import free_documents_forget
from a2a_service.core.money import atomic_from_usdc
from catalog.models import (
    AgentFrameworkPack,
    CatalogAgent,
    Integration,
    Sku,
    Teaser,
    TradingModule,
    WorkerHeartbeat,
)
from catalog.products.registry import specs_all
from catalog.seed.content import AGENTS, INTEGRATIONS, PACKS, TRADING_MODULES, teasers_all
from catalog.seed.packs import skill_md
from catalog.signals import skus_updated

# Seed functions of the apps above the catalog, run by catalog_seed after the catalog's own rows
# (which theirs may refer to). Each app registers its own in its AppConfig.ready: the catalog
# imports none of them.
SEEDERS: list[Callable[[], None]] = []


def seeder_register(seed: Callable[[], None]) -> None:
    if seed not in SEEDERS:
        SEEDERS.append(seed)


@transaction.atomic
def catalog_seed(*, reset: bool = False) -> dict[str, int]:
    """Load the seed catalog. Idempotent: existing rows keep the staff's edits (price,
    status, texts) unless reset=True. SKU rows come from the product specs
    (catalog.products.registry). A price may be seeded from the SKU's env_price
    environment variable (in USDC, e.g. X402_PRICE_MORNING_BRIEF=0.09)."""
    created = {"skus": 0, "teasers": 0, "agents": 0, "packs": 0, "integrations": 0, "modules": 0}
    teasers = teasers_all()
    teaser_by_sku: dict[str, str] = {}
    for teaser, sku_name in teasers:
        teaser_by_sku.setdefault(sku_name, teaser.name)

    for order, product in enumerate(specs_all()):
        price_atomic = atomic_from_usdc(os.environ.get(product.env_price) or product.price)
        teaser_name = product.teaser or teaser_by_sku.get(product.sku, "")
        values = {
            "path": product.full_path,
            "headline": product.headline,
            "family": product.family,
            "env_price": product.env_price,
            "price_base_atomic": atomic_from_usdc(product.price),
            "price_atomic": price_atomic,
            "tier": product.tier,
            "hero": product.hero,
            "intel_only": product.intel_only,
            "product_type": product.product_type,
            "session_callable": product.session_callable,
            "marketplace_paid": product.marketplace_paid,
            "client_bundle": product.client_bundle,
            "free_teaser": f"/api/a2a/teaser/{teaser_name}" if teaser_name else "",
            "sort_order": order,
        }
        if reset:
            _, was_created = Sku.objects.update_or_create(sku=product.sku, defaults=values)
        else:
            _, was_created = Sku.objects.get_or_create(sku=product.sku, defaults=values)
        created["skus"] += was_created

    skus = {s.sku: s for s in Sku.objects.all()}
    for teaser, sku_name in teasers:
        teaser_values = {
            "title": teaser.title,
            "summary": teaser.summary,
            "highlights": list(teaser.highlights),
            "sku": skus.get(sku_name),
            "credit_path": teaser.credit_path,
        }
        manager = Teaser.objects.update_or_create if reset else Teaser.objects.get_or_create
        _, was_created = manager(name=teaser.name, defaults=teaser_values)
        created["teasers"] += was_created

    for order, spec in enumerate(AGENTS):
        values = {
            "name": spec["name"],
            "description": spec["description"],
            "free_skills": spec["free_skills"],
            "sort_order": order,
        }
        agent_manager = CatalogAgent.objects.update_or_create if reset else CatalogAgent.objects.get_or_create
        agent, was_created = agent_manager(slug=spec["slug"], defaults=values)
        if was_created or reset:
            agent.skus.set([skus[s] for s in spec["skus"] if s in skus])
        created["agents"] += was_created

    for pack_id, name, framework, description in PACKS:
        values = {
            "name": name,
            "framework": framework,
            "description": description,
            "skill_md": skill_md(pack_id, name, framework),
        }
        pack_manager = (
            AgentFrameworkPack.objects.update_or_create if reset else AgentFrameworkPack.objects.get_or_create
        )
        _, was_created = pack_manager(pack_id=pack_id, defaults=values)
        created["packs"] += was_created

    for order, spec in enumerate(INTEGRATIONS):
        values = {**{k: v for k, v in spec.items() if k != "slug"}, "sort_order": order}
        integration_manager = (
            Integration.objects.update_or_create if reset else Integration.objects.get_or_create
        )
        _, was_created = integration_manager(slug=spec["slug"], defaults=values)
        created["integrations"] += was_created

    for slug, name, description, sku_name in TRADING_MODULES:
        values = {"name": name, "description": description, "sku": skus.get(sku_name)}
        module_manager = (
            TradingModule.objects.update_or_create if reset else TradingModule.objects.get_or_create
        )
        _, was_created = module_manager(slug=slug, defaults=values)
        created["modules"] += was_created

    # Every other app's seed rows (billing's settings and whale tiers, the session packs, the
    # webhook event prices): each app registers its seed function when it is ready.
    for seed in SEEDERS:
        seed()

    # No RPC endpoint is seeded: the probe feed keeps the endpoints of RPC_PROBE_URLS (and the
    # service's own chain node, when RPC_PROBE_OWN_CHAIN names it) in sync itself. Seeding
    # CHAIN_RPC_URL here would publish the operator's node URL (often carrying an API key) on
    # the public speed index.
    return created


def heartbeat_record(*, name: str = "celery-worker") -> WorkerHeartbeat:
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        name=name, defaults={"beat_at": timezone.now(), "hostname": socket.gethostname()}
    )
    return beat


@transaction.atomic
def sku_set_status(*, sku_ids: list[int], status: str) -> int:
    updated = Sku.objects.filter(id__in=sku_ids).update(status=status, updated_at=timezone.now())
    # A bulk update sends no post_save: drop the stored free documents here, and tell the apps
    # that keep their own copies of SKU data (billing's stored 402 challenges).
    transaction.on_commit(free_documents_forget)
    skus_updated.send(sender=Sku, sku_ids=sku_ids)
    return updated
