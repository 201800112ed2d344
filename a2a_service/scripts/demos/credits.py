"""The prepaid-credit route, shown on the running local stack (`make demo` runs it after the
x402 demo): register the demo wallet (once: later runs reuse its key, kept in .run/), send USDC to the treasury on the local chain, watch
the deposit watcher credit it, then make a call paid from credits."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import requests
from eth_account import Account
from eth_account.messages import encode_defunct
from web3 import Web3
from web3.types import TxParams, Wei

from a2a_service.scripts.demos.agent import local_stack

ROOT = Path(__file__).resolve().parents[3]
TRANSFER_ABI = [
    {
        "name": "transfer",
        "type": "function",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "to", "type": "address"}, {"name": "value", "type": "uint256"}],
        "outputs": [{"name": "", "type": "bool"}],
    }
]
DEPOSIT_USDC = 5
# The local stack credits after DEPOSIT_CONFIRMATIONS blocks (seconds); a stack run with
# DEPOSIT_FINALITY_TAG=safe waits for anvil's safe block (32 blocks, about 32 s): room for both.
CREDIT_WAIT_SECONDS = 120


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def register(base: str, wallet) -> str:
    """Every registration proves the wallet is ours: the first POST answers 401 with a
    challenge; sign it (EIP-191) and send it back with its nonce. For a wallet that already
    has an account the same proof rotates its key."""
    resp = requests.post(
        base + "/api/a2a/account/register", json={"wallet_address": wallet.address}, timeout=30
    )
    if resp.status_code != 401 or resp.json().get("code") != "ownership_proof_required":
        resp.raise_for_status()
        raise RuntimeError(f"expected a challenge, got HTTP {resp.status_code}: {resp.text[:200]}")
    challenge = resp.json()
    say(
        "register",
        f"HTTP 401: sign the challenge (nonce {challenge['nonce'][:8]}...) to prove the wallet is ours",
    )
    signature = wallet.sign_message(encode_defunct(text=challenge["message"])).signature.hex()
    resp = requests.post(
        base + "/api/a2a/account/register",
        timeout=30,
        json={
            "wallet_address": wallet.address,
            "nonce": challenge["nonce"],
            "signature": "0x" + signature.removeprefix("0x"),
        },
    )
    resp.raise_for_status()
    body = resp.json()
    say(
        "register",
        f"HTTP {resp.status_code}: api_key {body['api_key'][:10]}... (shown once, "
        f"{'rotated' if body['rotated'] else 'new account'}), "
        f"balance {body['credit_balance_usdc']} USDC, treasury {body['treasury_address']}",
    )
    return body["api_key"]


def _kept_keys(store: Path) -> dict[str, str]:
    try:
        kept = json.loads(store.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in kept.items()} if isinstance(kept, dict) else {}


def keys_file(root: Path) -> Path:
    """Where the demos keep their API keys, per stack address and wallet, across runs."""
    return root / ".run" / "demo_accounts.json"


def account_key(base: str, wallet, *, store: Path) -> str:
    """The wallet's API key for the demos: the one an earlier run kept in `store` while the
    stack still accepts it, else a new registration (one signed challenge), kept there. So
    `make demo` runs any number of times: its four parts share one account and key, and ask
    for a challenge only when the stack's database is new (challenges are limited per wallet
    and requester: OWNERSHIP_CHALLENGES_PER_WALLET per window)."""
    slot = f"{base}|{wallet.address.lower()}"
    kept = _kept_keys(store)
    key = kept.get(slot)
    if key:
        resp = requests.get(base + "/api/a2a/account", headers={"X-API-Key": key}, timeout=30)
        if resp.status_code == 200:
            say(
                "account",
                f"the demo account of {wallet.address} again: api_key {key[:10]}... kept in "
                f"{store.name}, balance {resp.json()['credit_balance_usdc']} USDC",
            )
            return key
        if resp.status_code != 401:
            resp.raise_for_status()
        # 401: a new database under the same address, or the key was rotated elsewhere.
    key = register(base, wallet)
    kept[slot] = key
    store.parent.mkdir(parents=True, exist_ok=True)
    partial = store.with_suffix(".tmp")
    partial.write_text(json.dumps(kept, indent=2))
    partial.chmod(0o600)  # an API key: readable by its owner only
    partial.replace(store)
    return key


def deposit(stack: dict, wallet) -> str:
    w3 = Web3(Web3.HTTPProvider(stack["chain_rpc_url"]))
    token = w3.eth.contract(address=Web3.to_checksum_address(stack["usdc_address"]), abi=TRANSFER_ABI)
    tx = token.functions.transfer(
        Web3.to_checksum_address(stack["treasury_address"]), DEPOSIT_USDC * 10**6
    ).build_transaction(
        TxParams(
            {
                "from": wallet.address,
                "nonce": w3.eth.get_transaction_count(wallet.address),
                "chainId": stack["chain_id"],
                "gas": 100_000,
                "maxFeePerGas": Wei(w3.eth.gas_price * 2),
                "maxPriorityFeePerGas": Wei(0),
            }
        )
    )
    tx_hash = w3.eth.send_raw_transaction(wallet.sign_transaction(tx).raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)
    say(
        "deposit",
        f"sent {DEPOSIT_USDC} USDC to the treasury: tx 0x{bytes(tx_hash).hex().removeprefix('0x')} "
        f"in block {receipt['blockNumber']}",
    )
    return "0x" + bytes(tx_hash).hex().removeprefix("0x")


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    base = stack["base_url"]
    wallet = Account.from_key(stack["demo_payer_private_key"])
    say("credits", f"wallet {wallet.address} pays by prepaid credits this time")
    key = account_key(base, wallet, store=keys_file(ROOT))
    headers = {"X-API-Key": key}
    before = requests.get(base + "/api/a2a/account", headers=headers, timeout=30).json()[
        "credit_balance_usdc"
    ]
    tx_hash = deposit(stack, wallet)
    started = time.monotonic()
    last_state = None
    while time.monotonic() - started < CREDIT_WAIT_SECONDS:
        account = requests.get(base + "/api/a2a/account", headers=headers, timeout=30).json()
        mine = [d for d in account["deposits"] if d["tx_hash"] == tx_hash]
        state = mine[0]["state"] if mine else "not seen yet"
        if state != last_state:
            print(f"  {time.monotonic() - started:5.1f} s: deposit {state}", flush=True)
            last_state = state
        if state == "credited":
            say(
                "credited",
                f"in {time.monotonic() - started:.1f} s: balance {before} -> "
                f"{account['credit_balance_usdc']} USDC (bonus {mine[0]['bonus_usdc']})",
            )
            break
        time.sleep(0.5)
    else:
        print(
            f"the deposit was not credited within {CREDIT_WAIT_SECONDS} s (is the Celery worker running?)",
            file=sys.stderr,
        )
        return 1
    url = base + "/api/a2a/x402/payments/dual-rail-status"
    resp = requests.get(url, headers=headers, timeout=30)
    say(
        "call",
        f"GET {url} with X-API-Key -> HTTP {resp.status_code}, charged "
        f"{resp.headers.get('X-Credit-Charged')} USDC, balance {resp.headers.get('X-Credit-Balance')} USDC",
    )
    print(json.dumps(resp.json(), indent=2)[:600])
    return 0 if resp.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
