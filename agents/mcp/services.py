"""Writes and reads of the managed MCP allowance (agents.models.McpAllowance)."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from agents.models import McpAllowance, McpAllowanceCall
from billing.models import Account


@transaction.atomic
def mcp_allowance_grant(*, account: Account, calls: int, days: int, paid_by: str = "") -> McpAllowance:
    """A new allowance of `calls` paid tool calls for `days` from now. A second pack adds its own
    allowance next to the first (calls are used from the one that expires first)."""
    return McpAllowance.objects.create(
        account=account,
        calls_total=calls,
        expires_at=timezone.now() + timedelta(days=days),
        paid_by=(paid_by or "").lower()[:42],
    )


def mcp_allowance_use(*, account_id: int, sku_id: int) -> McpAllowance | None:
    """Use one call of the account's allowance that expires first, with one conditional UPDATE
    (never past its quota or its expiry), and record it. Runs inside the caller's transaction, so
    a failed product rolls the call back with it. None: no allowance has a call left."""
    while True:
        now = timezone.now()
        active = McpAllowance.objects.filter(
            account_id=account_id, calls_used__lt=F("calls_total"), expires_at__gt=now
        )
        candidate = active.order_by("expires_at", "id").values_list("id", flat=True).first()
        if candidate is None:
            return None
        if active.filter(pk=candidate).update(calls_used=F("calls_used") + 1):
            McpAllowanceCall.objects.create(allowance_id=candidate, sku_id=sku_id)
            return McpAllowance.objects.get(pk=candidate)
        # A concurrent call took this allowance's last call: try the next one.


def mcp_allowance_remaining(*, account_id: int) -> int:
    """Calls left on the account's unexpired allowances."""
    left = (
        McpAllowance.objects.filter(account_id=account_id, expires_at__gt=timezone.now())
        .aggregate(left=Sum(F("calls_total") - F("calls_used")))
        .get("left")
    )
    return int(left or 0)
