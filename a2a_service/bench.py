"""`make bench`: measured side by side, in one run, on this machine.

Scenario "free" (BENCH_ONLY=free): the free news catalog with 40 items against the x402
FastAPI reference app serving the same JSON document from a route.

Scenario "web server": the same Django app and endpoint served by granian (WSGI, our
production server) and by gunicorn sync workers (the reference), each with the same
number of worker processes, loaded by wrk from a second process. Runs alternate and
repeat; the medians and their ratio are printed. The machine is small and noisy:
read ratios, not absolute numbers."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORKERS = os.environ.get("BENCH_WORKERS", "2")
DURATION = os.environ.get("BENCH_SECONDS", "5")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CONNECTIONS = os.environ.get("BENCH_CONNECTIONS", "32")
# granian's threads per worker process for WSGI. One, as in production (README): measured
# here, a second thread per process lowered both the challenge and the credit call (GIL).
THREADS = os.environ.get("BENCH_THREADS", "1")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_env() -> dict[str, str]:
    run_dir = ROOT / ".run" / "bench"
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.local",
        "DJANGO_DEBUG": "false",
        "A2A_RUN_DIR": str(run_dir),
        "THROTTLE_ANON": "100000000/min",
        "PYTHONUNBUFFERED": "1",
    }
    return env


def prepare(env: dict[str, str]) -> None:
    for cmd in (["migrate", "--noinput", "-v", "0"], ["seed_catalog"]):
        subprocess.run(
            [sys.executable, "manage.py", *cmd], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
        )


def start(kind: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    if kind in ("x402-fastapi", "fastapi-plain"):
        cmd = [
            str(BIN / "uvicorn"),
            "a2a_service.bench_reference:" + ("app" if kind == "x402-fastapi" else "plain_app"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            WORKERS,
            "--log-level",
            "warning",
        ]
    elif kind == "granian":
        cmd = [
            str(BIN / "granian"),
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            WORKERS,
            "--blocking-threads",
            THREADS,
            "--log-level",
            "warning",
            "a2a_service.wsgi:application",
        ]
    else:
        cmd = [
            str(BIN / "gunicorn"),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            WORKERS,
            "--worker-class",
            "sync",
            "--log-level",
            "warning",
            "a2a_service.wsgi:application",
        ]
    return subprocess.Popen(
        cmd, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def wait_ready(url: str, timeout: float = 30, status: int = 200) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == status:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code == status:
                return
            time.sleep(0.2)
        except Exception:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def _found(match: re.Match[str] | None, what: str) -> re.Match[str]:
    if match is None:
        raise ValueError(f"wrk output has no {what}")
    return match


def parse_wrk(out: str) -> dict[str, float]:
    def ms(text: str) -> float:
        value, unit = _found(re.match(r"([\d.]+)(us|ms|s)", text), "latency").groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    rps = float(_found(re.search(r"Requests/sec:\s+([\d.]+)", out), "Requests/sec").group(1))
    total = float(_found(re.search(r"(\d+) requests in", out), "request count").group(1))
    p50 = ms(_found(re.search(r"\s50%\s+(\S+)", out), "p50").group(1))
    p99 = ms(_found(re.search(r"\s99%\s+(\S+)", out), "p99").group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": rps,
        "p50": p50,
        "p99": p99,
        "non2xx": float(errors.group(1)) if errors else 0.0,
        "requests": total,
    }


def print_table(title: str, results: dict[str, list[dict[str, float]]], metric_note: str = "") -> dict:
    print(f"\n== {title}{metric_note}")
    w = max(14, *(len(kind) + 2 for kind in results))
    print(f"{'server':<{w}}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>10}")
    med = {}
    for kind, runs in results.items():
        med[kind] = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "non2xx")}
        m = med[kind]
        print(f"{kind:<{w}}{m['rps']:>10.0f}{m['p50']:>10.2f}{m['p99']:>10.2f}{m['non2xx']:>10.0f}")
    return med


def run_wrk(url: str, headers: dict[str, str] | None = None, script: str | None = None) -> dict[str, float]:
    extra = [arg for name, value in (headers or {}).items() for arg in ("-H", f"{name}: {value}")]
    if script:
        extra += ["-s", script]
    out = subprocess.run(
        ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{DURATION}s", "--latency", *extra, url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return parse_wrk(out)


def scenario(name: str, path: str, contenders: list[str], env: dict[str, str]) -> None:
    results: dict[str, list[dict[str, float]]] = {c: [] for c in contenders}
    for _ in range(ROUNDS):
        for kind in contenders:
            port = free_port()
            proc = start(kind, port, env)
            try:
                url = f"http://127.0.0.1:{port}{path}"
                wait_ready(url)
                run_wrk(url)  # warm-up, not counted
                results[kind].append(run_wrk(url))
            finally:
                stop(proc)
    print(
        f"\n== {name}: GET {path}  ({WORKERS} worker processes each, wrk -c{CONNECTIONS} -d{DURATION}s, "
        f"median of {ROUNDS} alternating rounds)"
    )
    print(f"{'server':<12}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>10}")
    med = {}
    for kind, runs in results.items():
        med[kind] = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "non2xx")}
        m = med[kind]
        print(f"{kind:<12}{m['rps']:>10.0f}{m['p50']:>10.2f}{m['p99']:>10.2f}{m['non2xx']:>10.0f}")
    ours, ref = contenders
    print(f"ratio {ours}/{ref} req/s: {med[ours]['rps'] / med[ref]['rps']:.2f}x")


def x402_scenario(env: dict[str, str]) -> None:
    """The unpaid 402 challenge: this service (granian) against the x402 package's FastAPI
    middleware (uvicorn), same worker count, same facilitator, both up for the whole run
    while wrk rounds alternate. Then the added latency of a full paid call on anvil."""
    from billing.chain.localchain import FACILITATOR, anvil_start, dev_account, rpc_wait, stack_install

    chain_port, ours_port, ref_port, fac_port = free_port(), free_port(), free_port(), free_port()
    chain = anvil_start(port=chain_port)
    procs: list[subprocess.Popen] = [chain]
    try:
        rpc = f"http://127.0.0.1:{chain_port}"
        stack_install(rpc_wait(rpc), usdc_address="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
        ours_url = f"http://127.0.0.1:{ours_port}"
        # The facilitator runs as its own process (as a third-party one would), so a paid call
        # never waits for a worker of the server it is itself occupying.
        fac_url = f"http://127.0.0.1:{fac_port}/api/a2a/facilitator"
        env = {
            **env,
            "CHAIN_RPC_URL": rpc,
            "FACILITATOR_URL": fac_url,
            # The separate facilitator settles only for callers with its shared secret.
            "FACILITATOR_SHARED_SECRET": secrets.token_urlsafe(24),
            "FACILITATOR_PRIVATE_KEY": "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x"),
            "TREASURY_ADDRESS": "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
        }
        # The brief is sold (402) only while there is one to deliver (else 503): publish today's.
        manage_shell(
            "from django.utils import timezone\nfrom catalog.models import EditorialPiece\n"
            "EditorialPiece.objects.create(kind='morning_brief', title='Bench brief', summary='s',"
            " body='The bench brief.', published_at=timezone.now())\nprint('ok')",
            env,
        )
        procs.append(start("granian", fac_port, env))
        wait_ready(fac_url + "/supported")
        procs.append(start("granian", ours_port, env))
        ours = ours_url + "/api/a2a/x402/morning-brief"
        wait_ready(ours, status=402)
        procs.append(start("x402-fastapi", ref_port, env))
        ref = f"http://127.0.0.1:{ref_port}/paid"
        wait_ready(ref, status=402)
        results: dict[str, list[dict[str, float]]] = {"granian (ours)": [], "x402-fastapi": []}
        for _ in range(ROUNDS):
            for kind, url in (("granian (ours)", ours), ("x402-fastapi", ref)):
                run_wrk(url)  # warm-up
                results[kind].append(run_wrk(url))
        med = print_table(
            "unpaid 402 challenge",
            results,
            f"  ({WORKERS} worker processes each, wrk -c{CONNECTIONS} -d{DURATION}s, "
            f"median of {ROUNDS} alternating rounds; non-2xx = the 402s)",
        )
        ratio = med["granian (ours)"]["rps"] / med["x402-fastapi"]["rps"]
        print(f"ratio ours/reference req/s: {ratio:.2f}x  (target >= 1.5x)")
        credit_scenario(ours_url, env, med["x402-fastapi"]["rps"])
        paid_latency(ours_url, env)
    finally:
        for proc in reversed(procs):
            stop(proc)


def manage_shell(script: str, env: dict[str, str]) -> str:
    """Run Python in the service's Django context (its database); returns the last line printed."""
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().splitlines()[-1]


