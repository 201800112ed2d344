"""Writes to the catalog. Each service is keyword-only and atomic."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Model
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


def _seed_rows(model: type[Model], key: str, rows: dict[str, dict[str, Any]], *, reset: bool) -> tuple[dict[str, Any], set[str]]:
    """The rows of `model` whose `key` field is each of `rows`' keys, created from their values
    when missing (or all updated when reset); returns (rows by key, the keys created). The
    existing rows are read in one query: a seed that finds everything in place (every deploy,
    every `make run`) costs a query per model, not one per row."""
    created: set[str] = set()
    if reset:
        found = {}
        for name, values in rows.items():
            lookup: dict[str, Any] = {key: name}
            found[name], was_created = model._default_manager.update_or_create(defaults=values, **lookup)
            if was_created:
                created.add(name)
        return found, created
    found = model._default_manager.in_bulk(list(rows), field_name=key)
    for name, values in rows.items():
        if name not in found:
            # get_or_create, not create: another process seeding at the same time (two nodes
            # starting) may have written it since the read.
            lookup = {key: name}
            found[name], was_created = model._default_manager.get_or_create(defaults=values, **lookup)
            if was_created:
                created.add(name)
    return found, created


@transaction.atomic
def catalog_seed(*, reset: bool = False) -> dict[str, int]:
    """Load the seed catalog. Idempotent: existing rows keep the staff's edits (price,
    status, texts) unless reset=True. SKU rows come from the product specs
    (catalog.products.registry). A price may be seeded from the SKU's env_price
    environment variable (in USDC, e.g. X402_PRICE_MORNING_BRIEF=0.09)."""
    teasers = teasers_all()
    teaser_by_sku: dict[str, str] = {}
    for teaser, sku_name in teasers:
        teaser_by_sku.setdefault(sku_name, teaser.name)

    sku_rows: dict[str, dict[str, Any]] = {}
    for order, product in enumerate(specs_all()):
        teaser_name = product.teaser or teaser_by_sku.get(product.sku, "")
        sku_rows[product.sku] = {
            "path": product.full_path,
            "headline": product.headline,
            "family": product.family,
            "env_price": product.env_price,
            "price_base_atomic": atomic_from_usdc(product.price),
            "price_atomic": atomic_from_usdc(os.environ.get(product.env_price) or product.price),
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
    _, new_skus = _seed_rows(Sku, "sku", sku_rows, reset=reset)
    created = {"skus": len(new_skus)}

    skus = {s.sku: s for s in Sku.objects.all()}
    teaser_rows = {
        teaser.name: {
            "title": teaser.title,
            "summary": teaser.summary,
            "highlights": list(teaser.highlights),
            "sku": skus.get(sku_name),
            "credit_path": teaser.credit_path,
        }
        for teaser, sku_name in teasers
    }
    created["teasers"] = len(_seed_rows(Teaser, "name", teaser_rows, reset=reset)[1])

    agent_rows = {
        spec["slug"]: {
            "name": spec["name"],
            "description": spec["description"],
            "free_skills": spec["free_skills"],
            "sort_order": order,
        }
        for order, spec in enumerate(AGENTS)
    }
    agents, new_agents = _seed_rows(CatalogAgent, "slug", agent_rows, reset=reset)
    for spec in AGENTS:
        if spec["slug"] in new_agents or reset:
            agents[spec["slug"]].skus.set([skus[s] for s in spec["skus"] if s in skus])
    created["agents"] = len(new_agents)

    pack_rows = {
        pack_id: {
            "name": name,
            "framework": framework,
            "description": description,
            "skill_md": skill_md(pack_id, name, framework),
        }
        for pack_id, name, framework, description in PACKS
    }
    created["packs"] = len(_seed_rows(AgentFrameworkPack, "pack_id", pack_rows, reset=reset)[1])

    integration_rows = {
        spec["slug"]: {**{k: v for k, v in spec.items() if k != "slug"}, "sort_order": order}
        for order, spec in enumerate(INTEGRATIONS)
    }
    created["integrations"] = len(_seed_rows(Integration, "slug", integration_rows, reset=reset)[1])

    module_rows = {
        slug: {"name": name, "description": description, "sku": skus.get(sku_name)}
        for slug, name, description, sku_name in TRADING_MODULES
    }
    created["modules"] = len(_seed_rows(TradingModule, "slug", module_rows, reset=reset)[1])

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
