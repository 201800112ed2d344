"""Prepaid sessions and webhook push on the running local stack (the last part of `make demo`):
buy a desk pack by x402, call until the quota answers 402, then register a webhook to a
receiver started here and print a signed event it verified with standardwebhooks."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests
from eth_account import Account
from standardwebhooks import Webhook
from x402 import x402ClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from a2a_service.scripts.demos.credits import account_key, keys_file

ROOT = Path(__file__).resolve().parents[3]


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def buy_pack(base: str, account) -> dict:
    client = register_exact_evm_client(x402ClientSync(), account)
    client.set_spend_controls({"max_amount_per_payment": "$5"})  # a pack costs more than the $1 default cap
    with wrapRequestsWithPayment(requests.Session(), client) as session:
        resp = session.get(base + "/api/a2a/x402/session/desk-pack", timeout=60)
    resp.raise_for_status()
    return resp.json()


def use_up(base: str, pack: dict) -> None:
    sku = "morning_brief" if "morning_brief" in pack["skus"] else pack["skus"][0]
    headers = {"X-Session-Token": pack["token"]}
    calls = 0
    with requests.Session() as http:
        while True:
            resp = http.get(f"{base}/api/a2a/session/call/{sku}", headers=headers, timeout=30)
            if resp.status_code != 200:
                break
            calls += 1
    say(
        "session",
        f"{calls} calls of {sku} answered 200; the next one: HTTP {resp.status_code} "
        f"{json.dumps(resp.json())[:160]}",
    )


def receive_one(base: str, key: str) -> int:
    got: list[dict] = []
    secret = {"value": ""}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            payload = Webhook(secret["value"]).verify(body, dict(self.headers.items()))  # raises if forged
            got.append({"webhook-id": self.headers["webhook-id"], "payload": payload})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    sub: dict = {}
    try:
        sub = requests.post(
            base + "/api/a2a/account/webhooks/register",
            headers={"X-API-Key": key},
            timeout=30,
            json={
                "url": url,
                "events": ["copy_signal", "regime_attestation"],
                "description": "make demo receiver",
            },
        ).json()
        secret["value"] = sub["secret"]
        say("webhook", f"subscription {sub['id']} → {url} (secret {sub['secret'][:12]}…, shown once)")
        requests.post(
            f"{base}/api/a2a/account/webhooks/{sub['id']}/test", headers={"X-API-Key": key}, timeout=30
        )
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            time.sleep(0.2)
        if not got:
            print("no event arrived within 60 s (is the Celery worker running?)", file=sys.stderr)
            return 1
        say("verified", f"standardwebhooks.Webhook.verify passed for {got[0]['webhook-id']}:")
        print(json.dumps(got[0]["payload"], indent=2))
        return 0
    finally:
        server.shutdown()
        if sub.get("id"):
            # The receiver is gone: the subscription goes too, so runs do not pile them up.
            requests.delete(
                f"{base}/api/a2a/account/webhooks/{sub['id']}", headers={"X-API-Key": key}, timeout=30
            )


def main() -> int:
    stack = json.loads((ROOT / ".run" / "stack.json").read_text())
    base = stack["base_url"]
    account = Account.from_key(stack["demo_payer_private_key"])
    pack = buy_pack(base, account)
    say(
        "pack",
        f"desk pack bought by x402: token {pack['token'][:10]}…, {pack['calls_total']} calls for "
        f"{pack['window_hours']} h over {len(pack['skus'])} SKUs",
    )
    use_up(base, pack)
    return receive_one(base, account_key(base, account, store=keys_file(ROOT)))


if __name__ == "__main__":
    sys.exit(main())
