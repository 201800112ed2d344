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


class McpAllowance(models.Model):
    """A managed MCP pack bought by an account (agents/mcp/managed.py): `calls_total` paid tool
    calls on /mcp with the account's X-API-Key until `expires_at`, with no per-call debit. Once
    used up or expired, the account's calls are paid from its credits again."""

    account = models.ForeignKey("billing.Account", on_delete=models.PROTECT, related_name="mcp_allowances")
    calls_total = models.PositiveIntegerField()
    calls_used = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)
    paid_by = models.CharField(max_length=42, blank=True, help_text="the paying wallet")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(calls_used__lte=models.F("calls_total")),
                name="mcp_allowance_calls_within_quota",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account_id}: {self.calls_used}/{self.calls_total} until {self.expires_at:%Y-%m-%d}"

    @property
    def calls_remaining(self) -> int:
        return max(self.calls_total - self.calls_used, 0)


class McpAllowanceCall(models.Model):
    """One paid tool call paid by an allowance instead of credits."""

    allowance = models.ForeignKey(McpAllowance, on_delete=models.CASCADE, related_name="calls")
    sku = models.ForeignKey("catalog.Sku", on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.allowance_id} {self.sku_id}"
