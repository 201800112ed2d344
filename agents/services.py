"""Writes of the agents app."""

from __future__ import annotations

from django.db import transaction

from agents.models import AgentInteraction


@transaction.atomic
def agent_interaction_record(
    *, agent: str, surface: str, status_code: int, latency_ms: int = 0, skill: str = ""
) -> AgentInteraction:
    """One answer of an agent surface (see AgentInteraction). Every surface calls this once per
    request it answered, whatever the outcome."""
    return AgentInteraction.objects.create(
        agent=agent[:64],
        surface=surface,
        skill=skill[:64],
        status_code=status_code,
        latency_ms=max(0, latency_ms),
    )
