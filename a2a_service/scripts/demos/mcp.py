"""The MCP server, shown on the running local stack (`make demo` runs it after the credit demo):
the official `mcp` client connects to /mcp over streamable HTTP, lists the tools, calls a free
tool, pays a tool with credits (X-API-Key), buys the managed MCP pack and uses one of its calls,
then pays a tool by x402 in the call's _meta (x402's MCP transport) and prints the settlement."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, cast

import httpx2
import requests
from eth_account import Account
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import RequestParamsMeta, TextContent
from x402 import x402ClientSync
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequirements

from a2a_service.scripts.demos.agent import local_stack
from a2a_service.scripts.demos.credits import account_key, deposit, keys_file

ROOT = Path(__file__).resolve().parents[3]
PAID_TOOL = "payments_dual_rail_status"  # 0.01 USDC, always has content
NEEDED_USDC = 0.6  # one call, the managed pack (0.5) and its call: what the demo spends in credits
CREDIT_WAIT_SECONDS = 120


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def credits(base: str, key: str) -> float:
    account = requests.get(base + "/api/a2a/account", headers={"X-API-Key": key}, timeout=30).json()
    return float(account["credit_balance_usdc"])


def ensure_credits(stack: dict[str, Any], wallet: Any, key: str) -> bool:
    """The demo wallet's credits cover the demo, or a deposit tops them up (the credit demo's)."""
    base = stack["base_url"]
    if credits(base, key) >= NEEDED_USDC:
        return True
    deposit(stack, wallet)
    started = time.monotonic()
    while time.monotonic() - started < CREDIT_WAIT_SECONDS:
        if credits(base, key) >= NEEDED_USDC:
            return True
        time.sleep(0.5)
    print(
        f"the deposit was not credited within {CREDIT_WAIT_SECONDS} s (is the worker running?)",
        file=sys.stderr,
    )
    return False


def text(result: Any) -> str:
    """The first text block of a tool result."""
    first = result.content[0] if result.content else None
    return first.text if isinstance(first, TextContent) else ""


def receipt(result: Any) -> str:
    meta = result.meta or {}
    return json.dumps(meta.get(MCP_PAYMENT_RESPONSE_META_KEY) or meta.get("a2a/receipt"))


async def with_key(url: str, key: str) -> bool:
    async with httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                say(
                    "initialize",
                    f"{init.server_info.name} {init.server_info.version}, protocol {init.protocol_version}",
                )
                tools = (await session.list_tools()).tools
                paid = [t for t in tools if "USDC per call" in (t.description or "")]
                say("tools/list", f"{len(tools)} tools: {len(tools) - len(paid)} free, {len(paid)} paid")
                for tool in tools[:3] + paid[:3]:
                    print(f"  {tool.name}: {(tool.description or '')[:90]}")
                regime = await session.call_tool("regime", {})
                say("free tool", f"regime -> {json.dumps(regime.structured_content)[:200]}")
                result = await session.call_tool(PAID_TOOL, {})
                say(
                    "credits",
                    f"{PAID_TOOL} with X-API-Key -> isError={result.is_error}, receipt {receipt(result)}",
                )
                pack = await session.call_tool("mcp_managed_pack", {})
                if pack.is_error:
                    say("managed pack", f"refused: {text(pack)[:300]}")
                    return False
                body = pack.structured_content or {}
                say(
                    "managed pack",
                    f"bought with credits ({receipt(pack)}): {body['calls_total']} calls for {body['days']} days, "
                    f"{body['calls_remaining']} left in all, until {body['expires_at']}",
                )
                result = await session.call_tool(PAID_TOOL, {})
                say("managed call", f"{PAID_TOOL} -> receipt {receipt(result)} (no credit debit)")
                return not result.is_error


async def with_x402(url: str, wallet: Any) -> bool:
    client = register_exact_evm_client(x402ClientSync(), wallet)
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            unpaid = await session.call_tool(PAID_TOOL, {})
            required = extract_payment_required_from_result(
                MCPToolResult(
                    content=[c.model_dump() for c in unpaid.content],
                    is_error=unpaid.is_error,
                    structured_content=unpaid.structured_content,
                )
            )
            if required is None:
                say("x402", f"expected the payment requirements, got {text(unpaid)[:200]}")
                return False
            accept = required.accepts[0]
            amount = accept.amount if isinstance(accept, PaymentRequirements) else accept.max_amount_required
            say("x402", f"{PAID_TOOL} unpaid -> PaymentRequired: {amount} atomic USDC to {accept.pay_to}")
            payload = client.create_payment_payload(required)
            # x402's MCP transport: the signed payload in the call's _meta (an open map).
            meta = cast(RequestParamsMeta, {MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)})
            result = await session.call_tool(PAID_TOOL, {}, meta=meta)
            say(
                "x402",
                f"paid in _meta['{MCP_PAYMENT_META_KEY}'] -> isError={result.is_error}, settlement {receipt(result)}",
            )
            return not result.is_error


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    base = stack["base_url"]
    url = base + "/mcp"
    wallet = Account.from_key(stack["demo_payer_private_key"])
    say("mcp", f"the official MCP client against {url}; wallet {wallet.address}")
    key = account_key(base, wallet, store=keys_file(ROOT))
    if not ensure_credits(stack, wallet, key):
        return 1
    ok = asyncio.run(with_key(url, key))
    ok = asyncio.run(with_x402(url, wallet)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
