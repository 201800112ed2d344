"""One chaos run, start to end: the stack, the agents' wallets and accounts, the load with the
faults on their schedule, the drain (what the faults left undecided is decided: claims, pending
deliveries, deposits the watcher had not read yet), the collection of paid answers the agents
did not receive (with the same proof or Idempotency-Key), then the verification and the report.
Everything it started is stopped on the way out, whatever happened."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import requests

from .agents import DEPOSIT_ATOMIC, PROOF_RETRY_SECONDS, Agent, Ctx, Recorder
from .chain import Chain, TcpProxy
from .faults import FAULTS, Faults, Services
from .receivers import KINDS, Receiver
from .report import log_findings, refusals_by_phase, rules_text, server_errors, table
from .roles import CreditAgent, agents_build, role_counts
from .stack import (
    DB_NAME,
    ROOT,
    Ports,
    Postgres,
    Redis,
    Supervisor,
    Timeline,
    service_commands,
    service_env,
)
from .verify import Evidence, Rule, numbers, verify

USDC_PER_WALLET = 200_000_000


@dataclass
class Options:
    agents: int = 50
    minutes: float = 5.0
    faults: list[str] = field(default_factory=lambda: list(FAULTS))
    rpc_outage: float = 30.0
    port_base: int | None = 8210  # None: free ports
    drain: float = 150.0
    web_workers: int = 2
    web_threads: int = 4
    news_items: int = 60
    # The webhook retry schedule (Standard Webhooks', ~27 h in all) compressed so that the
    # failing receiver's deliveries reach their dead letter within the drain (0.0005: ~50 s).
    webhook_retry_scale: float = 0.0005
    out: Path = ROOT / ".run" / "chaos"


@dataclass
class Outcome:
    rules: list[Rule]
    numbers: dict[str, int]
    run_dir: Path
    text: str

    @property
    def money_ok(self) -> bool:
        return all(r.held for r in self.rules)


def _db_tool(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "a2a_service.scripts.chaos.db", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"db {args[0]} failed: {done.stderr.strip()[-1500:]}")
    return done.stdout


def _wait_health(base: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(base + "/api/a2a/program/health", timeout=5).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the service did not answer health within {timeout:.0f} s")


def _undecided(db_url: str, deposit_txs: set[str]) -> dict[str, int]:
    """What the drain waits for: deliveries not final, payments not decided, deposits not credited."""
    with psycopg.connect(db_url, connect_timeout=5) as conn:
        deliveries = conn.execute(
            "SELECT count(*) FROM webhooks_webhookdelivery WHERE state IN ('pending', 'delivering')"
        ).fetchone()
        payments = conn.execute(
            "SELECT count(*) FROM billing_payment WHERE state IN ('claimed', 'settlement_pending')"
        ).fetchone()
        credited = {row[0] for row in conn.execute("SELECT tx_hash FROM billing_deposit WHERE state = 'credited'")}
    return {
        "deliveries": int(deliveries[0]) if deliveries else 0,
        "payments": int(payments[0]) if payments else 0,
        "deposits": len(deposit_txs - credited),
    }


def _drain(db_url: str, recorder: Recorder, timeline: Timeline, seconds: float) -> dict[str, int]:
    deadline = time.monotonic() + seconds
    left: dict[str, int] = {}
    while time.monotonic() < deadline:
        sent = {o["tx"] for o in recorder.ops if o["op"] == "deposit" and o["outcome"] == "sent"}
        try:
            left = _undecided(db_url, sent)
        except psycopg.Error as exc:
            left = {"database": 1}
            timeline.note("drain", f"database not answering: {exc}")
        if not any(left.values()):
            timeline.note("drain", "nothing left undecided")
            return left
        time.sleep(3)
    timeline.note("drain", f"gave up after {seconds:.0f} s with {left} undecided")
    return left


def _collect(agents: list[Agent], dump: dict[str, Any], recorder: Recorder) -> set[str]:
    """Paid answers the agents did not receive, asked for again the way each route allows:
    an x402 proof whose payment settled but was not delivered; a credit call whose answer the
    service stored under its Idempotency-Key."""
    by_name = {a.name: a for a in agents}
    collected: set[str] = set()
    payments = {(p["payer"], p["nonce"]): p for p in dump["payments"]}
    for o in [o for o in recorder.ops if o["op"] == "x402" and o["outcome"] != "served" and o.get("header")]:
        p = payments.get((o["payer"], o["nonce"]))
        if p is None or p["state"] != "settled" or p["delivered"]:
            continue
        resp = by_name[o["agent"]].http("collect (x402 proof)", "GET", o["path"], headers=o["header"], timeout=60)
        if resp.status == 200:
            collected.add(o["nonce"])
    served = {o["key"] for o in recorder.ops if o["op"] == "credit" and o["outcome"] == "served" and o["key"]}
    stored = {c["key"] for c in dump["idempotent"]}
    for o in [o for o in recorder.ops if o["op"] == "credit" and o["key"] in stored - served]:
        agent = by_name[o["agent"]]
        assert isinstance(agent, CreditAgent)
        resp = agent.http(
            "collect (Idempotency-Key)", o["method"], o["path"],
            headers={"X-API-Key": agent.key, "Idempotency-Key": o["key"]},
        )
        if resp.status == 200:
            collected.add(o["key"])
    return collected


def run(opts: Options) -> Outcome:
    run_dir = opts.out / time.strftime("%Y%m%d-%H%M%S")
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (run_dir / "state").mkdir(exist_ok=True)
    timeline = Timeline()
    ports = Ports.from_base(opts.port_base) if opts.port_base is not None else Ports.free()
    if busy := ports.busy():
        raise RuntimeError(f"ports already in use: {busy} (another run? --port-base to move)")
    load_seconds = opts.minutes * 60
    counts = role_counts(opts.agents)
    print(f"chaos run in {run_dir}: {opts.agents} agents {counts}, {load_seconds:.0f} s, faults {opts.faults}")
    pg: Postgres | None = None
    redis: Redis | None = None
    chain: Chain | None = None
    proxy: TcpProxy | None = None
    supervisor: Supervisor | None = None
    receivers: dict[str, Receiver] = {}
    recorder = Recorder(run_dir / "answers.jsonl", timeline)
    agents: list[Agent] = []
    ctx: Ctx | None = None
    setup: subprocess.Popen[str] | None = None
    try:
        pg = Postgres(ports.postgres)
        pg.init()
        pg.start()
        pg.create_db(DB_NAME)
        redis = Redis(ports.redis, logs / "redis.log")
        redis.start()
        chain = Chain(ports.anvil)
        proxy = TcpProxy(ports.rpc_proxy, ports.anvil)
        proxy.restore()
        env = service_env(ports, run_dir, database_url=pg.url(), redis_url=redis.url())
        env["WEBHOOK_RETRY_SCALE"] = str(opts.webhook_retry_scale)
        timeline.note("setup", "database, Redis, chain up; migrating and seeding while the service starts")
        supervisor = Supervisor(
            service_commands(ports.web, opts.web_workers, opts.web_threads, run_dir), env, logs, timeline
        )
        # The web server and the workers import Django while the database is migrated (nothing
        # reaches them before beat starts and health answers); beat reads its schedule from the
        # migrated tables, so it starts after.
        supervisor.start_all(["web", "worker", "webhooks"])
        setup = subprocess.Popen(
            [sys.executable, "-m", "a2a_service.scripts.chaos.db", "setup", str(opts.news_items)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        hook_ports = {"ok": ports.hook_ok, "slow": ports.hook_slow, "fail": ports.hook_fail}
        receivers = {kind: Receiver(kind, hook_ports[kind]) for kind in KINDS}
        base = f"http://127.0.0.1:{ports.web}"
        ctx = Ctx(base=base, rpc_url=chain.url, timeline=timeline, recorder=recorder,
                  news_ids=[], hooks={k: r.url for k, r in receivers.items()})
        agents = agents_build(opts.agents, ctx)
        payers = [a.wallet for a in agents if a.role in ("x402", "session")]
        spenders = [a for a in agents if isinstance(a, CreditAgent)]
        chain.fund(payers, USDC_PER_WALLET, gas=False)
        chain.fund([a.wallet for a in spenders], USDC_PER_WALLET, gas=True)
        # Each credit account's first deposit goes out before its wallet is registered (before
        # the service even serves): the watcher keeps it unmatched, registration credits it.
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda a: a.deposit(DEPOSIT_ATOMIC), spenders))
        chain.interval_mining(1)
        assert setup.stdout is not None
        for line in setup.stdout:
            if line.strip() == "migrated":
                supervisor.start_all()  # beat: its tables are there
                break
        out, err = setup.communicate(timeout=600)
        if setup.returncode != 0:
            raise RuntimeError(f"migrate/seed failed: {err.strip()[-1500:]}")
        ctx.news_ids[:] = json.loads(out.strip().splitlines()[-1])["news_ids"]
        timeline.note("setup", "migrated and seeded; wallets funded, first deposits sent")
        _wait_health(base)
        timeline.note("setup", "service up; agents register")
        with ThreadPoolExecutor(max_workers=16) as pool:
            failures = [f.exception() for f in [pool.submit(a.setup) for a in agents]]
        if errors := [str(e) for e in failures if e is not None]:
            raise RuntimeError(f"agent setup failed: {errors[:3]}")
        timeline.note("load", f"{len(agents)} agents for {load_seconds:.0f} s")
        load_start = timeline.now()
        faults = Faults(
            Services(supervisor, pg, redis, proxy, ctx.rpc_cut), timeline, opts.faults,
            load_seconds=load_seconds, rpc_outage_seconds=opts.rpc_outage,
        )
        faults.start()
        for a in agents:
            a.start()
        ctx.stop.wait(load_seconds)
        load_end = timeline.now()
        ctx.stop.set()
        timeline.note("load", "stopped; waiting for the agents' last calls")
        faults.join(timeout=opts.rpc_outage + 120)
        for a in agents:
            a.join(timeout=PROOF_RETRY_SECONDS + 30)
        _drain(pg.url(), recorder, timeline, opts.drain)
        dump_path = run_dir / "db.json"
        _db_tool(env, "dump", str(dump_path))
        collected = _collect(agents, json.loads(dump_path.read_text()), recorder)
        if collected:
            timeline.note("collect", f"{len(collected)} paid answers collected after the run")
            _db_tool(env, "dump", str(dump_path))
        dump = json.loads(dump_path.read_text())
        windows = faults.close_windows(load_end)
        evidence = Evidence(
            dump=dump,
            transfers=chain.treasury_transfers(),
            authorizations=chain.authorizations_used(),
            ops=recorder.ops,
            requests=recorder.requests,
            arrivals={k: r.ids() for k, r in receivers.items()},
            hook_urls={k: r.url for k, r in receivers.items()},
            kills=[w.start for w in windows if w.name == "web_kill"],
            collected=collected,
        )
        rules = verify(evidence)
        lines = [
            f"== throughput and latency per route: calm and each fault ({opts.agents} agents, {load_seconds:.0f} s)",
            *table(recorder.requests, {k: r.arrivals for k, r in receivers.items()}, timeline.t0, windows,
                   load_start, load_end),
            "",
            "== faults",
            *(f"  {w.name:<14} {w.start - load_start:6.1f}s .. {w.end - load_start:6.1f}s  {w.detail}" for w in windows),
            *(f"  injection error: {e}" for e in faults.errors),
            "",
            "== answers other than expected, by phase (route, status, code)",
            *refusals_by_phase(recorder.requests, windows, load_start, load_end),
            "",
            "== money rules",
            *rules_text(rules),
            "",
            "== what else broke",
            *(f"  {e['t']:7.1f}s {e['what']}" for e in timeline.events if e["kind"] == "supervisor"),
            "  5xx answers:",
            *server_errors(recorder.requests),
            "  service logs:",
            *log_findings(logs),
            "",
            "checked: " + ", ".join(f"{k} {v}" for k, v in numbers(evidence).items()),
            f"money rules: {'all held' if all(r.held for r in rules) else 'BROKEN'}; records in {run_dir}",
        ]
        text = "\n".join(lines)
        (run_dir / "report.txt").write_text(text + "\n")
        (run_dir / "timeline.json").write_text(json.dumps(timeline.events, indent=1))
        print("\n" + text, flush=True)
        return Outcome(rules=rules, numbers=numbers(evidence), run_dir=run_dir, text=text)
    finally:
        if ctx is not None:
            ctx.stop.set()
        if setup is not None and setup.poll() is None:
            setup.kill()
        if supervisor is not None:
            supervisor.stop_all()
        for r in receivers.values():
            r.close()
        if proxy is not None:
            proxy.cut()
        if chain is not None:
            chain.stop()
        if redis is not None:
            redis.kill()
        if pg is not None:
            pg.stop()
            pg.cleanup(keep_log=logs / "postgres.log")
        recorder.close()