def credit_scenario(base: str, env: dict[str, str], reference_rps: float) -> None:
    """Calls paid from prepaid credits: authenticate the key, run the product, debit the
    price with its ledger row in one committed statement. Measured for many agents (one key
    each, the requests of wrk's connections rotating over them), for one agent alone (every
    debit then waits for the one account row), and for many agents on a server whose debits
    wait for the disk flush (CREDIT_DEBIT_SYNC_COMMIT=true; the default does not). Afterwards
    the ledger is checked: one debit row per 200 answer, every balance equal to its ledger sum."""
    agents = int(CONNECTIONS)
    script = (
        "import secrets\n"
        "from billing.credits import credit_add\n"
        "from tests.support.wallets import register_wallet  # signs the ownership challenge\n"
        "keys = []\n"
        f"for _ in range({agents}):\n"
        "    reg = register_wallet()\n"
        "    credit_add(account_id=reg.account.id, amount_atomic=10**12, kind='adjustment', reason='bench')\n"
        "    keys.append(reg.api_key)\n"
        "print(','.join(keys))\n"
    )
    keys = manage_shell(script, env).split(",")
    lua = ROOT / ".run" / "bench" / "agents.lua"
    lua.write_text(
        "keys = {" + ",".join(f'"{k}"' for k in keys) + "}\n"
        "n = 0\n"
        "request = function()\n"
        "  n = n + 1\n"
        "  return wrk.format('GET', nil, {['X-API-Key'] = keys[(n % #keys) + 1]})\n"
        "end\n"
    )
    path = "/api/a2a/x402/payments/dual-rail-status"
    url = base + path
    sync_port = free_port()
    sync_server = start("granian", sync_port, {**env, "CREDIT_DEBIT_SYNC_COMMIT": "true"})
    sync_url = f"http://127.0.0.1:{sync_port}{path}"
    many, one, synced = f"{agents} agents", "1 agent", f"{agents} agents, sync commit"
    rows_before = ledger_debits(env)
    runs: dict[str, list[dict[str, float]]] = {many: [], one: [], synced: []}
    everything = []  # warm-ups too: they were charged like any call
    try:
        wait_ready(sync_url, status=402)
        for _ in range(ROUNDS):
            everything.append(run_wrk(url, script=str(lua)))  # warm-up
            runs[many].append(run_wrk(url, script=str(lua)))
            runs[one].append(run_wrk(url, {"X-API-Key": keys[0]}))
            everything.append(run_wrk(sync_url, script=str(lua)))  # warm-up
            runs[synced].append(run_wrk(sync_url, script=str(lua)))
            everything += [runs[many][-1], runs[one][-1], runs[synced][-1]]
    finally:
        stop(sync_server)
    database = "PostgreSQL" if "postgres" in env.get("DATABASE_URL", "") else "SQLite"
    med = print_table(
        "credit-debited call (X-API-Key, 0.01 USDC each; granian)",
        runs,
        f"  ({WORKERS} worker processes x {THREADS} threads, wrk -c{CONNECTIONS} -d{DURATION}s, "
        f"median of {ROUNDS} rounds, database: {database})",
    )
    for kind in runs:
        ratio = med[kind]["rps"] / reference_rps
        print(f"ratio credit call ({kind}) / reference 402 challenge req/s: {ratio:.2f}x  (target >= 0.5x)")
    debits = ledger_debits(env) - rows_before
    served = int(sum(r["requests"] - r["non2xx"] for r in everything))
    audit = manage_shell("from billing.credits import ledger_audit\nprint(len(ledger_audit()))", env)
    print(
        f"ledger: {debits} debit rows for {served} answers of 200 counted by wrk (which does not count "
        f"the answers in flight when a run stops: at most {CONNECTIONS} a run); "
        f"accounts whose balance differs from their ledger sum: {audit}"
    )


