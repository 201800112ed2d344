"""`make run`: the whole local stack in one foreground process.

Starts the web server (granian, WSGI), a Celery worker, a Celery worker for webhook
deliveries (their own queue) and Celery beat, each in its own process group, and stops
all of them on Ctrl-C, so nothing is left running behind. A process that exits unexpectedly is
started again (after 1, 2, 5, then 10 s); one that exits RESPAWN_LIMIT times within
RESPAWN_WINDOW_SECONDS is crash-looping (a port in use, a broken setting) and stops the stack,
as does the local chain's exit (a new chain would not hold this one's state).

Feeds: the replay server (catalog/feeds/replay.py) serves the recorded samples on
FEEDS_REPLAY_URL's port, FEEDS_MODE defaults to auto (live, replay for a source it cannot
reach), and one `ingest_feeds` pass runs at start so the catalogs fill at once; when it ends,
one `compute_intel` pass (regime, desk signals, intel snapshot) so the signal products answer,
then one `compose_brief` (the morning brief from that data; beat composes it every morning).
The local chain it starts is probed by the RPC probe feed as `local-anvil` (RPC_PROBE_OWN_CHAIN).

It prints "ready" (with the seconds it took) once this start's passes have ended, this start's
worker has sent its heartbeat, and program/health has nothing left in `warming_up` (a first pass
of every feed source, the analytics pass, the brief): until then the products that need data
answer 503 (on a first start health says warming_up; on a restart the data is the last run's)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / ".run"
BIN = Path(sys.executable).parent


def _commands(port: str) -> dict[str, list[str]]:
    return {
        "web": [
            str(BIN / "granian"),
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            port,
            "--workers",
            os.environ.get("WEB_WORKERS", "1"),
            "--blocking-threads",
            os.environ.get("WEB_THREADS", "4"),
            # A worker that exits unexpectedly is replaced; without this granian shuts
            # every worker down and exits when one of them dies.
            "--respawn-failed-workers",
            "a2a_service.wsgi:application",
        ],
        "worker": [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--hostname",
            "worker@%h",
        ],
        # Webhook deliveries on workers of their own (WEBHOOK_DELIVERY_QUEUE): a slow
        # receiver never holds the worker that credits deposits.
        "webhooks": [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--queues",
            os.environ.get("WEBHOOK_DELIVERY_QUEUE", "webhooks"),
            "--hostname",
            "webhooks@%h",
        ],
        "beat": [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "beat",
            "--loglevel",
            "INFO",
            # Schedules in the database (django-celery-beat): feed intervals are edited in the admin.
            "--scheduler",
            "django_celery_beat.schedulers:DatabaseScheduler",
        ],
    }


def start_chain(env: dict[str, str], port: str) -> subprocess.Popen | None:
    """anvil on CHAIN_PORT (8545) with the USDC stand-in, unless CHAIN_RPC_URL names a chain
    of your own. Writes .run/stack.json: what an agent needs to pay on this stack."""
    from billing.chain.localchain import anvil_start, rpc_wait, stack_info, stack_install

    usdc = env.get("USDC_ADDRESS", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
    treasury = env.get("TREASURY_ADDRESS", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")
    chain = None
    if "CHAIN_RPC_URL" not in env:
        chain_port = int(env.get("CHAIN_PORT", "8545"))
        # A block every second: deposits reach their confirmations on an idle local chain.
        chain = anvil_start(
            port=chain_port,
            chain_id=int(env.get("CHAIN_ID", "8453")),
            block_time=float(env.get("CHAIN_BLOCK_TIME", "1")),
        )
        env["CHAIN_RPC_URL"] = f"http://127.0.0.1:{chain_port}"
        # A fresh chain at every start, under the kept database: the deposit watcher's
        # new-chain detection is expected here (INFO, not ERROR).
        env.setdefault("CHAIN_RESTARTS_EXPECTED", "true")
    w3 = rpc_wait(env["CHAIN_RPC_URL"])
    if chain is not None:
        stack_install(w3, usdc_address=usdc)
    base = f"http://127.0.0.1:{port}"
    # FACILITATOR_URL stays empty unless you set it: paid calls settle through the self-hosted
    # facilitator in process (never over HTTP to this same server, which could deadlock).
    info = stack_info(
        base_url=base,
        rpc_url=env["CHAIN_RPC_URL"],
        chain_id=w3.eth.chain_id,
        usdc_address=usdc,
        treasury=treasury,
    )
    info.write(RUN / "stack.json")
    print("\n.run/stack.json:\n" + (RUN / "stack.json").read_text(), flush=True)
    return chain


def erc8004_registered(env: dict[str, str], port: str) -> None:
    """The service's agent in the ERC-8004 identity registry of the chain (on the local anvil
    chain: the project's own registry, deployed first). A failure is logged, not fatal: the
    stack serves without an on-chain registration."""
    cmd = [sys.executable, "manage.py", "erc8004_register", "--base-url", f"http://127.0.0.1:{port}"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode == 0:
        print(f"erc8004: {done.stdout.strip()}", flush=True)
    else:
        print(
            f"erc8004_register failed (the stack runs without it): {done.stderr.strip()[-500:]}", flush=True
        )


def local_chain_probed(env: dict[str, str]) -> None:
    """The local chain this stack started is one of the RPC probe feed's endpoints, so that
    offline the telemetry map and the speed index still show a live node. Only the chain the
    stack started: a CHAIN_RPC_URL of your own is not published unless you set it yourself."""
    env.setdefault("RPC_PROBE_OWN_CHAIN", "local-anvil|local")


def replay_command(env: dict[str, str]) -> list[str]:
    """The replay server on FEEDS_REPLAY_URL's host and port (a plain process: no Django)."""
    url = urlsplit(env.get("FEEDS_REPLAY_URL", "http://127.0.0.1:8765"))
    host, replay_port = url.hostname or "127.0.0.1", str(url.port or 80)
    return [sys.executable, "-m", "catalog.feeds.replay", "--host", host, "--port", replay_port]


