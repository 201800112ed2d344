"""SKILL.md texts of the four agent-framework packs. `{base_url}` is replaced by the
service's address when a pack is served; everything else is literal Markdown.

Every fenced code block is an example that runs as is against the service
(tests/catalog/test_framework_packs.py executes each one against a live server): what is the
caller's own comes from environment variables the examples name."""

from __future__ import annotations

CORE = """\
## What this service is
An HTTP+JSON market-intelligence service for agents: news, trading signals, sentiment,
prediction-market catalogs, trading and risk desks, digests. Discovery and teasers are
free. Full content costs USDC on Base (network `eip155:8453`).

Base URL: `{base_url}`

Every example below runs as is. What is yours comes from the environment:
`A2A_API_KEY` (a funded credit key, section 3), `WALLET_PRIVATE_KEY` (the wallet you
register for credits), `PAYER_PRIVATE_KEY` (the wallet that pays x402 calls in USDC).
Python examples need `pip install requests` (and `eth-account`, `x402` where imported).

## 1. Discover (free, no credentials)
- `GET {base_url}/api/a2a/discovery/storefront` — the SKUs on sale with their price
  (`price_usdc`), paid path (`path`) and free teaser (`free_teaser`).
- `GET {base_url}/.well-known/x402` — every paid resource with price, network, asset, payTo.
- `GET {base_url}/api/a2a/teaser/{name}` — free teaser of a product (e.g. `morning-brief`).
- `GET {base_url}/api/a2a/news/catalog?limit=40&category=` — news teasers with unlock prices.
- `GET {base_url}/api/a2a/openapi.json` — the whole interface (OpenAPI 3.1).

```bash
curl -sf "{base_url}/api/a2a/discovery/storefront"
```

```python
import requests

BASE = "{base_url}"
store = requests.get(f"{BASE}/api/a2a/discovery/storefront", timeout=10).json()
for sku in store["storefront_skus"]:
    print(sku["sku"], sku["price_usdc"], "USDC at", BASE + sku["path"])
paid = requests.get(f"{BASE}/.well-known/x402", timeout=10).json()
print(len(paid["resources"]), "paid resources; facilitator:", paid["facilitator"])
news = requests.get(f"{BASE}/api/a2a/news/catalog", params={"limit": 5}, timeout=10).json()
for item in news["items"]:
    print(item["id"], item["title"], item["price_usdc"], "USDC to unlock")
```

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

Read the challenge (nothing is paid):

```python
import base64
import json

import requests

resp = requests.get("{base_url}/api/a2a/x402/morning-brief", timeout=10)
print(resp.status_code)  # 402: pay to read (503: nothing fresh to sell now, nothing charged)
required = json.loads(base64.b64decode(resp.headers["PAYMENT-REQUIRED"]))
offer = required["accepts"][0]
print(offer["amount"], "atomic USDC to", offer["payTo"], "on", offer["network"], "asset", offer["asset"])
print("or prepay credits:", resp.json()["alternatives"]["credits"]["register"])
```

Pay with the official Python client (`pip install x402 requests eth-account`):

```python
import os

import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

client = register_exact_evm_client(x402ClientSync(), Account.from_key(os.environ["PAYER_PRIVATE_KEY"]))
session = wrapRequestsWithPayment(requests.Session(), client)
resp = session.get("{base_url}/api/a2a/x402/morning-brief", timeout=60)
resp.raise_for_status()
print(resp.json()["title"], "- settlement:", resp.headers["PAYMENT-RESPONSE"][:24], "...")
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

Register (step 1):

```python
import os

import requests
from eth_account import Account
from eth_account.messages import encode_defunct

BASE = "{base_url}"
wallet = Account.from_key(os.environ["WALLET_PRIVATE_KEY"])
first = requests.post(f"{BASE}/api/a2a/account/register", json={"wallet_address": wallet.address}, timeout=10)
assert first.status_code == 401, first.text  # the challenge to sign
challenge = first.json()
signature = wallet.sign_message(encode_defunct(text=challenge["message"])).signature.hex()
done = requests.post(
    f"{BASE}/api/a2a/account/register",
    json={"wallet_address": wallet.address, "nonce": challenge["nonce"], "signature": "0x" + signature.removeprefix("0x")},
    timeout=10,
)
done.raise_for_status()
account = done.json()
print("api_key", account["api_key"][:6] + "... (keep it secret); deposit USDC to", account["treasury_address"])
```

Call with credits (step 3):

```bash
curl -sf -H "X-API-Key: $A2A_API_KEY" "{base_url}/api/a2a/sentiment?asset=BTC"
```

```python
import os

import requests

resp = requests.get("{base_url}/api/a2a/sentiment", headers={"X-API-Key": os.environ["A2A_API_KEY"]}, timeout=10)
resp.raise_for_status()
print("charged", resp.headers["X-Credit-Charged"], "USDC; balance", resp.headers["X-Credit-Balance"], "USDC")
for asset in resp.json()["assets"]:
    print(asset["asset"], asset["score"], asset["label"])
```

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
    "langchain": '''\
## LangChain
One `@tool` per call; the free ones first, the paid ones with their price in the docstring.
Paid tools here use credits (`A2A_API_KEY`); an x402-paying session (section 2) works the same.

```python
import os

import requests
from langchain_core.tools import tool

BASE = "{base_url}"
CREDITS = {"X-API-Key": os.environ["A2A_API_KEY"]}


@tool
def news_catalog(limit: int = 40, category: str = "") -> dict:
    """Free: news teasers with their unlock prices."""
    params = {"limit": limit, "category": category}
    return requests.get(f"{BASE}/api/a2a/news/catalog", params=params, timeout=10).json()


@tool
def sentiment(asset: str = "") -> dict:
    """Market sentiment per asset; each call debits the sentiment price from your credits."""
    params = {"asset": asset} if asset else {}
    resp = requests.get(f"{BASE}/api/a2a/sentiment", params=params, headers=CREDITS, timeout=10)
    resp.raise_for_status()
    return resp.json()


tools = [news_catalog, sentiment]  # hand these to your agent
print(len(news_catalog.invoke({"limit": 5})["items"]), "news teasers")
print([(a["asset"], a["label"]) for a in sentiment.invoke({"asset": "BTC"})["assets"]])
```
''',
    "crewai": """\