def ledger_debits(env: dict[str, str]) -> int:
    return int(
        manage_shell("from billing.models import LedgerEntry\nprint(LedgerEntry.objects.count())", env)
    )


def paid_latency(base: str, env: dict[str, str], calls: int = 15) -> None:
    """Sequential paid calls with the official client: time of the unpaid challenge against
    the paid retry (local checks, claim, facilitator verify, product, on-chain settle)."""
    import requests
    from x402 import x402ClientSync
    from x402.http import x402HTTPClientSync
    from x402.mechanisms.evm.exact.register import register_exact_evm_client
    from x402.mechanisms.evm.signers import EthAccountSigner

    from billing.chain.localchain import DEMO_PAYER, dev_account

    client = register_exact_evm_client(x402ClientSync(), EthAccountSigner(dev_account(DEMO_PAYER)))
    http = x402HTTPClientSync(client)
    url = base + "/api/a2a/x402/payments/dual-rail-status"
    unpaid, paid = [], []
    with requests.Session() as session:
        for _ in range(calls):
            t0 = time.perf_counter()
            first = session.get(url, timeout=30)
            unpaid.append((time.perf_counter() - t0) * 1000)
            required = http.get_payment_required_response(first.headers.get, first.content)
            headers = http.encode_payment_signature_header(client.create_payment_payload(required))
            t0 = time.perf_counter()
            resp = session.get(url, headers=headers, timeout=60)
            paid.append((time.perf_counter() - t0) * 1000)
            if resp.status_code != 200:
                raise RuntimeError(f"paid call failed: {resp.status_code} {resp.text[:200]}")
    p50u, p50p = statistics.median(unpaid), statistics.median(paid)
    print(f"\n== full paid call on the local chain ({calls} sequential calls, official x402 client)")
    print(
        f"unpaid 402 p50 {p50u:.1f} ms; paid call (verify + serve + settle on anvil) p50 {p50p:.1f} ms, "
        f"max {max(paid):.1f} ms; added latency p50 {p50p - p50u:.1f} ms"
    )


