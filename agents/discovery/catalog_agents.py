"""Catalog agents and federated partners: catalog, status, manifest and the agent hub."""

from __future__ import annotations

from typing import Any

from a2a_service.core.payment_routes import routes_state
from agents.discovery import schemas as s
from billing import schemas as bs
from catalog.models import (
    CatalogAgent,
    PartnerAgent,
    Sku,
)
from catalog.selectors.payment import absolute
from catalog.selectors.skus import sku_available, sku_out


def agent_skill(raw: dict[str, Any]) -> s.AgentSkillOut:
    return s.AgentSkillOut(
        id=str(raw.get("id", "")),
        name=str(raw.get("name", "")),
        description=str(raw.get("description", "")),
        tags=[str(t) for t in raw.get("tags", [])],
        examples=[str(e) for e in raw.get("examples", [])],
    )


def catalog_agent_out(base: str, agent: CatalogAgent) -> s.CatalogAgentOut:
    return s.CatalogAgentOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=[agent_skill(r) for r in agent.skills],
        skus=[x.sku for x in agent.skus.all()],
        enabled=agent.enabled,
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
        status=absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
        manifest=absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
    )


def partner_out(p: PartnerAgent) -> s.PartnerAgentOut:
    return s.PartnerAgentOut(
        slug=p.slug,
        name=p.name,
        description=p.description,
        url=p.url,
        agent_card_url=p.agent_card_url or None,
        skills=list(p.skills),
    )


def federated_agents(base: str) -> s.FederatedAgentsOut:
    local = [
        catalog_agent_out(base, a) for a in CatalogAgent.objects.filter(enabled=True).prefetch_related("skus")
    ]
    partners = [partner_out(p) for p in PartnerAgent.objects.filter(enabled=True)]
    return s.FederatedAgentsOut(local_agents=local, partner_agents=partners, count=len(local) + len(partners))


def partner_catalog(base: str) -> s.PartnerCatalogOut:
    partners = [partner_out(p) for p in PartnerAgent.objects.filter(enabled=True)]
    # The federation SKU is named with its honest status (coming_soon until it is built).
    fed = Sku.objects.live().filter(sku="federation_signal_resale").first()
    return s.PartnerCatalogOut(
        partners=partners,
        count=len(partners),
        federation_sku=sku_out(fed) if fed else None,
        how_to_join="Publish an A2A agent card and ask the operators to list it; partner signals are resold "
        "through the federation SKU with attribution.",
    )


def catalog_agent(slug: str) -> CatalogAgent | None:
    """None for an unknown slug (the views answer 404 with UNKNOWN_AGENT)."""
    return CatalogAgent.objects.filter(slug=slug).prefetch_related("skus").first()


UNKNOWN_AGENT = "unknown agent {slug!r}; see /api/a2a/agents/catalog"


def agents_catalog(base: str) -> s.AgentsCatalogOut:
    agents = [catalog_agent_out(base, a) for a in CatalogAgent.objects.prefetch_related("skus")]
    return s.AgentsCatalogOut(agents=agents, count=len(agents))


def agent_status(base: str, slug: str) -> s.AgentStatusOut | None:
    agent = catalog_agent(slug)
    if agent is None:
        return None
    return s.AgentStatusOut(
        slug=agent.slug,
        name=agent.name,
        status="online" if agent.enabled else "disabled",
        skus_live=sum(1 for x in agent.skus.all() if sku_available(x)),
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
    )


def agent_manifest(base: str, slug: str) -> s.AgentManifestOut | None:
    agent = catalog_agent(slug)
    if agent is None:
        return None
    return s.AgentManifestOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=[agent_skill(r) for r in agent.skills],
        skus=[sku_out(x) for x in agent.skus.all() if sku_available(x)],
        endpoints={
            "chat": absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
            "status": absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
            "manifest": absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
        },
        payment_routes=[bs.PaymentRouteState(**r) for r in routes_state()],
    )


def agenthub_status(base: str) -> s.AgentHubStatusOut:
    return s.AgentHubStatusOut(
        status="ok",
        agents=list(CatalogAgent.objects.filter(enabled=True).values_list("slug", flat=True)),
        chat=absolute(base, "/api/a2a/agenthub/chat"),
    )
