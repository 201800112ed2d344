"""`make demo`, the execution-delegation part, on the running local stack: an agent delegates a
desk's signals to a webhook receiver it starts here, receives one delegated order (verified with
the official standardwebhooks library), reports its fill, and prints its position and PnL.

Orders come from the desk's signals: the activation asks for the desk's signals open now too
(include_open), and when none is open on the symbols it runs one analytics pass
(`manage.py compute_intel`, what beat runs every INTEL_COMPUTE_SECONDS) so the desk publishes
what is due. Each delegated_order push is priced like a copy_signal push: the demo wallet pays it
from the credits the credit demo (credits.py) deposited (run after it, as `make demo` does)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
from eth_account import Account
from standardwebhooks import Webhook

from a2a_service.scripts.demos.agent import local_stack
from a2a_service.scripts.demos.credits import account_key, keys_file

ROOT = Path(__file__).resolve().parents[3]
DESK = os.environ.get("DEMO_DESK", "trend-momentum")
SYMBOLS = os.environ.get("DEMO_SYMBOLS", "BTC/USDT,ETH/USDT,SOL/USDT,XRP/USDT,BNB/USDT").split(",")
WAIT_OPEN_SECONDS = 15
WAIT_PUBLISHED_SECONDS = 90


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


class Receiver:
    """A loopback webhook receiver that verifies every push with the delegation's secret."""

    def __init__(self) -> None:
        self.secret = ""
        self.orders: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                payload = Webhook(outer.secret).verify(body, dict(self.headers.items()))  # raises if forged
                if payload.get("type") == "delegated_order":
                    outer.orders.append({"webhook-id": self.headers["webhook-id"], **payload})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/orders"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, seconds: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + seconds
        while not self.orders and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.orders[0] if self.orders else None


def activate(base: str, key: str, url: str) -> dict[str, Any] | None:
    symbols = list(SYMBOLS)
    for _ in range(2):
        resp = requests.post(
            base + "/api/a2a/account/delegation/activate",
            headers={"X-API-Key": key},
            timeout=30,
            json={
                "desk": DESK,
                "symbols": symbols,
                "max_notional_per_signal_usdc": 250,
                "max_notional_total_usdc": 1000,
                "expires_in_hours": 2,
                "webhook_url": url,
                "include_open": True,
            },
        )
        if resp.status_code == 201:
            body: dict[str, Any] = resp.json()
            return body
        detail = (
            resp.json().get("detail")
            if resp.headers.get("content-type", "").startswith("application/json")
            else None
        )
        if isinstance(detail, list) and detail and detail[0].get("type") == "symbol_unknown":
            unknown = set(detail[0]["msg"].split(": ", 1)[1].split(", "))
            symbols = [s for s in symbols if s not in unknown]
            if symbols:
                continue
        say("refused", f"HTTP {resp.status_code}: {resp.text[:300]}")
        return None
    return None


