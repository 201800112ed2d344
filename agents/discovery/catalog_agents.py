"""Catalog agents and federated partners: catalog, status, manifest and the agent hub."""

from __future__ import annotations

from a2a_service.core.payment_routes import routes_state
from agents.a2a.skills import SkillOut, agent_skills
from agents.discovery import schemas as s
from agents.discovery.status import HUB, agent_activity, agent_status_of, partner_statuses
from billing import schemas as bs
from catalog.models import (
    CatalogAgent,
    PartnerAgent,
    Sku,
)
from catalog.selectors.payment import absolute
from catalog.selectors.skus import live_skus, sku_available, sku_out


def agent_skill(skill: SkillOut) -> s.AgentSkillOut:
    return s.AgentSkillOut(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=skill.tags,
        examples=skill.examples,
        price_usdc=skill.price_usdc,
    )


def agent_skills_out(agent: CatalogAgent, on_sale: list[Sku] | None = None) -> list[s.AgentSkillOut]:
    """The skills the agent's JSON-RPC endpoint answers (agents/a2a/skills.py agent_skills)."""
    return [agent_skill(x) for x in agent_skills(agent, on_sale=on_sale)]


def catalog_agent_out(base: str, agent: CatalogAgent, on_sale: list[Sku] | None = None) -> s.CatalogAgentOut:
    return s.CatalogAgentOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=agent_skills_out(agent, on_sale),
        skus=[x.sku for x in agent.skus.all()],
        enabled=agent.enabled,
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
        status=absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
        manifest=absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
    )


def partner_out(p: PartnerAgent, health: s.PartnerStatusOut) -> s.PartnerAgentOut:
    return s.PartnerAgentOut(
        slug=p.slug,
        name=p.name,
        description=p.description,
        url=p.url,
        agent_card_url=p.agent_card_url or None,
        skills=list(p.skills),
        health=health,
    )


def partners_out(partners: list[PartnerAgent]) -> list[s.PartnerAgentOut]:
    health = partner_statuses(partners)
    return [partner_out(p, health[p.slug]) for p in partners]


def agent_health(agent: CatalogAgent) -> s.AgentHealthOut:
    activity = agent_activity(agent.slug)
    status, reason = agent_status_of(activity, enabled=agent.enabled)
    return s.AgentHealthOut(status=status, reason=reason, activity=activity)


def federated_agents(base: str) -> s.FederatedAgentsOut:
    on_sale = live_skus()
    local = [
        s.FederatedLocalAgentOut(**catalog_agent_out(base, a, on_sale).model_dump(), health=agent_health(a))
        for a in CatalogAgent.objects.filter(enabled=True).prefetch_related("skus")
    ]
    partners = partners_out(list(PartnerAgent.objects.filter(enabled=True)))
    return s.FederatedAgentsOut(local_agents=local, partner_agents=partners, count=len(local) + len(partners))


def partner_catalog(base: str) -> s.PartnerCatalogOut:
    partners = partners_out(list(PartnerAgent.objects.filter(enabled=True)))
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
    on_sale = live_skus()
    agents = [catalog_agent_out(base, a, on_sale) for a in CatalogAgent.objects.prefetch_related("skus")]
    return s.AgentsCatalogOut(agents=agents, count=len(agents))


def agent_status_out(base: str, agent: CatalogAgent) -> s.AgentStatusOut:
    health = agent_health(agent)
    return s.AgentStatusOut(
        slug=agent.slug,
        name=agent.name,
        status=health.status,
        reason=health.reason,
        skus_live=sum(1 for x in agent.skus.all() if sku_available(x)),
        chat=absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
        activity=health.activity,
    )


def agent_status(base: str, slug: str) -> s.AgentStatusOut | None:
    """Measured from the agent's recorded answers (agents/discovery/status.py has the rules)."""
    agent = catalog_agent(slug)
    return agent_status_out(base, agent) if agent is not None else None


def agent_manifest(base: str, slug: str) -> s.AgentManifestOut | None:
    agent = catalog_agent(slug)
    if agent is None:
        return None
    return s.AgentManifestOut(
        slug=agent.slug,
        name=agent.name,
        description=agent.description,
        skills=agent_skills_out(agent),
        skus=[sku_out(x) for x in agent.skus.all() if sku_available(x)],
        endpoints={
            "chat": absolute(base, f"/api/a2a/agents/{agent.slug}/chat"),
            "status": absolute(base, f"/api/a2a/agents/{agent.slug}/status"),
            "manifest": absolute(base, f"/api/a2a/agents/{agent.slug}/manifest"),
        },
        payment_routes=[bs.PaymentRouteState(**r) for r in routes_state()],
    )


def agenthub_status(base: str) -> s.AgentHubStatusOut:
    """The hub's own status from its recorded answers, every catalog agent's and partner's."""
    activity = agent_activity(HUB)
    status, reason = agent_status_of(activity, enabled=True)
    agents = list(CatalogAgent.objects.prefetch_related("skus"))
    statuses = [agent_status_out(base, a) for a in agents]
    partners = partners_out(list(PartnerAgent.objects.all()))
    counts = dict.fromkeys(("online", "degraded", "idle", "disabled"), 0)
    for state in [x.status for x in statuses] + [p.health.status for p in partners]:
        counts[state] += 1
    return s.AgentHubStatusOut(
        status=status,
        reason=reason,
        activity=activity,
        agents=[a.slug for a in agents if a.enabled],
        agent_statuses=statuses,
        partners=partners,
        counts=counts,
        chat=absolute(base, "/api/a2a/agenthub/chat"),
    )
