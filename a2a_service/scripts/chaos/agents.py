"""The agents' common ground: the answer recorder (JSONL under .run/chaos/), an HTTP call that
records every request (route, status, latency, time), and the two ways of paying the roles share:
an x402 payment with the official client (challenge, signed proof, the same proof sent again
until the call is answered), and the credit account (registered with a signed ownership
challenge, topped up by deposits on chain)."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

from .chain import deposit_send, new_wallet
from .stack import Timeline

# An x402 proof is sent again (same header) until answered, at most this long: its authorization
# is valid for the challenge's maxTimeoutSeconds (120 s) from signing.
PROOF_RETRY_SECONDS = 100.0
DEPOSIT_ATOMIC = 5_000_000  # the credit bundle: 5 USDC, credited with its 10% bonus
TOPUP_BELOW_ATOMIC = 1_000_000


class Recorder:
    """Every request and every logical outcome ("op"), appended to one JSONL file and kept."""

    def __init__(self, path: Path, timeline: Timeline) -> None:
        self.path = path
        self.timeline = timeline
        self.requests: list[dict[str, Any]] = []
        self.ops: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._out = open(path, "a", buffering=1)  # noqa: SIM115 - closed by close(); a line at a time

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        row = {"type": kind, **fields}
        with self._lock:
            (self.requests if kind == "req" else self.ops).append(row)
            self._out.write(json.dumps(row, default=str) + "\n")
        return row

    def close(self) -> None:
        with self._lock:
            self._out.close()


@dataclass
class Ctx:
    """What every agent shares."""

    base: str
    rpc_url: str  # anvil itself: agents' deposits never depend on the service's view of the chain
    timeline: Timeline
    recorder: Recorder
    news_ids: list[int]
    hooks: dict[str, str]  # receiver kind -> URL
    stop: threading.Event = field(default_factory=threading.Event)
    rpc_cut: threading.Event = field(default_factory=threading.Event)  # the service's RPC is down


@dataclass
class Resp:
    status: int  # 0: no answer (refused, reset, timed out)
    body: Any
    headers: dict[str, str]
    error: str = ""

    @property
    def code(self) -> str:
        if isinstance(self.body, dict):
            return str(self.body.get("code") or self.body.get("error") or "")
        return ""


class Agent(threading.Thread):
    role = "agent"
    think = (0.3, 1.2)  # seconds between steps

    def __init__(self, n: int, ctx: Ctx) -> None:
        super().__init__(name=f"{self.role}-{n}", daemon=True)
        self.n = n
        self.ctx = ctx
        self.rng = random.Random(n)
        self.session = requests.Session()
        self.wallet: LocalAccount = new_wallet()
        self.ready = False
        self.setup_error = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def setup(self) -> None:
        """Before the clock starts (registration, first deposit)."""

    def step(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        while not self.ctx.stop.is_set():
            try:
                self.step()
            except Exception as exc:  # an agent's own bug must not end the run silently
                self.op("agent_error", error=f"{type(exc).__name__}: {exc}"[:300])
                time.sleep(1)
            self.ctx.stop.wait(self.rng.uniform(*self.think))

    # -- recording ---------------------------------------------------------------------------
    def op(self, kind: str, **fields: Any) -> dict[str, Any]:
        return self.ctx.recorder.add(
            "op", op=kind, t=round(self.ctx.timeline.now(), 3), agent=self.name, role=self.role, **fields
        )

    def http(
        self,
        route: str,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        timeout: float = 30.0,
    ) -> Resp:
        started = self.ctx.timeline.now()
        t0 = time.perf_counter()
        try:
            r = self.session.request(method, self.ctx.base + path, headers=headers, json=body, timeout=timeout)
        except requests.RequestException as exc:
            ms = (time.perf_counter() - t0) * 1000
            error = type(exc).__name__
            self.ctx.recorder.add(
                "req", t=round(started, 3), agent=self.name, route=route, status=0, ms=round(ms, 1), error=error
            )
            return Resp(0, None, {}, error)
        ms = (time.perf_counter() - t0) * 1000
        try:
            parsed: Any = r.json()
        except ValueError:
            parsed = r.text[:300]
        resp = Resp(r.status_code, parsed, {k.lower(): v for k, v in r.headers.items()})
        row: dict[str, Any] = {"t": round(started, 3), "agent": self.name, "route": route, "status": r.status_code}
        row["ms"] = round(ms, 1)
        if r.status_code >= 300 and resp.code:
            row["code"] = resp.code
        if r.status_code >= 500:
            row["detail"] = str(parsed)[:300]
        self.ctx.recorder.add("req", **row)
        return resp

    # -- x402 ------------------------------------------------------------------------------------
    def x402_client(self) -> tuple[x402ClientSync, x402HTTPClientSync]:
        if not hasattr(self, "_x402"):
            client = register_exact_evm_client(x402ClientSync(), EthAccountSigner(self.wallet))
            # A session pack costs more than the client's default $1 cap per payment.
            client.set_spend_controls({"max_amount_per_payment": "$5"})
            self._x402 = (client, x402HTTPClientSync(client))
        return self._x402

    def x402_pay(self, route: str, path: str) -> tuple[str, Resp | None]:
        """One x402 purchase: the challenge, a proof signed by the official client, and the same
        proof sent again on a pending settlement, a 5xx or no answer, until answered (or its
        authorization is about to expire). Returns (outcome, the 200 answer)."""
        client, http = self.x402_client()
        t0 = round(self.ctx.timeline.now(), 3)
        first = self.http(route + " (402 challenge)", "GET", path)
        if first.status != 402:
            self.op("x402", route=route, path=path, outcome="no_challenge", status=first.status, code=first.code)
            return "no_challenge", None
        required = http.get_payment_required_response(lambda k: first.headers.get(k.lower()), first.body)
        payload = client.create_payment_payload(required)
        header = http.encode_payment_signature_header(payload)
        auth = (payload.payload or {}).get("authorization", {})
        nonce = str(auth.get("nonce", ""))
        deadline = time.monotonic() + PROOF_RETRY_SECONDS
        attempts, statuses = 0, []
        outcome, answer = "unanswered", None
        while time.monotonic() < deadline:
            attempts += 1
            resp = self.http(route, "GET", path, headers=header, timeout=60)
            statuses.append(resp.status or resp.error)
            if resp.status == 200:
                outcome, answer = "served", resp
                break
            if resp.status == 402:
                if resp.code == "invalid_exact_evm_nonce_already_used" and attempts > 1:
                    # Another request holds the proof (a killed worker's claim, decided by the
                    # reconciler), or it was served to an answer that was lost: ask again later.
                    outcome = "proof_used"
                    if self.ctx.stop.wait(3):
                        break
                    continue
                outcome = "refused:" + resp.code
                break
            if resp.status in (400, 404, 422):
                outcome = f"refused:{resp.status}"
                break
            # 202 settlement pending, 503 uncharged or collectable, 5xx, no answer: same proof.
            wait = float(resp.headers.get("retry-after", "0") or 0) or self.rng.uniform(1.0, 2.5)
            time.sleep(min(wait, 5.0))
        settle = answer.headers.get("payment-response", "") if answer else ""
        tx = ""
        if answer is not None and settle:
            try:
                tx = http.get_payment_settle_response(lambda k: answer.headers.get(k.lower())).transaction or ""
            except ValueError:
                tx = ""
        self.op(
            "x402",
            t0=t0,
            route=route,
            path=path,
            outcome=outcome,
            payer=self.wallet.address.lower(),
            nonce=nonce,
            amount=int(getattr(required.accepts[0], "amount", 0) or 0),
            attempts=attempts,
            statuses=statuses[-40:],
            tx=tx,
            header=header,
        )
        return outcome, answer

    # -- credits ---------------------------------------------------------------------------------
    def register(self) -> str:
        """Register the wallet: the 401 gives a challenge, the wallet signs it (EIP-191)."""
        for _ in range(10):
            first = self.http("register", "POST", "/api/a2a/account/register", body={"wallet_address": self.wallet.address})
            if first.status == 401 and first.code == "ownership_proof_required":
                signature = self.wallet.sign_message(encode_defunct(text=first.body["message"])).signature
                done = self.http(
                    "register",
                    "POST",
                    "/api/a2a/account/register",
                    body={
                        "wallet_address": self.wallet.address,
                        "nonce": first.body["nonce"],
                        "signature": "0x" + signature.hex().removeprefix("0x"),
                    },
                )
                if done.status in (200, 201):
                    key: str = done.body["api_key"]
                    self.op("register", wallet=self.wallet.address.lower())
                    return key
            time.sleep(1)
        raise RuntimeError(f"{self.name} could not register")

    def deposit(self, amount: int) -> None:
        """A deposit on chain (straight to anvil); the op record says whether the service's RPC
        was cut when it was sent."""
        during = self.ctx.rpc_cut.is_set()
        t = self.ctx.timeline.now()
        try:
            tx = deposit_send(self.ctx.rpc_url, self.wallet, amount)
        except Exception as exc:
            self.op("deposit", outcome="not_sent", amount=amount, error=f"{type(exc).__name__}: {exc}"[:200])
            return
        self.op("deposit", outcome="sent", amount=amount, tx=tx, wallet=self.wallet.address.lower(),
                sent_at=round(t, 3), during_outage=during)

    def balance(self, key: str) -> int | None:
        resp = self.http("account", "GET", "/api/a2a/account", headers={"X-API-Key": key})
        if resp.status != 200:
            return None
        return round(float(resp.body.get("credit_balance_usdc", 0)) * 1_000_000)

    def wait_credited(self, key: str, above: int = 0, timeout: float = 90.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            bal = self.balance(key)
            if bal is not None and bal > above:
                return True
            time.sleep(1.0)
        return False

    def idempotency_key(self) -> str:
        return f"chaos-{self.name}-{uuid.uuid4().hex}"