def publish_due() -> None:
    """One analytics pass on the stack's database, as beat would run it."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local"),
    }
    out = subprocess.run(
        [sys.executable, "manage.py", "compute_intel"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    say("desks", (out.stdout or out.stderr).strip()[-400:])


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    base = stack["base_url"]
    wallet = Account.from_key(stack["demo_payer_private_key"])
    key = account_key(base, wallet, store=keys_file(ROOT))
    headers = {"X-API-Key": key}
    receiver = Receiver()
    delegation: dict[str, Any] | None = None
    try:
        delegation = activate(base, key, receiver.url)
        if delegation is None:
            return 1
        receiver.secret = delegation["secret"]
        say(
            "delegation",
            f"{delegation['id']}: desk {delegation['desk']} on {', '.join(delegation['symbols'])}, at most "
            f"{delegation['max_notional_per_signal_usdc']} USDC a signal and {delegation['max_notional_total_usdc']} "
            f"in all, until {delegation['expires_at']}; orders pushed to {receiver.url} "
            f"(secret {delegation['secret'][:12]}…, shown once)",
        )
        order = receiver.wait(WAIT_OPEN_SECONDS if delegation["orders"] else 2)
        if order is None and not delegation["orders"]:
            say(
                "desks",
                "no signal of the desk is open on those symbols: one analytics pass publishes what is due",
            )
            publish_due()
            order = receiver.wait(WAIT_PUBLISHED_SECONDS)
        if order is None:
            status = requests.get(
                base + "/api/a2a/account/delegation/status", headers=headers, timeout=30
            ).json()
            mine = next(d for d in status["delegations"] if d["id"] == delegation["id"])
            say(
                "no order",
                f"nothing pushed yet (orders: {[(o['symbol'], o['delivery']) for o in mine['orders']]}); "
                "the desk publishes when its signals qualify (is the Celery worker running? credit for the push?)",
            )
            return 1
        data = order["data"]
        say(
            "order",
            f"standardwebhooks verified {order['webhook-id']}: {data['side']} {data['size']:.8f} {data['symbol']} "
            f"(notional {data['notional_usdc']} USDC = {delegation['max_notional_per_signal_usdc']} x size "
            f"fraction {data['size_fraction']}) on {data['venue']} near {data['reference_price']}",
        )
        fee = round(data["notional_usdc"] * 0.001, 6)
        resp = requests.post(
            base + "/api/a2a/account/delegation/report-fill",
            headers=headers,
            timeout=30,
            json={
                "order_id": data["order_id"],
                "venue": data["venue"],
                "fill_price": data["reference_price"],
                "size": data["size"],
                "fee_usdc": fee,
                "filled_at": datetime.now(tz=UTC).isoformat(),
                "client_fill_id": "demo-" + data["order_id"][:8],
            },
        )
        if resp.status_code not in (200, 201):
            say("fill refused", f"HTTP {resp.status_code}: {resp.text[:300]}")
            return 1
        reported = resp.json()
        say(
            "fill",
            f"HTTP {resp.status_code}: the demo executes nothing; it reports the order as filled at its reference "
            f"price: {reported['fill']['size']} @ {reported['fill']['fill_price']} "
            f"({reported['fill']['notional_usdc']} USDC, fee {fee}); order filled "
            f"{reported['order']['filled_notional_usdc']} of {reported['order']['notional_usdc']} USDC",
        )
        status = requests.get(base + "/api/a2a/account/delegation/status", headers=headers, timeout=30).json()
        mine = next(d for d in status["delegations"] if d["id"] == delegation["id"])
        for pos in mine["positions"]:
            mark = pos["mark"]
            where = (
                f"marked {mark['price']} ({mark['source']} on {mark['venue']}, as of {mark['as_of']}, replay "
                f"{mark['replay']})"
                if mark
                else "no price ingested"
            )
            say("position", f"{pos['symbol']} {pos['size']:+.8f} at {pos['avg_entry_price']}, {where}")
        pnl = mine["pnl"]
        say(
            "pnl",
            f"realized {pnl['realized_pnl_usdc']} - fees {pnl['fees_usdc']} = {pnl['realized_net_usdc']} USDC; "
            f"unrealized {pnl['unrealized_pnl_usdc']}; total {pnl['total_pnl_usdc']} USDC (replay {pnl['replay']})",
        )
        requests.post(
            f"{base}/api/a2a/account/delegation/{delegation['id']}/revoke", headers=headers, timeout=30
        ).raise_for_status()
        say("revoked", "the delegation is revoked: no further orders")
        delegation = None
        return 0
    finally:
        receiver.server.shutdown()
        if delegation is not None:
            # Failed half way: its receiver is gone, so no order is pushed to nowhere next run.
            requests.post(
                f"{base}/api/a2a/account/delegation/{delegation['id']}/revoke", headers=headers, timeout=30
            )


if __name__ == "__main__":
    sys.exit(main())