NEWS_ITEMS = 40


def free_news_scenario(env: dict[str, str]) -> None:
    """The free news catalog with 40 items: this service (granian, the free document served
    in front of Django) against the x402 FastAPI reference app (uvicorn) serving the same JSON
    document from a route, same worker count, both up while wrk rounds alternate."""
    manage_shell(
        "from catalog.models import NewsItem\n"
        f"missing = {NEWS_ITEMS} - NewsItem.objects.count()\n"
        "for n in range(max(missing, 0)):\n"
        "    NewsItem.objects.create(title=f'Bench headline {n}: markets move on macro data',"
        " teaser='A two-sentence teaser of the item, as the catalog shows it to agents before they pay.',"
        " body='Full text.', category='crypto', source='bench')\n"
        "print(NewsItem.objects.count())",
        env,
    )
    ours_port, ref_port = free_port(), free_port()
    doc = ROOT / ".run" / "bench" / "free_news_catalog.json"
    env = {
        **env,
        # The reference app's x402 middleware needs these to start; the free route never pays.
        "FACILITATOR_URL": env.get("FACILITATOR_URL", "http://127.0.0.1:9/facilitator"),
        "TREASURY_ADDRESS": env.get("TREASURY_ADDRESS", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"),
        "BENCH_FREE_JSON": str(doc),
    }
    plain_port = free_port()
    procs = [start("granian", ours_port, env)]
    try:
        ours = f"http://127.0.0.1:{ours_port}/api/a2a/news/catalog"
        wait_ready(ours)
        with urllib.request.urlopen(ours, timeout=10) as r:
            body = r.read()
        items = len(json.loads(body)["items"])
        doc.write_bytes(body)
        procs.append(start("x402-fastapi", ref_port, env))
        ref = f"http://127.0.0.1:{ref_port}/free"
        wait_ready(ref)
        with urllib.request.urlopen(ref, timeout=10) as r:
            ref_size = len(r.read())
        # Also without the x402 middleware (which the reference app runs on every route).
        procs.append(start("fastapi-plain", plain_port, env))
        plain = f"http://127.0.0.1:{plain_port}/free"
        wait_ready(plain)
        print(f"\nfree news catalog: {items} items, {len(body)} bytes (reference route: {ref_size} bytes)")
        contenders = (("granian (ours)", ours), ("x402-fastapi", ref), ("fastapi (no middleware)", plain))
        results: dict[str, list[dict[str, float]]] = {kind: [] for kind, _ in contenders}
        for _ in range(ROUNDS):
            for kind, url in contenders:
                run_wrk(url)  # warm-up
                results[kind].append(run_wrk(url))
        med = print_table(
            "free news catalog",
            results,
            f"  ({WORKERS} worker processes each, wrk -c{CONNECTIONS} -d{DURATION}s, "
            f"median of {ROUNDS} alternating rounds)",
        )
        ratio = med["granian (ours)"]["rps"] / med["x402-fastapi"]["rps"]
        print(f"ratio ours/reference req/s: {ratio:.2f}x  (target >= 1.0x)")
        plain_ratio = med["granian (ours)"]["rps"] / med["fastapi (no middleware)"]["rps"]
        print(f"ratio ours/bare FastAPI route req/s: {plain_ratio:.2f}x")
    finally:
        for proc in reversed(procs):
            stop(proc)


def ensure_redis(env: dict[str, str]) -> subprocess.Popen | None:
    """Production runs with Redis, so the bench does too: REDIS_URL if given, else a private
    redis-server on a free port that keeps nothing on disk."""
    if env.get("REDIS_URL"):
        return None
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def main() -> int:
    for tool in ("wrk", "redis-server"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed (make bench installs it with apt-get)", file=sys.stderr)
            return 2
    env = bench_env()
    redis_proc = ensure_redis(env)
    try:
        return run_scenarios(env)
    finally:
        if redis_proc is not None:
            stop(redis_proc)


def ensure_postgres(env: dict[str, str]) -> None:
    """The credit scenario is measured on PostgreSQL: DATABASE_URL if given, else this
    machine's server (a database a2a_bench is created); SQLite if neither is there."""
    if env.get("DATABASE_URL"):
        return
    try:
        import psycopg

        with psycopg.connect(
            "postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True, connect_timeout=3
        ) as c:
            if not c.execute("SELECT 1 FROM pg_database WHERE datname = 'a2a_bench'").fetchone():
                c.execute("CREATE DATABASE a2a_bench")
        env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/a2a_bench"
    except Exception as exc:
        print(f"no PostgreSQL at 127.0.0.1:5432 ({exc}); measuring on SQLite")


def webhook_scenario(env: dict[str, str], events: int = 300, paced: int = 30) -> None:
    """One Celery worker (one process) delivering signed webhooks to a loopback receiver:
    deliveries/s, and the time from an event's commit to its arrival."""
    import threading
    from datetime import datetime
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    arrived: dict[str, float] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            arrived.setdefault(self.headers["webhook-id"], time.time())
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    wenv = {**env, "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true", "WEBHOOK_DELIVERY_QUEUE": "bench-webhooks"}
    worker = subprocess.Popen(
        [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
            "--queues",
            "bench-webhooks",
        ],
        cwd=ROOT,
        env=wenv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    script = (
        "import json, secrets\n"
        "from datetime import timedelta\n"
        "from django.utils import timezone\n"
        "from tests.support.wallets import register_wallet  # signs the ownership challenge\n"
        "from webhooks.models import PushEntitlement\n"
        "from webhooks.services import event_publish, subscription_create\n"
        "reg = register_wallet()\n"
        "PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=1))\n"
        f"subscription_create(account=reg.account, url={url!r}, events=['copy_signal'])\n"
        "out = {}\n"
        f"for i in range({events}):\n"
        "    e = event_publish(kind='copy_signal', payload={'n': i}, account_id=reg.account.id)\n"
        "    out[e.message_id] = e.created_at.timestamp()\n"
        "import time\n"
        f"time.sleep({events} / 30 + 3)  # let the worker drain the burst: the paced events must not queue\n"
        "paced = {}\n"
        f"for i in range({paced}):\n"
        "    time.sleep(0.25)\n"
        "    e = event_publish(kind='copy_signal', payload={'paced': i}, account_id=reg.account.id)\n"
        "    paced[e.message_id] = e.created_at.timestamp()\n"
        "print(json.dumps({'burst': out, 'paced': paced}))\n"
    )
    try:
        time.sleep(3)  # the worker connects to the broker
        both = json.loads(manage_shell(script, wenv))
        created, paced_created = both["burst"], both["paced"]
        deadline = time.monotonic() + 120
        while len(arrived) < len(created) + len(paced_created) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop(worker)
        server.shutdown()
    got = [arrived[k] for k in created if k in arrived]
    latencies = sorted((arrived[k] - created[k]) * 1000 for k in created if k in arrived)
    span = max(got) - min(got) if len(got) > 1 else float("nan")
    print(
        f"\n== webhook delivery: one Celery worker (solo pool), {events} signed events to a loopback receiver"
    )
    print(
        f"burst: delivered {len(got)}/{len(created)}; {len(got) / span:.0f} deliveries/s; event -> delivery "
        f"p50 {statistics.median(latencies):.0f} ms (all written at once, so later ones wait in the queue)"
    )
    idle = sorted((arrived[k] - paced_created[k]) * 1000 for k in paced_created if k in arrived)
    if idle:
        print(
            f"paced (one event every 250 ms): event -> delivery p50 {statistics.median(idle):.1f} ms, "
            f"max {idle[-1]:.1f} ms  [{datetime.now():%H:%M}]"
        )


def run_scenarios(env: dict[str, str]) -> int:
    ensure_postgres(env)
    print(f"database: {env.get('DATABASE_URL', 'SQLite (.run/bench)')}; redis: {env['REDIS_URL']}")
    prepare(env)
    only = os.environ.get("BENCH_ONLY", "")
    if only in ("", "x402"):
        x402_scenario(env)
    if only in ("", "free"):
        free_news_scenario(env)
    if only in ("", "webhooks"):
        webhook_scenario(env)
    if only in ("", "server"):
        scenario("web server", "/api/a2a/agents/news/status", ["granian", "gunicorn"], env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
