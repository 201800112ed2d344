"""The agents' roles, one per way the service sells, and how many of each a run gets.

Adding a payment route (the newer schemes of issue 26, when they exist): write a role here whose
`step` pays by it and records an `op` with what the verification needs (its payer, its id, what
was charged, whether the answer arrived), add it to ROLE_WEIGHTS, and add its money rule to
verify.py's RULES. Nothing else in the harness knows the roles."""

from __future__ import annotations

import threading
import time
from typing import Any

from .agents import DEPOSIT_ATOMIC, TOPUP_BELOW_ATOMIC, Agent, Ctx, Resp
from .stack import INGEST_TOKEN

X402_PRODUCTS = [
    ("x402 paid call", "/api/a2a/x402/payments/dual-rail-status"),
    ("x402 paid call", "/api/a2a/x402/morning-brief"),
]
CREDIT_PATHS = ["/api/a2a/x402/payments/dual-rail-status", "/api/a2a/x402/morning-brief"]
SESSION_SKU = "morning_brief"
# Retries of one credit call with its Idempotency-Key (a 5xx or no answer), then given up (and
# collected after the run if the service kept an answer for it).
IDEMPOTENT_RETRIES = 6


def _charged(resp: Resp) -> int:
    raw = resp.headers.get("x-credit-charged", "0") or "0"
    return round(float(raw) * 1_000_000)


class X402Payer(Agent):
    """Pays each call with x402 `exact` (official client): paid SKUs and news unlocks."""

    role = "x402"

    def step(self) -> None:
        if self.rng.random() < 0.3 and self.ctx.news_ids:
            item = self.rng.choice(self.ctx.news_ids)
            self.x402_pay("x402 news unlock", f"/api/a2a/x402/news/unlock?news_id={item}")
            return
        route, path = self.rng.choice(X402_PRODUCTS)
        self.x402_pay(route, path)


class SessionBuyer(Agent):
    """Buys a desk session pack by x402, then calls a session SKU with the token until it is used up."""

    role = "session"

    def __init__(self, n: int, ctx: Ctx) -> None:
        super().__init__(n, ctx)
        self.token = ""

    def step(self) -> None:
        if not self.token:
            outcome, answer = self.x402_pay("session pack (x402)", "/api/a2a/x402/session/desk-pack")
            if outcome == "served" and answer is not None:
                self.token = answer.body["token"]
                self.op("session_bought", token=self.token, payer=self.wallet.address.lower())
            return
        resp = self.http(
            "session call", "GET", f"/api/a2a/session/call/{SESSION_SKU}", headers={"X-Session-Token": self.token}
        )
        self.op("session_call", token=self.token, status=resp.status, code=resp.code)
        if resp.status == 402:
            self.token = ""  # used up: buy another pack


class CreditAgent(Agent):
    """A prepaid account: registered with a signed challenge, funded by a deposit on chain,
    topped up by another when its balance runs low. `hook`: the receiver its webhook
    subscription (pair_arb_alert) points at, if it has one."""

    role = "credits"
    idempotent = True

    def __init__(self, n: int, ctx: Ctx, hook: str = "") -> None:
        super().__init__(n, ctx)
        self.hook = hook
        self.key = ""
        self.balance_seen = 0
        self.last_topup = 0.0

    def setup(self) -> None:
        """Register (the first deposit, sent before, is credited once the wallet proves it is
        its owner) and subscribe the webhook."""
        self.key = self.register()
        if not self.wait_credited(self.key):
            raise RuntimeError(f"{self.name}: the first deposit was not credited within 90 s")
        self.balance_seen = DEPOSIT_ATOMIC
        if self.hook:
            resp = self.http(
                "webhook subscribe",
                "POST",
                "/api/a2a/account/webhooks/register",
                headers={"X-API-Key": self.key},
                body={"url": self.ctx.hooks[self.hook], "events": ["pair_arb_alert"], "description": self.hook},
            )
            if resp.status != 201:
                raise RuntimeError(f"{self.name}: webhook subscription refused: {resp.status} {resp.body}")
            self.op("subscribed", hook=self.hook, subscription=resp.body["id"], wallet=self.wallet.address.lower())

    def topup_if_low(self, force: bool = False) -> None:
        now = time.monotonic()
        if (force or self.balance_seen < TOPUP_BELOW_ATOMIC) and now - self.last_topup > 20:
            self.last_topup = now
            self.deposit(DEPOSIT_ATOMIC)

    def paid(self, route: str, method: str, path: str) -> None:
        """One credit call; with an Idempotency-Key it is retried with the same key until answered."""
        headers = {"X-API-Key": self.key}
        ikey = ""
        if self.idempotent:
            ikey = self.idempotency_key()
            headers["Idempotency-Key"] = ikey
        attempts, outcome, charged, statuses = 0, "unanswered", 0, []
        t0 = round(self.ctx.timeline.now(), 3)
        while attempts < (IDEMPOTENT_RETRIES if self.idempotent else 1):
            attempts += 1
            resp = self.http(route, method, path, headers=headers)
            statuses.append(resp.status or resp.error)
            if resp.status == 200:
                outcome, charged = "served", _charged(resp)
                balance = resp.headers.get("x-credit-balance")
                if balance:
                    self.balance_seen = round(float(balance) * 1_000_000)
                break
            if resp.status == 402:
                outcome = "refused:" + (resp.code or "402")
                if resp.code == "insufficient_credit":
                    self.balance_seen = 0
                break
            if 400 <= resp.status < 500:
                outcome = f"refused:{resp.status}:{resp.code}"
                break
            if resp.status == 503 and isinstance(resp.body, dict) and resp.body.get("charged") is False:
                outcome = "unavailable_uncharged"
                if not self.idempotent:
                    break
            else:
                outcome = "unanswered" if resp.status == 0 else f"error:{resp.status}"
            if self.ctx.stop.is_set() and attempts >= 2:
                break
            time.sleep(self.rng.uniform(1.0, 2.0))
        self.op(
            "credit",
            t0=t0,
            mode="idempotent" if self.idempotent else "fast",
            route=route,
            method=method,
            path=path,
            key=ikey,
            wallet=self.wallet.address.lower(),
            outcome=outcome,
            charged=charged,
            attempts=attempts,
            statuses=statuses,
        )
        self.topup_if_low()

    def step(self) -> None:
        path = self.rng.choice(CREDIT_PATHS)
        label = "credits (Idempotency-Key)" if self.idempotent else "credits (fast path)"
        self.paid(label, "GET", path)


