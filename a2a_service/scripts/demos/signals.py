"""`make demo`, the signals part: an agent reads the free track record, buys a trading signal
with the official x402 client on the running local stack, and reads the desk's record the
signal carries, then compares the copy-trade free tier with what paying adds.

It reads .run/stack.json (written by `make run`). The stack computes signals from the candles
its first feed pass ingested (replayed samples when offline) and runs the analytics pass once
after that pass, so the desks have published by the time this runs."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequirements

from a2a_service.scripts.demos.agent import local_stack

ROOT = Path(__file__).resolve().parents[3]
SYMBOL = os.environ.get("DEMO_SYMBOL", "BTC/USDT")
# The first analytics pass runs once the first feed pass ended (a few seconds after start).
WAIT_SECONDS = 90


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def record_line(r: dict[str, Any]) -> str:
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:+.2f}%"

    rate = "n/a" if r.get("win_rate") is None else f"{r['win_rate'] * 100:.0f}%"
    closed = r.get("closed_signals", r.get("trades", 0))
    return (
        f"{closed} closed, win rate {rate}, avg win {pct(r.get('avg_win_pct'))}, avg loss "
        f"{pct(r.get('avg_loss_pct'))}, expectancy {pct(r.get('expectancy_pct'))}, max drawdown "
        f"{pct(r.get('max_drawdown_pct'))}, state {r.get('state', r.get('kill_state'))}"
    )


def wait_for_signals(base: str) -> bool:
    """Until the stack's first analytics pass published (the copy-trade free tier is free)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        card = requests.get(base + "/api/a2a/program/scorecard-30d", timeout=30).json()
        if (
            card["overall"]["signals"]
            or requests.get(base + "/api/mcp/regime", timeout=30).json()["regime"] != "unknown"
        ):
            return True
        time.sleep(3)
    return False


def buy_signal(base: str, client: x402ClientSync) -> dict[str, Any] | None:
    url = f"{base}/api/a2a/x402/signals?symbol={SYMBOL}"
    http = x402HTTPClientSync(client)
    first = requests.get(url, timeout=30)
    if first.status_code != 402:
        say("skip", f"signals: HTTP {first.status_code} {first.text[:300]}")
        return None
    required = http.get_payment_required_response(lambda name: first.headers.get(name), first.content)
    req = required.accepts[0]
    # A v1 challenge names the price max_amount_required; v2 (what this service issues) amount.
    amount = req.amount if isinstance(req, PaymentRequirements) else req.max_amount_required
    say("402", f"GET {url}: pay {int(amount) / 10**6} USDC to {req.pay_to}")
    payload = client.create_payment_payload(required)
    paid = requests.get(url, headers=http.encode_payment_signature_header(payload), timeout=60)
    if paid.status_code != 200:
        say("refused", f"HTTP {paid.status_code}: {paid.text[:300]}")
        return None
    settled = decode_payment_response_header(paid.headers["PAYMENT-RESPONSE"])
    say("settlement", f"tx {settled.transaction} (success: {settled.success})")
    body: dict[str, Any] = paid.json()
    return body


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    base = stack["base_url"]
    if not wait_for_signals(base):
        say("skip", "no analytics pass has run yet (no candles ingested?); try again in a minute")
        return 1

    regime = requests.get(base + "/api/mcp/regime", timeout=30).json()
    say("regime", f"market {regime['regime']} (confidence {regime['confidence']}), gate {regime['gate']}")
    card = requests.get(base + "/api/a2a/program/scorecard-30d", timeout=30).json()
    for desk in card["desks"]:
        say(
            "track record",
            f"{desk['desk']}: {desk['signals']} published, {desk['open_signals']} open; " + record_line(desk),
        )

    account = Account.from_key(stack["demo_payer_private_key"])
    client = register_exact_evm_client(x402ClientSync(), account)
    body = buy_signal(base, client)
    if body is None:
        return 1
    sig = body["signals"][0]
    say(
        "signal",
        f"{sig['symbol']} {sig['label']} (score {sig['score']:+.3f}, confidence {sig['confidence']:.2f}, "
        f"agreement {sig['agreement']:.2f}) on {sig['venue']}: entry {sig['entry']}, stop {sig['stop']}, "
        f"target {sig['target']}, horizon {sig['horizon_hours']} h; regime {sig['regime']['label']} "
        f"since {sig['regime']['since']}",
    )
    for frame in sig["timeframes"]:
        votes = ", ".join(f"{v['name']} {v['value']:+.2f}x{v['weight']}" for v in frame["votes"])
        print(f"  {frame['timeframe']}: {frame['label']} {frame['score']:+.3f} = {votes}")
    print(f"  data: {body['sources']} (replay: {body['replay']}, stale: {body['stale']})")
    say("its desk's record", f"{sig['desk']}: " + record_line(sig["historical_performance"]))
    if sig["desk_signal"]:
        ds = sig["desk_signal"]
        say(
            "published",
            f"desk signal #{ds['id']} {ds['side']} at {ds['entry']} since {ds['opened_at']} ({ds['status']})",
        )

    free = requests.get(base + "/api/a2a/signals/copy-trade", timeout=30).json()
    say(
        "copy-trade, free tier",
        f"{free['count']} order(s) opened at least {free['delay_seconds']} s ago, routing masked: "
        + ", ".join(f"{o['side']} {o['symbol']} size {o['size_fraction']}" for o in free["orders"][:5]),
    )
    say(
        "copy-trade, paid",
        "real time with the venue's market URL: /api/a2a/x402/copy/signals or X-API-Key with credit",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