## CrewAI
Subclass `BaseTool` once per product; keep one key (or one paying `requests.Session`) per crew.

```python
import os

import requests
from crewai.tools import BaseTool

BASE = "{base_url}"


class NewsUnlock(BaseTool):
    name: str = "news_unlock"
    description: str = "Full text of a news item by id; debits the item's price_usdc from your credits."

    def _run(self, news_id: int) -> str:
        resp = requests.post(
            f"{BASE}/api/a2a/news/{news_id}/unlock", headers={"X-API-Key": os.environ["A2A_API_KEY"]}, timeout=10
        )
        resp.raise_for_status()
        return resp.json()["body"]


teasers = requests.get(f"{BASE}/api/a2a/news/catalog", params={"limit": 1}, timeout=10).json()["items"]
for teaser in teasers:
    print(teaser["title"], "->", NewsUnlock().run(news_id=teaser["id"])[:80])
```
With x402 instead, `GET {base_url}/api/a2a/x402/news/unlock?news_id=<id>` through the paying
session of section 2.
""",
    "openai-agents": '''\
## OpenAI Agents SDK
Expose calls as `function_tool`s; put the price in the docstring so the model can decide
whether a call is worth it.

```python
import os

import requests
from agents import function_tool

BASE = "{base_url}"


def storefront() -> dict:
    """Free: what is on sale, with prices."""
    return requests.get(f"{BASE}/api/a2a/discovery/storefront", timeout=10).json()


def sentiment() -> dict:
    """Market sentiment per asset; each call debits the sentiment price from your credits."""
    resp = requests.get(f"{BASE}/api/a2a/sentiment", headers={"X-API-Key": os.environ["A2A_API_KEY"]}, timeout=10)
    resp.raise_for_status()
    return resp.json()


tools = [function_tool(storefront), function_tool(sentiment)]  # Agent(name=..., tools=tools)
print(len(storefront()["storefront_skus"]), "SKUs on the storefront;", len(sentiment()["assets"]), "assets scored")
```
''',
    "mcp-client": """\
## MCP
`GET {base_url}/api/a2a/mcp/catalog` lists every product as an MCP tool
(name, description, input schema, price, and the HTTP call that implements it).
`GET {base_url}/api/mcp/strategies` and `GET {base_url}/api/mcp/regime` are free tools.
Register the free tools directly; for paid tools, make the HTTP call with an x402-paying
client (section 2) or with `X-API-Key` credits (section 3).

```python
import requests

catalog = requests.get("{base_url}/api/a2a/mcp/catalog", timeout=10).json()
for t in [t for t in catalog["tools"] if not t["paid"]]:
    resp = requests.request(t["http"]["method"], t["http"]["url"], timeout=10)
    resp.raise_for_status()
    print("free tool", t["name"], "->", sorted(resp.json())[:4])
paid = [t for t in catalog["tools"] if t["paid"]]
print(len(paid), "paid tools, e.g.", paid[0]["name"], "at", paid[0]["price_usdc"], "USDC:", paid[0]["http"]["url"])
```
""",
}


def skill_md(pack_id: str, name: str, framework: str) -> str:
    header = f"---\nname: a2a-market-intel-{pack_id}\ndescription: Call the agent-to-agent market-intelligence service from {framework}.\n---\n\n# {name}\n\n"
    return header + CORE + "\n" + FRAMEWORK_SECTIONS[pack_id]
