"""The money rules, checked after the run from three records that do not depend on each other:
the service's database (dumped by db.py in a Django subprocess), the chain (USDC Transfer and
AuthorizationUsed logs read from anvil) and what the agents recorded they sent and received.

A charge whose answer the agent never received, because the connection died while the web
worker that held it was killed with SIGKILL, is counted apart ("lost in flight at a kill"): the
issue names dropped in-flight requests as the expected cost of that fault. Any other charge
without an answer, collection, release or refund breaks the first rule."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

WEBHOOK_DEBIT = "webhook "
WEBHOOK_REFUND = "undelivered webhook "


@dataclass
class Evidence:
    dump: dict[str, Any]
    transfers: list[dict[str, Any]]  # USDC transfers to the treasury (chain)
    authorizations: dict[tuple[str, str], str]  # (payer, nonce) spent on chain -> tx
    ops: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    arrivals: dict[str, set[str]]  # receiver kind -> webhook-ids it was sent
    hook_urls: dict[str, str]  # receiver kind -> URL
    kills: list[float]  # when a web worker was killed (Timeline seconds)
    collected: set[str] = field(default_factory=set)  # x402 nonces / idempotency keys collected after the run


@dataclass
class Rule:
    name: str
    held: bool = True
    lines: list[str] = field(default_factory=list)

    def fail(self, line: str) -> None:
        self.held = False
        self.lines.append("BROKEN: " + line)

    def note(self, line: str) -> None:
        self.lines.append(line)


def _in_flight_at_kill(ev: Evidence, agent: str, t_from: float, t_to: float) -> bool:
    """Whether one of the agent's requests between t_from and t_to got no answer while a web
    worker was being killed (its connection died with the worker)."""
    for r in ev.requests:
        if r["agent"] != agent or r["status"] != 0 or not (t_from - 0.01 <= r["t"] <= t_to + 0.01):
            continue
        end = r["t"] + r["ms"] / 1000
        if any(r["t"] - 1.0 <= k <= end + 1.0 for k in ev.kills):
            return True
    return False


def _accounts(ev: Evidence) -> dict[str, int]:
    return {a["wallet"]: a["id"] for a in ev.dump["accounts"]}


def rule_x402(ev: Evidence) -> Rule:
    rule = Rule("x402: every authorization spent on chain is one settled payment, delivered to its payer")
    payments = ev.dump["payments"]
    by_key = {(p["payer"], p["nonce"]): p for p in payments}
    transfers = {t["tx"]: t for t in ev.transfers}
    states = Counter(p["state"] for p in payments)
    rule.note(f"payments by state: {dict(states)}; authorizations spent on chain: {len(ev.authorizations)}")
    for key, tx in ev.authorizations.items():
        p = by_key.get(key)
        if p is None or p["state"] != "settled":
            rule.fail(f"authorization {key[1][:12]}… of {key[0]} spent on chain ({tx}) but its payment is "
                      f"{p['state'] if p else 'missing'}")
    txs = Counter(p["tx"] for p in payments if p["state"] == "settled")
    for p in payments:
        if p["state"] in ("claimed", "settlement_pending"):
            rule.fail(f"payment {p['id']} ({p['sku']}) still {p['state']} after the drain")
        if p["state"] != "settled":
            continue
        t = transfers.get(p["tx"])
        if t is None or t["from"] != p["payer"] or t["amount"] != p["amount"]:
            rule.fail(f"settled payment {p['id']} has no matching transfer on chain ({p['tx']})")
        if txs[p["tx"]] > 1:
            rule.fail(f"transaction {p['tx']} settles {txs[p['tx']]} payments")
        if (p["payer"], p["nonce"]) not in ev.authorizations:
            rule.fail(f"settled payment {p['id']} whose authorization is not spent on chain")
    served = {(o["payer"], o["nonce"]): o for o in ev.ops if o["op"] == "x402" and o["outcome"] == "served"}
    for key, o in served.items():
        p = by_key.get(key)
        if p is None or p["state"] != "settled" or (o["tx"] and o["tx"] != p["tx"]):
            rule.fail(f"a 200 x402 answer ({o['path']}) with no settled payment of its proof")
    lost_at_kill = undelivered = 0
    attempted = {(o["payer"], o["nonce"]): o for o in ev.ops if o["op"] == "x402" and o.get("nonce")}
    for key, p in by_key.items():
        if p["state"] != "settled" or key in served or p["nonce"] in ev.collected:
            continue
        tried = attempted.get(key)
        if not p["delivered"]:
            undelivered += 1
            rule.fail(f"settled payment {p['id']} ({p['sku']}) never delivered, not collectable")
        elif tried is not None and _in_flight_at_kill(ev, tried["agent"], tried["t0"], tried["t"]):
            lost_at_kill += 1
        else:
            rule.fail(f"settled payment {p['id']} ({p['sku']}) marked delivered but its payer never got the answer")
    paid = sum(p["amount"] for p in payments if p["state"] == "settled")
    rule.note(f"{len(served)} answers of 200 <-> settled payments; {paid / 1e6:.2f} USDC settled; "
              f"{len(ev.collected & {k[1] for k in by_key})} collected after the run with the same proof; "
              f"{lost_at_kill} answers lost in flight at a web-worker kill")
    errors = Counter(p["error"][:110] for p in payments if p["state"] == "failed")
    if errors:
        rule.note(f"failed payments (nothing on chain for them, checked above) by error: {dict(errors.most_common(4))}")
    refusals = Counter(o["outcome"] for o in ev.ops if o["op"] == "x402" and o["outcome"] != "served")
    if refusals:
        rule.note(f"x402 calls not served (nothing kept unless listed above): {dict(refusals)}")
    return rule


def _credit_debits(ev: Evidence) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in ev.dump["ledger"]:
        if e["kind"] == "sku_call" and not e["reference"].startswith(WEBHOOK_DEBIT):
            out[e["account"]].append(e)
    return out


def _charged_header(headers: dict[str, str]) -> int:
    return round(float(headers.get("X-Credit-Charged", "0") or 0) * 1_000_000)


def rule_credits(ev: Evidence) -> Rule:
    rule = Rule("credits: every debit is one answered (or collectable) call, to the atomic unit; no call debited twice")
    accounts = _accounts(ev)
    debits = _credit_debits(ev)
    stored: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in ev.dump["idempotent"]:
        stored[c["account"]].append(c)
    credit_ops = [o for o in ev.ops if o["op"] == "credit"]
    by_wallet: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for o in credit_ops:
        by_wallet[o["wallet"]].append(o)
    idem_served = {o["key"]: o for o in credit_ops if o["mode"] == "idempotent" and o["outcome"] == "served"}
    lost_at_kill = fast_excess = 0
    for wallet, ops in by_wallet.items():
        account = accounts.get(wallet)
        if account is None:
            continue
        rows = debits.get(account, [])
        debited = -sum(r["amount"] for r in rows)
        if ops[0]["mode"] == "idempotent":
            kept = sum(_charged_header(c["headers"]) for c in stored[account])
            charged_rows = [c for c in stored[account] if _charged_header(c["headers"])]
            if debited != kept or len(rows) != len(charged_rows):
                rule.fail(f"account {account}: {len(rows)} debits ({debited}) but {len(charged_rows)} stored "
                          f"answers charging {kept}")
            for c in stored[account]:
                answer = idem_served.get(c["key"])
                if answer is None and c["key"] not in ev.collected:
                    rule.fail(f"account {account}: a stored paid answer ({c['path']}) its agent never received")
                elif answer is not None and answer["charged"] != _charged_header(c["headers"]):
                    rule.fail(f"account {account}: answer said {answer['charged']} charged, stored {c['headers']}")
        else:
            answered = sum(o["charged"] for o in ops if o["outcome"] == "served")
            lost = [o for o in ops if o["outcome"].startswith(("unanswered", "error:"))]
            extra_rows = len(rows) - sum(1 for o in ops if o["outcome"] == "served" and o["charged"])
            if debited < answered:
                rule.note(f"account {account}: answers say {answered} charged, ledger {debited} (calls left free)")
            if extra_rows > 0:
                fast_excess += extra_rows
                killed = sum(1 for o in lost if _in_flight_at_kill(ev, o["agent"], o["t0"], o["t"]))
                lost_at_kill += min(extra_rows, killed)
                if extra_rows > killed:
                    rule.fail(f"account {account}: {extra_rows} debits without an answer, "
                              f"{killed} of its calls died with a killed web worker")
    n_served = sum(1 for o in credit_ops if o["outcome"] == "served")
    total = -sum(r["amount"] for rows in debits.values() for r in rows)
    collected = ev.collected & {c["key"] for c in ev.dump["idempotent"]}
    rule.note(f"{n_served} credit answers of 200, {sum(len(r) for r in debits.values())} debit rows "
              f"({total / 1e6:.6f} USDC); {len(collected)} answers collected after the run by their "
              f"Idempotency-Key; fast path: {fast_excess} debits whose answer was lost "
              f"({lost_at_kill} in flight at a web-worker kill)")
    outcomes = Counter(o["outcome"].split(":")[0] + ":" + o["mode"] for o in credit_ops)
    rule.note(f"credit call outcomes: {dict(outcomes)}")
    return rule


def rule_news(ev: Evidence) -> Rule:
    rule = Rule("news unlocks: one charge per account and item (concurrent twins included), free after")
    owned = {(u["account"], u["item"]) for u in ev.dump["news_unlocks"]}
    charges: Counter[tuple[int, int]] = Counter()
    for rows in _credit_debits(ev).values():
        for r in rows:
            ref = r["reference"].split(" ")[0]
            if ref.startswith("/api/a2a/news/") and ref.endswith("/unlock"):
                charges[(r["account"], int(ref.split("/")[4]))] += 1
    for key, n in charges.items():
        if n > 1:
            rule.fail(f"account {key[0]} charged {n} times for news item {key[1]}")
        if key not in owned:
            rule.fail(f"account {key[0]} charged for item {key[1]} without owning it")
    for key in owned - set(charges):
        rule.fail(f"account {key[0]} owns item {key[1]} without a charge")
    rule.note(f"{len(owned)} (account, item) unlocks, {sum(charges.values())} charges")
    return rule


def rule_sessions(ev: Evidence) -> Rule:
    rule = Rule("sessions: each call used is one session-call row within the pack; each pack paid is one session")
    calls = [o for o in ev.ops if o["op"] == "session_call"]
    served: Counter[str] = Counter(o["token"] for o in calls if o["status"] == 200)
    lost = defaultdict(list)
    for o in calls:
        if o["status"] == 0 or o["status"] >= 500:
            lost[o["token"]].append(o)
    at_kill = 0
    for s in ev.dump["sessions"]:
        if s["calls"] != s["calls_used"] or s["calls_used"] > s["calls_total"]:
            rule.fail(f"session of {s['buyer']}: {s['calls_used']} used, {s['calls']} call rows, {s['calls_total']} total")
        extra = s["calls_used"] - served[s["token"]]
        if extra < 0:
            rule.fail(f"session of {s['buyer']}: {served[s['token']]} answers but {s['calls_used']} calls used")
        elif extra:
            killed = sum(1 for o in lost[s["token"]] if _in_flight_at_kill(ev, o["agent"], o["t"] - 1, o["t"] + 1))
            at_kill += min(extra, killed)
            if extra > killed:
                rule.fail(f"session of {s['buyer']}: {extra} calls used without an answer ({killed} died at a kill)")
    packs = Counter(p["payer"] for p in ev.dump["payments"] if p["sku"] == "m2m_session_desk" and p["state"] == "settled")
    sessions = Counter(s["buyer"] for s in ev.dump["sessions"])
    for payer in set(packs) | set(sessions):
        if packs[payer] != sessions[payer]:
            rule.fail(f"{payer}: {packs[payer]} packs paid, {sessions[payer]} sessions")
    rule.note(f"{sum(packs.values())} packs paid, {len(ev.dump['sessions'])} sessions, "
              f"{sum(served.values())} session answers of 200, {at_kill} calls lost in flight at a web-worker kill")
    return rule


def rule_deposits(ev: Evidence) -> Rule:
    rule = Rule("deposits: every deposit sent on chain is credited exactly once (those sent while the RPC was cut included)")
    sent = {o["tx"]: o for o in ev.ops if o["op"] == "deposit" and o["outcome"] == "sent"}
    x402_payers = {p["payer"] for p in ev.dump["payments"]}
    deposits = defaultdict(list)
    for d in ev.dump["deposits"]:
        deposits[d["tx"]].append(d)
    credit_rows: Counter[int] = Counter()
    amounts: dict[int, int] = {}
    for e in ev.dump["ledger"]:
        if e["kind"] == "deposit" and e["deposit"] is not None:
            credit_rows[e["deposit"]] += 1
            amounts[e["deposit"]] = e["amount"]
    chain_deposits = [t for t in ev.transfers if t["tx"] in sent or t["from"] not in x402_payers]
    for t in chain_deposits:
        rows = [d for d in deposits.get(t["tx"], []) if d["state"] != "reorged"]
        if len(rows) != 1:
            rule.fail(f"transfer {t['tx']} from {t['from']}: {len(rows)} deposit rows")
            continue
        d = rows[0]
        if d["state"] != "credited" or credit_rows[d["id"]] != 1 or amounts.get(d["id"]) != t["amount"]:
            rule.fail(f"deposit {t['tx']}: {d['state']}, {credit_rows[d['id']]} ledger rows "
                      f"({amounts.get(d['id'])} for {t['amount']})")
    for tx in sent:
        if tx not in {t["tx"] for t in ev.transfers}:
            rule.fail(f"deposit {tx} an agent sent is not on chain")
    credited_x402 = [d for d in ev.dump["deposits"] if d["from"] in x402_payers and d["state"] == "credited"]
    if credited_x402:
        rule.fail(f"{len(credited_x402)} x402 settlements credited as deposits")
    during = [o for o in sent.values() if o.get("during_outage")]
    rule.note(f"{len(chain_deposits)} deposits on chain ({sum(t['amount'] for t in chain_deposits) / 1e6:.2f} USDC), "
              f"{sum(1 for n in credit_rows.values() if n == 1)} credited once; {len(during)} sent while the RPC was cut")
    return rule


def rule_webhooks(ev: Evidence) -> Rule:
    rule = Rule("webhooks: every charged delivery delivered or dead-lettered with its refund; charged once")
    accounts_of_url = {v: k for k, v in ev.hook_urls.items()}
    refunds: Counter[tuple[int, str]] = Counter()
    debits: Counter[tuple[int, str]] = Counter()
    for e in ev.dump["ledger"]:
        if e["reference"].startswith(WEBHOOK_REFUND):
            refunds[(e["account"], e["reference"].split(" ")[-1])] += 1
        elif e["reference"].startswith(WEBHOOK_DEBIT) and e["kind"] == "sku_call":
            debits[(e["account"], e["reference"].split(" ")[-1])] += 1
    states: Counter[str] = Counter()
    for d in ev.dump["deliveries"]:
        key = (d["account"], d["message_id"])
        kind = accounts_of_url.get(d["url"], "?")
        states[f"{kind}:{d['state']}"] += 1
        if d["state"] in ("pending", "delivering"):
            rule.fail(f"delivery {d['id']} to the {kind} receiver still {d['state']} after the drain")
        if d["state"] == "dead":
            if d["charged"] != 0 or refunds[key] != 1 or debits[key] != 1:
                rule.fail(f"dead delivery {d['id']}: charge left {d['charged']}, {refunds[key]} refunds, {debits[key]} debits")
        elif d["state"] == "delivered":
            if debits[key] != 1 or refunds[key]:
                rule.fail(f"delivered {d['id']}: {debits[key]} debits, {refunds[key]} refunds")
            if d["message_id"] not in ev.arrivals.get(kind, set()):
                rule.fail(f"delivery {d['id']} marked delivered, the {kind} receiver never saw it")
        elif d["state"] == "skipped" and debits[key]:
            rule.fail(f"skipped delivery {d['id']} was charged")
    if any(d["state"] == "delivered" for d in ev.dump["deliveries"] if accounts_of_url.get(d["url"]) == "fail"):
        rule.fail("a delivery to the failing receiver is marked delivered")
    rule.note(f"deliveries by receiver and state: {dict(sorted(states.items()))}; "
              f"{sum(debits.values())} charges, {sum(refunds.values())} refunds")
    return rule


def rule_ledger(ev: Evidence) -> Rule:
    rule = Rule("ledger_audit(): every balance equals its ledger sum")
    audit = ev.dump["ledger_audit"]
    if audit:
        rule.fail(f"{len(audit)} accounts differ (account, balance, sum): {audit[:10]}")
    else:
        rule.note(f"empty ({len(ev.dump['accounts'])} accounts, {len(ev.dump['ledger'])} ledger rows)")
    return rule


# Each payment route's rule; a new route (issue 26's schemes) adds its own here.
RULES = [rule_x402, rule_credits, rule_news, rule_sessions, rule_deposits, rule_webhooks, rule_ledger]


def numbers(ev: Evidence) -> dict[str, int]:
    """How much each rule had to check (a run where a route did nothing proves nothing about it)."""
    d = ev.dump
    return {
        "x402_settled": sum(1 for p in d["payments"] if p["state"] == "settled"),
        "x402_answers": sum(1 for o in ev.ops if o["op"] == "x402" and o["outcome"] == "served"),
        "credit_debits": sum(len(rows) for rows in _credit_debits(ev).values()),
        "credit_answers": sum(1 for o in ev.ops if o["op"] == "credit" and o["outcome"] == "served"),
        "news_unlocks": len(d["news_unlocks"]),
        "sessions": len(d["sessions"]),
        "session_calls": sum(s["calls_used"] for s in d["sessions"]),
        "deposits_sent": sum(1 for o in ev.ops if o["op"] == "deposit" and o["outcome"] == "sent"),
        "deposits_credited": sum(1 for x in d["deposits"] if x["state"] == "credited"),
        "deposits_sent_rpc_cut": sum(1 for o in ev.ops if o["op"] == "deposit" and o.get("during_outage")),
        "webhooks_delivered": sum(1 for x in d["deliveries"] if x["state"] == "delivered"),
        "webhooks_dead": sum(1 for x in d["deliveries"] if x["state"] == "dead"),
        "webhook_refunds": sum(1 for e in d["ledger"] if e["reference"].startswith(WEBHOOK_REFUND)),
    }


def verify(ev: Evidence) -> list[Rule]:
    results = []
    for check in RULES:
        try:
            results.append(check(ev))
        except Exception as exc:  # a check that cannot run is a failure, never a pass
            r = Rule(check.__name__)
            r.fail(f"the check itself failed: {type(exc).__name__}: {exc}")
            results.append(r)
    return results