# A process that exits unexpectedly is started again after these delays (the last repeated);
# RESPAWN_LIMIT exits within RESPAWN_WINDOW_SECONDS stop the stack instead (systemd's
# StartLimitBurst/StartLimitIntervalSec, docs/deployment/systemd/).
RESPAWN_DELAYS = (1.0, 2.0, 5.0, 10.0)
RESPAWN_LIMIT = 5
RESPAWN_WINDOW_SECONDS = 120.0


class Supervisor:
    """Keeps named commands running: `poll()` notices an exit, starts the command again after
    its delay, and says why the stack must stop when one is crash-looping."""

    def __init__(
        self,
        start: Callable[[list[str]], subprocess.Popen],
        *,
        delays: tuple[float, ...] = RESPAWN_DELAYS,
        limit: int = RESPAWN_LIMIT,
        window: float = RESPAWN_WINDOW_SECONDS,
    ) -> None:
        self._start = start
        self.delays, self.limit, self.window = delays, limit, window
        self.commands: dict[str, list[str]] = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self._exits: dict[str, deque[float]] = {}
        self._due: dict[str, float] = {}

    def add(self, name: str, cmd: list[str]) -> None:
        self.commands[name] = cmd
        self._exits[name] = deque()
        self.procs[name] = self._start(cmd)

    def poll(self, now: float | None = None) -> str | None:
        """Restart what exited (once its delay has passed); the reason to stop, if any."""
        now = time.monotonic() if now is None else now
        for name, proc in self.procs.items():
            if name in self._due or proc.poll() is None:
                continue
            # What the dead process left in its group (a granian worker still holding the port)
            # would stop its successor from starting.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            exits = self._exits[name]
            exits.append(now)
            while exits and now - exits[0] > self.window:
                exits.popleft()
            if len(exits) >= self.limit:
                return f"{name} exited {len(exits)} times in {self.window:.0f} s (last with {proc.returncode})"
            delay = self.delays[min(len(exits), len(self.delays)) - 1]
            self._due[name] = now + delay
            print(f"{name} exited with {proc.returncode}; starting it again in {delay:.0f} s", flush=True)
        for name, due in list(self._due.items()):
            if now >= due:
                del self._due[name]
                self.procs[name] = self._start(self.commands[name])
                print(f"{name} started again (pid {self.procs[name].pid})", flush=True)
        return None


HEALTH_PATH = "/api/a2a/program/health"
# How often the supervisor asks health whether the first data is in, and after how long it
# says what is still missing.
READY_POLL_SECONDS = 2.0
READY_HINT_SECONDS = 180.0


def health_read(base: str) -> dict[str, Any] | None:
    """program/health's answer, or None while the server does not answer yet."""
    try:
        with urllib.request.urlopen(base + HEALTH_PATH, timeout=5) as resp:
            body: dict[str, Any] = json.loads(resp.read())
            return body
    except (OSError, ValueError):
        return None


def ready_line(health: dict[str, Any], seconds: float, base: str) -> str:
    """What the supervisor prints when the first data is in."""
    line = f"\nready in {seconds:.0f} s: {base}/api/a2a/discovery/storefront  (admin: /admin/)"
    if health.get("status") != "ok":
        down = [p for p in ("database", "cache", "broker", "worker") if health.get(p, {}).get("status") != "ok"]
        failing = [a["name"] for a in health.get("venue_adapters", []) if a.get("status") == "failing"]
        why = ", ".join([*(f"{p} not ok" for p in down), *(f"feed {n} failing" for n in failing)])
        line += f"\nhealth is {health.get('status')}: {why or 'see ' + base + HEALTH_PATH}"
    return line


