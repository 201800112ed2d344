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


class Erc8004Registration(models.Model):
    """The service's agent in an ERC-8004 identity registry, as `manage.py erc8004_register`
    registered it: one row per (chain, registry); re-running the command updates the agent's URI
    on chain and here instead of registering a second agent."""

    chain_id = models.PositiveBigIntegerField()
    registry_address = models.CharField(max_length=42, help_text="checksummed identity registry address")
    agent_id = models.DecimalField(max_digits=78, decimal_places=0, help_text="the ERC-721 token id")
    agent_uri = models.URLField(max_length=500, help_text="tokenURI: our registration file")
    owner_address = models.CharField(max_length=42, help_text="the signer that owns the agent token")
    tx_hash = models.CharField(max_length=66, help_text="the register() transaction")
    last_tx_hash = models.CharField(max_length=66, blank=True, help_text="the last setAgentURI() transaction")
    registered_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["chain_id", "registry_address"], name="erc8004_one_agent_per_registry"
            )
        ]

    def __str__(self) -> str:
        return f"agent {self.agent_id} on {self.agent_registry}"

    @property
    def agent_registry(self) -> str:
        """The EIP-8004 registry id: eip155:<chainId>:<registry address>."""
        return f"eip155:{self.chain_id}:{self.registry_address}"
