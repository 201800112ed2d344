"""SKILL.md texts of the four agent-framework packs. `{base_url}` is replaced by the
service's address when a pack is served; everything else is literal Markdown."""

from __future__ import annotations

CORE = """\
## What this service is
An HTTP+JSON market-intelligence service for agents: news, trading signals, sentiment,
prediction-market catalogs, trading and risk desks, digests. Discovery and teasers are
free. Full content costs USDC on Base (network `eip155:8453`).

Base URL: `{base_url}`

## 1. Discover (free, no credentials)
- `GET {base_url}/api/a2a/discovery/storefront` — the SKUs on sale with their price
  (`price_usdc`), paid path (`path`) and free teaser (`free_teaser`).
- `GET {base_url}/.well-known/x402` — every paid resource with price, network, asset, payTo.
- `GET {base_url}/api/a2a/teaser/{name}` — free teaser of a product (e.g. `morning-brief`).
- `GET {base_url}/api/a2a/news/catalog?limit=40&category=` — news teasers with unlock prices.
- `GET {base_url}/api/a2a/openapi.json` — the whole interface (OpenAPI 3.1).

## 2. Pay per call with x402
1. `GET` a paid path (all under `{base_url}/api/a2a/x402/`). The answer is HTTP 402.
   The `PAYMENT-REQUIRED` header (base64 JSON, x402 version 2) and the JSON body
   (x402 version 1 form) list what to pay: `amount` / `maxAmountRequired` in atomic
   USDC (6 decimals), `asset`, `payTo`, `network`.
2. Sign an EIP-3009 `transferWithAuthorization` for exactly that amount (EIP-712 domain
   `USD Coin`, version `2`) and retry the same request with the header
   `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1).
3. 200 returns the content and a `PAYMENT-RESPONSE` header with the settlement
   transaction. A proof is accepted once: sign a new one (new nonce) for every call.

With the official Python client (`pip install x402 requests eth-account`):

```python
import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

client = register_exact_evm_client(x402ClientSync(), Account.from_key(PRIVATE_KEY))
session = wrapRequestsWithPayment(requests.Session(), client)
brief = session.get("{base_url}/api/a2a/x402/morning-brief").json()
```

## 3. Or prepay credits (no x402 wallet needed per call)
1. `POST {base_url}/api/a2a/account/register` with `{"wallet_address": "0x..."}` → `401`
   with a challenge (`message`, `nonce`). Sign `message` with the wallet (EIP-191
   personal_sign) and POST again with `wallet_address`, `nonce` and `signature` →
   `api_key` (shown once), `treasury_address`.
2. Send at least 0.01 USDC from that wallet to `treasury_address` on Base. A deposit
   of the bundle size earns a bonus (see `GET {base_url}/api/a2a/account/topup-info`).
3. Call credit routes with the header `X-API-Key: <api_key>`; each call debits its
   price. Answers carry `X-Credit-Charged` and `X-Credit-Balance`.

## 4. Or buy a session
`GET {base_url}/api/a2a/x402/session/desk-pack` (paid by x402) returns a session `token`;
then `GET {base_url}/api/a2a/session/call/{sku}` with header `X-Session-Token: <token>`
debits one call; `GET {base_url}/api/a2a/session/status?token=<token>` shows what is left.

## Errors you must handle
- `402` — payment needed (read the body: it says how to pay, and the credit and session
  alternatives). Never retry a 402 with the same proof.
- `401` — missing or unknown `X-API-Key`; the body says how to register.
- `422` — your parameters or body are wrong: `{"detail":[{"loc":[...],"msg":"...","type":"..."}]}`.
- `404` — unknown id or name. `429` — slow down for `Retry-After` seconds.
- `503` — that product is not available right now; nothing was charged.
"""

FRAMEWORK_SECTIONS = {
    "langchain": """\
## LangChain
Wrap each paid path as a `StructuredTool`; the x402-wrapped session pays inside the tool.

```python
from langchain_core.tools import tool

@tool
def morning_brief() -> dict:
    \"\"\"Today's market morning brief (costs the SKU price in USDC).\"\"\"
    return session.get("{base_url}/api/a2a/x402/morning-brief").json()

@tool
def news_catalog(limit: int = 40, category: str = "") -> dict:
    \"\"\"Free news teasers with unlock prices.\"\"\"
    return requests.get("{base_url}/api/a2a/news/catalog",
                        params={"limit": limit, "category": category}).json()
```
Give the agent the free tools first and the paid ones with their price in the description.
""",
    "crewai": """\
## CrewAI
Subclass `BaseTool` once per product; keep one paying `requests.Session` per crew.

```python
from crewai.tools import BaseTool

class NewsUnlock(BaseTool):
    name: str = "news_unlock"
    description: str = "Full text of a news item by id. Costs the item's price_usdc."
    def _run(self, news_id: int) -> str:
        r = session.get("{base_url}/api/a2a/x402/news/unlock", params={"news_id": news_id})
        r.raise_for_status()
        return r.json()["body"]
```
With prepaid credits instead, send `X-API-Key` and call
`POST {base_url}/api/a2a/news/{news_id}/unlock`.
""",
    "openai-agents": """\
## OpenAI Agents SDK
Expose products as `@function_tool`s; put the price in the docstring so the model can
decide whether a call is worth it.

```python
from agents import function_tool

@function_tool
def storefront() -> dict:
    \"\"\"Free: what is on sale, with prices.\"\"\"
    return requests.get("{base_url}/api/a2a/discovery/storefront").json()

@function_tool
def sentiment() -> dict:
    \"\"\"Market sentiment. Costs 0.05 USDC per call via x402.\"\"\"
    return session.get("{base_url}/api/a2a/x402/sentiment").json()
```
""",
    "mcp-client": """\
## MCP
`GET {base_url}/api/a2a/mcp/catalog` lists every product as an MCP tool
(name, description, input schema, price, and the HTTP call that implements it).
`GET {base_url}/api/mcp/strategies` and `GET {base_url}/api/mcp/regime` are free tools.
Register the free tools directly; for paid tools, make the HTTP call with an x402-paying
client (section 2) or with `X-API-Key` credits (section 3).
""",
}


def skill_md(pack_id: str, name: str, framework: str) -> str:
    header = f"---\nname: a2a-market-intel-{pack_id}\ndescription: Call the agent-to-agent market-intelligence service from {framework}.\n---\n\n# {name}\n\n"
    return header + CORE + "\n" + FRAMEWORK_SECTIONS[pack_id]