class Readiness:
    """Asks health, every READY_POLL_SECONDS, whether the first data is in; says "ready" once:
    when this start's passes have ended (`passes_done`), the worker's heartbeat is fresh (a
    restart finds the last run's, stale) and nothing is left in `warming_up`."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.started = time.monotonic()
        self.done = False
        self.hinted = False
        self._next = 0.0

    def poll(self, *, passes_done: bool) -> None:
        now = time.monotonic()
        if self.done or now < self._next:
            return
        self._next = now + READY_POLL_SECONDS
        health = health_read(self.base)
        if health is None:
            return
        pending = list(health.get("warming_up", []))
        if health.get("worker", {}).get("status") != "ok" and "worker_heartbeat" not in pending:
            pending.insert(0, "worker_heartbeat")
        if not passes_done:
            pending.append("this start's feed, analytics and brief passes")
        if not pending:
            self.done = True
            print(ready_line(health, now - self.started, self.base), flush=True)
            print("Ctrl-C stops web, workers and beat.\n", flush=True)
        elif now - self.started > READY_HINT_SECONDS and not self.hinted:
            self.hinted = True
            print(
                f"not ready after {now - self.started:.0f} s: still waiting for {', '.join(pending)} "
                f"({self.base}{HEALTH_PATH})",
                flush=True,
            )


def metrics_dir_fresh(env: dict[str, str]) -> Path:
    """Every process of the stack writes its Prometheus samples to one directory
    (PROMETHEUS_MULTIPROC_DIR, default .run/metrics; a2a_service/core/metrics.py), emptied here
    before any of them starts: never while one runs, which would lose what it counts."""
    folder = Path(env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(RUN / "metrics")))
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()
    return folder


def main() -> int:
    port = os.environ.get("PORT", "8000")
    for folder in ("broker/queue", "broker/processed", "broker/control", "results", "cache"):
        (RUN / folder).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local")
    metrics_dir_fresh(env)
    env.setdefault("FEEDS_MODE", "auto")
    procs: dict[str, subprocess.Popen] = {}
    stopping = False
    chain = start_chain(env, port)
    if chain is not None:
        procs["chain"] = chain
        local_chain_probed(env)
    # The ERC-8004 registry RPC is the stack's chain unless set on its own.
    env.setdefault("ERC8004_REGISTRY_RPC_URL", env["CHAIN_RPC_URL"])
    try:
        erc8004_registered(env, port)
    except Exception as exc:  # a timeout or a missing interpreter: logged, the stack still starts
        print(f"erc8004_register failed (the stack runs without it): {exc}", flush=True)

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    def start(cmd: list[str]) -> subprocess.Popen:
        # A session of its own: the terminal's Ctrl-C reaches only this supervisor, which
        # then stops each child in order instead of all of them racing.
        return subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)

    supervisor = Supervisor(start)
    commands = {"replay": replay_command(env), **_commands(port)}
    for name, cmd in commands.items():
        if stopping:
            break
        supervisor.add(name, cmd)
    # One pass of every feed now (beat's first runs follow their intervals); it ends on its
    # own, so it is not one of the processes whose exit stops the stack.
    ingest = None
    if not stopping:
        time.sleep(0.5)  # the replay server binds its port
        ingest = subprocess.Popen(
            [sys.executable, "manage.py", "ingest_feeds"], cwd=ROOT, env=env, start_new_session=True
        )
    print(
        f"\nstarting on http://127.0.0.1:{port}: the first feed pass, analytics pass and brief come "
        "next; \"ready\" follows when they are in.",
        flush=True,
    )
    readiness = Readiness(f"http://127.0.0.1:{port}")

    exit_code = 0
    intel = None
    brief = None
    while not stopping:
        if chain is not None and chain.poll() is not None:
            print(f"the local chain exited with {chain.returncode}; stopping the stack", flush=True)
            exit_code, stopping = chain.returncode or 1, True
        crash_loop = None if stopping else supervisor.poll()
        if crash_loop is not None:
            print(f"{crash_loop}; stopping the stack", flush=True)
            exit_code, stopping = 1, True
        if intel is None and ingest is not None and ingest.poll() is not None and not stopping:
            # The first analytics pass as soon as the first feed pass ended (beat's follow every
            # INTEL_COMPUTE_SECONDS): regime, desk signals and the intel snapshot are there at once.
            intel = subprocess.Popen(
                [sys.executable, "manage.py", "compute_intel"], cwd=ROOT, env=env, start_new_session=True
            )
        if brief is None and intel is not None and intel.poll() is not None and not stopping:
            # The morning brief from the first passes' data, so the brief products sell at once.
            brief = subprocess.Popen(
                [sys.executable, "manage.py", "compose_brief"], cwd=ROOT, env=env, start_new_session=True
            )
        if not stopping:
            readiness.poll(passes_done=brief is not None and brief.poll() is not None)
        time.sleep(0.3)

    procs.update(supervisor.procs)
    if brief is not None and brief.poll() is None:
        procs["brief"] = brief
    if ingest is not None and ingest.poll() is None:
        procs["ingest"] = ingest
    if intel is not None and intel.poll() is None:
        procs["intel"] = intel
    # SIGTERM to each main process first: Celery and granian then shut their children
    # down themselves (warm shutdown); the process group is killed only on a timeout.
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for proc in procs.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print("local stack stopped", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
