"""What the agent surfaces remember: every answer a catalog agent or the hub gave, by
surface (chat, A2A JSON-RPC, MCP, marketplace), so an agent's status is measured from its
recent answers and errors rather than asserted."""

from __future__ import annotations

from django.db import models


class AgentInteraction(models.Model):
    class Surface(models.TextChoices):
        CHAT = "chat"
        JSONRPC = "jsonrpc"
        MCP = "mcp"
        MARKETPLACE = "marketplace"

    # A catalog agent's slug, or "agenthub" for the hub (and the service-level A2A/MCP endpoints).
    agent = models.CharField(max_length=64, db_index=True)
    surface = models.CharField(max_length=16, choices=Surface.choices)
    # The skill / SKU / capability / tool asked for, when one was understood.
    skill = models.CharField(max_length=64, blank=True, default="")
    # The HTTP-equivalent outcome: 200 answered, 402 payment asked, 4xx refused, 5xx failed.
    status_code = models.PositiveSmallIntegerField()
    latency_ms = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["agent", "at"])]

    def __str__(self) -> str:
        return f"{self.agent}/{self.surface} {self.skill} {self.status_code}"

    @property
    def failed(self) -> bool:
        """Our failure (5xx); a refusal of the caller's input or an unpaid call is not one."""
        return self.status_code >= 500