class FastCreditAgent(CreditAgent):
    """Credit calls without an Idempotency-Key: the fast path in front of Django."""

    role = "credits_fast"
    idempotent = False


class NewsUnlocker(CreditAgent):
    """Unlocks news items with credits (each paid once per account, free again after), sometimes
    twice at the same moment (two requests, two Idempotency-Keys): one charge at most."""

    role = "news"

    def step(self) -> None:
        item = self.rng.choice(self.ctx.news_ids)
        path = f"/api/a2a/news/{item}/unlock"
        if self.rng.random() < 0.25:
            twin = threading.Thread(target=self.paid, args=("news unlock (credits)", "POST", path), daemon=True)
            twin.start()
            self.paid("news unlock (credits)", "POST", path)
            twin.join(timeout=120)
        else:
            self.paid("news unlock (credits)", "POST", path)


class Depositor(CreditAgent):
    """Sends small deposits on chain every so often, and one at once whenever the service's
    chain RPC is cut (it must be credited, once, after the RPC is back); spends a little."""

    role = "depositor"
    idempotent = False
    SMALL_ATOMIC = 1_000_000

    def run(self) -> None:
        next_deposit = time.monotonic() + self.rng.uniform(5, 15)
        outage_seen = False
        while not self.ctx.stop.is_set():
            cut = self.ctx.rpc_cut.is_set()
            if cut and not outage_seen:
                self.deposit(self.SMALL_ATOMIC)
            outage_seen = cut
            if time.monotonic() >= next_deposit:
                self.deposit(self.SMALL_ATOMIC)
                next_deposit = time.monotonic() + self.rng.uniform(15, 30)
            if self.rng.random() < 0.3:
                try:
                    self.paid("credits (fast path)", "GET", CREDIT_PATHS[0])
                except Exception as exc:
                    self.op("agent_error", error=f"{type(exc).__name__}: {exc}"[:300])
            self.ctx.stop.wait(1.0)


class Publisher(Agent):
    """Ingests spread readings (X-Ingest-Token) that cross PAIR_ARB_ALERT_BPS every other time:
    each crossing is a pair_arb_alert event, charged per delivery to each subscription."""

    role = "publisher"
    think = (2.0, 3.0)

    def __init__(self, n: int, ctx: Ctx) -> None:
        super().__init__(n, ctx)
        self.high = False

    def step(self) -> None:
        self.high = not self.high
        body: dict[str, Any] = {
            "readings": [
                {"symbol": "CHAOS/USDT", "venue_a": "venue-a", "venue_b": "venue-b", "spread_bps": 80 if self.high else 5}
            ]
        }
        resp = self.http(
            "spread ingest (events)",
            "POST",
            "/api/a2a/internal/spread-snapshot",
            headers={"X-Ingest-Token": INGEST_TOKEN},
            body=body,
        )
        self.op("publish", high=self.high, status=resp.status)


# role -> (class, share of the agents); the publisher is one agent whatever the count.
ROLE_WEIGHTS: dict[str, tuple[type[Agent], float]] = {
    "x402": (X402Payer, 0.26),
    "session": (SessionBuyer, 0.14),
    "credits": (CreditAgent, 0.18),
    "credits_fast": (FastCreditAgent, 0.18),
    "news": (NewsUnlocker, 0.14),
    "depositor": (Depositor, 0.10),
}
HOOK_KINDS = ("ok", "slow", "fail")


def role_counts(total: int) -> dict[str, int]:
    """At least one agent per role (and one publisher); the rest by weight, largest remainder."""
    roles = list(ROLE_WEIGHTS)
    if total < len(roles) + 1:
        raise ValueError(f"at least {len(roles) + 1} agents: one per role and the publisher")
    rest = total - 1 - len(roles)
    shares = {r: ROLE_WEIGHTS[r][1] * rest for r in roles}
    counts = {r: 1 + int(shares[r]) for r in roles}
    left = total - 1 - sum(counts.values())
    for r in sorted(roles, key=lambda r: shares[r] - int(shares[r]), reverse=True)[:left]:
        counts[r] += 1
    return {**counts, "publisher": 1}


def agents_build(total: int, ctx: Ctx) -> list[Agent]:
    """The agents of a run. The first credit account of each credit role holds a webhook
    subscription, one per receiver (ok, slow, failing)."""
    agents: list[Agent] = []
    hooks = dict(zip(("credits", "credits_fast", "news"), HOOK_KINDS, strict=True))
    n = 0
    for role, count in role_counts(total).items():
        for i in range(count):
            n += 1
            if role == "publisher":
                agents.append(Publisher(n, ctx))
            elif role in hooks and i == 0:
                agents.append(ROLE_WEIGHTS[role][0](n, ctx, hook=hooks[role]))  # type: ignore[call-arg]
            else:
                agents.append(ROLE_WEIGHTS[role][0](n, ctx))
    return agents
