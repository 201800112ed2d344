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


class A2aTask(models.Model):
    """One A2A task (agents/a2a/): a skill asked of the hub or a catalog agent over JSON-RPC,
    with what was said and delivered. Stored so GetTask / tasks/get answer from any process
    and a payment submitted later (a2a-x402 extension) finds the task it pays for."""

    class State(models.TextChoices):
        # The A2A task states, spelled as protocol 0.3 spells them (1.0: TASK_STATE_<UPPER>).
        SUBMITTED = "submitted"
        WORKING = "working"
        INPUT_REQUIRED = "input-required"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELED = "canceled"
        REJECTED = "rejected"
        AUTH_REQUIRED = "auth-required"

    TERMINAL = (State.COMPLETED, State.FAILED, State.CANCELED, State.REJECTED)

    id = models.UUIDField(primary_key=True)
    context_id = models.CharField(max_length=200, db_index=True)
    # A catalog agent's slug, or "agenthub" for the hub.
    agent = models.CharField(max_length=64, db_index=True)
    # A SKU name or a free skill (agents/a2a/skills.py).
    skill = models.CharField(max_length=64, db_index=True)
    state = models.CharField(max_length=16, choices=State.choices, db_index=True)
    params = models.JSONField(default=dict, blank=True)
    # The price asked (atomic USDC) and the x402 resource the challenge names; empty for free skills.
    price_atomic = models.PositiveBigIntegerField(null=True, blank=True)
    resource_url = models.CharField(max_length=500, blank=True, default="")
    # The A2A objects in protocol 1.0 JSON (proto JSON names): the messages exchanged, the
    # current status message, the artifacts and the task metadata.
    history = models.JSONField(default=list, blank=True)
    status_message = models.JSONField(null=True, blank=True)
    artifacts = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Who paid: the x402 payer's wallet, or the credit account (X-API-Key).
    payer = models.CharField(max_length=42, blank=True, default="")
    account = models.ForeignKey(
        "billing.Account", null=True, blank=True, on_delete=models.SET_NULL, related_name="a2a_tasks"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.id} {self.agent}/{self.skill} {self.state}"

    @property
    def terminal(self) -> bool:
        return self.state in self.TERMINAL
