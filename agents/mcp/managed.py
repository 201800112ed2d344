"""The managed MCP pack (SKU mcp_managed_pack): bought once (x402, or credits with X-API-Key, on
its paid path or as the MCP tool of the same name), it grants the buyer's account an allowance
of MCP_MANAGED_CALLS paid tool calls within MCP_MANAGED_DAYS. Paid tool calls on /mcp with that
account's X-API-Key then use the allowance instead of a credit debit, until it is used up or
expires; then they are paid from credits again.

The allowance covers the tools that deliver content. Tools whose product has effects (the packs
and passes themselves: sessions, push, this pack) are always paid per call, so one pack cannot
buy others."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from django.db.models import F, QuerySet
from pydantic import BaseModel, Field

from agents.mcp import MCP_PATH
from agents.mcp.services import mcp_allowance_grant, mcp_allowance_remaining, mcp_allowance_use
from agents.models import McpAllowanceCall
from billing.front import Brought, Sale, key_account, key_brought
from billing.models import Account
from billing.rails.base import Content, Hold, Offer, Paid, Rail, Receipt, SessionReceipt
from billing.rails.credits import CreditRail
from billing.selectors.credits import payer_account
from billing.selectors.sales import AMOUNT, PAYER, SOLD_AT, SalesSource, no_revenue, sales_source_register
from catalog.products.registry import ProductCall, product

SKU = "mcp_managed_pack"


def pack_calls_sold() -> QuerySet[Any]:
    """The calls managed packs paid, for every published sales figure: one sale each, with no
    revenue of its own (the pack's price was its sale, by the rail that bought it)."""
    return McpAllowanceCall.objects.annotate(
        **{SOLD_AT: F("created_at"), AMOUNT: no_revenue(), PAYER: F("allowance__account__wallet_address")}
    )


sales_source_register(SalesSource(rail="mcp_managed_pack", sold=pack_calls_sold))


class ManagedPackOut(BaseModel):
    account: str = Field(description="the wallet of the account whose X-API-Key uses the calls")
    calls_total: int = Field(description="paid tool calls this pack adds")
    days: int = Field(description="how long this pack's calls can be used")
    expires_at: str = Field(description="this pack's calls can be used until then")
    calls_remaining: int = Field(description="calls left on all the account's unexpired packs")
    endpoint: str = Field(description="the MCP server (streamable HTTP)")
    header: str = Field(description="the HTTP header that carries the API key")
    covers: str
    after: str = Field(description="what pays once the calls are used up or expired")


def _account(call: ProductCall) -> Account:
    return payer_account(call, needs="a managed MCP pack's calls are used with a credit account's X-API-Key")


def _ready(call: ProductCall) -> None:
    _account(call)


# The allowance is an effect: bought by x402, it is granted only once the payment settled.
@product(
    sku=SKU,
    path="/mcp/managed-pack",
    headline="MCP managed pack: a period of paid MCP tool calls on your API key, no per-call debit",
    price="0.5",
    family="mcp",
    rank=39,
    output=ManagedPackOut,
    effects=True,
    ready=_ready,
)
def mcp_managed_pack(call: ProductCall) -> dict[str, Any]:
    account = _account(call)
    calls, days = settings.MCP_MANAGED_CALLS, settings.MCP_MANAGED_DAYS
    allowance = mcp_allowance_grant(account=account, calls=calls, days=days, paid_by=call.payer or "")
    return {
        "account": account.wallet_address,
        "calls_total": allowance.calls_total,
        "days": days,
        "expires_at": allowance.expires_at.isoformat(),
        "calls_remaining": mcp_allowance_remaining(account_id=account.id),
        "endpoint": call.base_url + MCP_PATH,
        "header": "X-API-Key",
        "covers": "tools/call of every paid tool that delivers content; packs and passes are paid per call",
        "after": "calls are debited from the account's prepaid credits at each tool's price",
    }


class ManagedCallRail:
    """An API key's account paying an MCP tool call: one call of its managed allowance when one
    covers it, else a credit debit (the credit rail). Both happen inside the credit rail's
    transaction, so a failed product uses neither."""

    rail_name: ClassVar[str] = "mcp_managed"
    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = False

    def __init__(self, *, account: Account, reference: str) -> None:
        self.credits = CreditRail(account=account, reference=reference)

    def admit(self, offer: Offer) -> Paid | None:
        return self.credits.admit(offer)

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return self.credits.scope(body)

    def hold(self, offer: Offer, content: Content | None) -> Hold:
        credits = self.credits
        # An item bought once per account is claimed first (an item read again is free).
        credits.owned_claim(offer)
        # charge 0: free anyway (credit billing off, or an item read again) - use nothing.
        if credits.charge and offer.sku is not None and not offer.product.effects:
            if mcp_allowance_use(account_id=credits.account.id, sku_id=offer.sku.id) is not None:
                return AllowanceHold(mcp_allowance_remaining(account_id=credits.account.id))
        return credits.hold(offer, content)


class AllowanceHold:
    def __init__(self, calls_remaining: int) -> None:
        self.calls_remaining = calls_remaining

    def commit(self, content: Content | None) -> Receipt:
        # The prepaid-calls receipt (the shape a session call answers with).
        return SessionReceipt(calls_remaining=self.calls_remaining, rail=SKU)

    def release(self) -> None:
        return None  # the rail's transaction rolls the call back

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


class ManagedScheme:
    """The payment front's scheme for MCP's X-API-Key (billing/front/schemes.py): the account's
    managed allowance when one covers the call, else its credits (ManagedCallRail)."""

    name = "mcp_managed"

    def brought(self, brought: Brought) -> bool:
        return key_brought(brought)

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        return ManagedCallRail(account=key_account(brought.header("X-API-Key")), reference=sale.reference)


def managed_owned(address: str, account: Account | None, sale: Sale) -> Rail | None:
    """Sign-in on /mcp (billing/front/signin.py): the signed-in wallet's account holds a managed
    pack with calls left that covers this tool: its allowance pays, as the account's key would."""
    if account is None or not sale.reference.startswith(MCP_PATH + " ") or sale.offer.product.effects:
        return None
    if mcp_allowance_remaining(account_id=account.id) <= 0:
        return None
    return ManagedCallRail(account=account, reference=sale.reference)
