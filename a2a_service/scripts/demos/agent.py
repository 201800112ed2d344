"""`make demo`: an agent that buys from the running local stack with the official x402 client.

It reads .run/stack.json (written by `make run`), reads the storefront, and pays for a SKU
(x402ClientSync + ExactEvmScheme + an eth-account LocalAccount), printing each step: the
402, the signed authorization, the settlement transaction and the content."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import requests
from eth_account import Account
from web3 import Web3
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequirements

ROOT = Path(__file__).resolve().parents[3]
# Tried in order: the first whose product can serve now is bought (a SKU whose product has
# no data yet answers 503 before any payment, so trying it costs nothing).
DEFAULT_SKUS = ["morning_brief", "news_digest", "payments_dual_rail_status"]
BALANCE_ABI = [
    {
        "name": "balanceOf",
        "type": "function",
        "stateMutability": "view",
        "inputs": [{"name": "a", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    }
]


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def local_stack(root: Path = ROOT) -> dict[str, Any] | None:
    """What `make run` wrote to .run/stack.json (addresses, demo wallet), or None with a hint."""
    stack_file = root / ".run" / "stack.json"
    if not stack_file.exists():
        print("no .run/stack.json: start the local stack first with `make run`", file=sys.stderr)
        return None
    stack: dict[str, Any] = json.loads(stack_file.read_text())
    return stack


def usdc_balance(stack: dict[str, Any], address: str) -> float:
    w3 = Web3(Web3.HTTPProvider(stack["chain_rpc_url"]))
    token = w3.eth.contract(address=Web3.to_checksum_address(stack["usdc_address"]), abi=BALANCE_ABI)
    return token.functions.balanceOf(Web3.to_checksum_address(address)).call() / 10**6


def buy(stack: dict, sku: dict, client: x402ClientSync) -> bool:
    url = stack["base_url"] + sku["path"]
    http = x402HTTPClientSync(client)
    say("402", f"GET {url}")
    first = requests.get(url, timeout=30)
    if first.status_code != 402:
        say("skip", f"{sku['sku']}: HTTP {first.status_code} {first.text[:200]}")
        return False
    required = http.get_payment_required_response(lambda name: first.headers.get(name), first.content)
    req = required.accepts[0]
    # A v1 challenge names the price max_amount_required; v2 (what this service issues) amount.
    amount = req.amount if isinstance(req, PaymentRequirements) else req.max_amount_required
    print(
        f"  x402 v{required.x402_version}: pay {int(amount) / 10**6} USDC ({amount} atomic) "
        f"on {req.network} to {req.pay_to}, asset {req.asset}"
    )
    payload = client.create_payment_payload(required)
    auth = payload.payload["authorization"]
    say("signature", f"EIP-3009 transferWithAuthorization signed by {auth['from']}")
    print(
        f"  nonce {auth['nonce']}, valid until {auth['validBefore']}, "
        f"signature {payload.payload['signature'][:20]}..."
    )
    paid = requests.get(url, headers=http.encode_payment_signature_header(payload), timeout=60)
    if paid.status_code == 503:
        say("skip", f"{sku['sku']}: {paid.json().get('detail')} (charged: {paid.json().get('charged')})")
        return False
    if paid.status_code != 200:
        say("refused", f"HTTP {paid.status_code}: {paid.text[:300]}")
        return False
    settled = decode_payment_response_header(paid.headers["PAYMENT-RESPONSE"])
    say("settlement", f"tx {settled.transaction} on {settled.network} (success: {settled.success})")
    say("content", json.dumps(paid.json(), indent=2)[:1500])
    return True


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    account = Account.from_key(stack["demo_payer_private_key"])
    client = register_exact_evm_client(x402ClientSync(), account)
    say(
        "agent",
        f"wallet {account.address} holds {usdc_balance(stack, account.address)} USDC on chain "
        f"{stack['chain_id']} ({stack['chain_rpc_url']})",
    )

    store = requests.get(stack["base_url"] + "/api/a2a/discovery/storefront", timeout=30).json()
    skus = {s["sku"]: s for s in store["storefront_skus"] + store["growth_skus"]}
    status = requests.get(stack["base_url"] + "/api/a2a/x402/status", timeout=30).json()
    skus.update({s["sku"]: s for s in status["skus"]})
    say(
        "storefront",
        f"{len(store['storefront_skus'])} hero SKUs, {status['live_skus']} live; e.g. "
        + ", ".join(f"{s['sku']} {s['price_usdc']}" for s in store["storefront_skus"][:4]),
    )
    wanted = [os.environ["DEMO_SKU"]] if os.environ.get("DEMO_SKU") else DEFAULT_SKUS
    for name in wanted:
        if name in skus and buy(stack, skus[name], client):
            say(
                "done",
                f"wallet now holds {usdc_balance(stack, account.address)} USDC; "
                f"treasury {usdc_balance(stack, stack['treasury_address'])} USDC",
            )
            return 0
    print("nothing could be bought", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
