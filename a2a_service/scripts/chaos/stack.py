"""The stack the chaos run loads: its own PostgreSQL cluster, Redis server, anvil chain (behind a
TCP proxy the faults can cut), and the service's processes (granian with 2 workers, the default
Celery worker, the webhooks worker, beat), each supervised as systemd would with Restart=always:
a process that exits while no fault holds it down is logged and started again."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
TREASURY = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"
INGEST_TOKEN = "chaos-ingest-token"
DB_NAME = "a2a_chaos"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_port(port: int, timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what or 'a server'} did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


@dataclass(frozen=True)
class Ports:
    """Every port the run listens on, all on loopback."""

    web: int
    hook_ok: int
    hook_slow: int
    hook_fail: int
    postgres: int
    redis: int
    anvil: int
    rpc_proxy: int

    @classmethod
    def from_base(cls, base: int) -> Ports:
        return cls(base, base + 1, base + 2, base + 3, base + 25, base + 26, base + 27, base + 28)

    @classmethod
    def free(cls) -> Ports:
        return cls(*(free_port() for _ in range(8)))

    def busy(self) -> list[int]:
        return [p for p in vars(self).values() if port_open(p)]


class Timeline:
    """What happened when (seconds since the run's start), shared by faults and supervision."""

    def __init__(self) -> None:
        self.t0 = time.time()
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.time() - self.t0

    def note(self, kind: str, what: str, **extra: Any) -> None:
        event = {"t": round(self.now(), 2), "kind": kind, "what": what, **extra}
        with self._lock:
            self.events.append(event)
        print(f"[{event['t']:7.1f}s] {kind}: {what}", flush=True)


# --- PostgreSQL --------------------------------------------------------------------------------
def pg_bin() -> Path:
    """The newest installed server's binaries (PG_BIN overrides)."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (set PG_BIN)")
    return found[-1].parent


class Postgres:
    """A cluster of its own in a temporary directory: trust auth, loopback only. initdb refuses
    root, so as root the cluster belongs to the `postgres` OS user and its commands run as it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.bin = pg_bin()
        self.dir = Path(tempfile.mkdtemp(prefix="a2a-chaos-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str, timeout: float = 120) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        # Output to a file, not a pipe: the server pg_ctl starts inherits it and never closes it.
        with tempfile.TemporaryFile() as err:
            done = subprocess.run(cmd, stdout=err, stderr=err, timeout=timeout, check=False)
            err.seek(0)
            output = err.read().decode(errors="replace")
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {output.strip()[-800:]}")

    def init(self) -> None:
        if self.as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir} "
            "-c max_connections=300"
        )
        self._options = options

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", self._options, "start")

    def restart(self) -> None:
        # -m fast: what a service restart does (clients disconnected, a clean shutdown checkpoint).
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "-t", "60", "restart")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop")
        except Exception as exc:  # already down
            print(f"postgres stop: {exc}", flush=True)

    def create_db(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def url(self, name: str = DB_NAME) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def cleanup(self, keep_log: Path | None = None) -> None:
        if keep_log is not None and self.log.exists():
            shutil.copy(self.log, keep_log)
        shutil.rmtree(self.dir, ignore_errors=True)


# --- Redis -------------------------------------------------------------------------------------
class Redis:
    """A redis-server of its own that keeps nothing on disk: a restart loses every key (the
    broker's queues, counters, stored challenges), as a crashed cache node would."""

    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = open(self.log, "ab")  # noqa: SIM115 - the process keeps it
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_port(self.port, what="redis-server")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


# --- the service's processes ---------------------------------------------------------------------
def service_commands(port: int, web_workers: int, web_threads: int, run_dir: Path) -> dict[str, list[str]]:
    """As a2a_service/scripts/devstack.py starts them (and docs/deployment/topology.md)."""
    celery = [str(BIN / "celery"), "-A", "a2a_service"]
    return {
        "web": [
            str(BIN / "granian"),
            "--interface",
            "wsgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(web_workers),
            "--blocking-threads",
            str(web_threads),
            "--respawn-failed-workers",
            "a2a_service.wsgi:application",
        ],
        "worker": [*celery, "worker", "--loglevel", "INFO", "--concurrency", "2", "--hostname", "worker@chaos"],
        "webhooks": [
            *celery,
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            "2",
            "--queues",
            "webhooks",
            "--hostname",
            "webhooks@chaos",
        ],
        "beat": [
            *celery,
            "beat",
            "--loglevel",
            "INFO",
            "--scheduler",
            "django_celery_beat.schedulers:DatabaseScheduler",
            "--pidfile",
            str(run_dir / "beat.pid"),
        ],
    }


def service_env(ports: Ports, run_dir: Path, *, database_url: str, redis_url: str) -> dict[str, str]:
    """The service's settings for the run: local settings (DEBUG off) on the run's own database,
    Redis and chain; limits meant for one client per address raised, since every agent here
    shares 127.0.0.1; retry and staleness clocks shortened so what a fault leaves behind is
    decided within the run."""
    keep = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CHAIN_RPC_URL")}
    return {
        **keep,
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.local",
        "DJANGO_DEBUG": "false",
        "A2A_RUN_DIR": str(run_dir / "state"),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CHAIN_RPC_URL": f"http://127.0.0.1:{ports.rpc_proxy}",
        "ERC8004_REGISTRY_RPC_URL": f"http://127.0.0.1:{ports.rpc_proxy}",
        "USDC_ADDRESS": USDC,
        "TREASURY_ADDRESS": TREASURY,
        "FACILITATOR_URL": "",  # the self-hosted facilitator, in process
        "INGEST_TOKEN": INGEST_TOKEN,
        "THROTTLE_ANON": "100000000/min",
        "OWNERSHIP_CHALLENGES_PER_REQUESTER": "100000",
        "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "PAYMENT_RECONCILE_SECONDS": "5",
        "WEBHOOK_SWEEP_SECONDS": "3",  # deliveries whose queue message a Redis restart lost
        "PAYMENT_CLAIM_STALE_SECONDS": "30",
        "DEPOSIT_POLL_SECONDS": "2",
        "DEPOSIT_CONFIRMATIONS": "2",
        "DEPOSIT_FINALITY_TAG": "",
        "DEPOSIT_START_BLOCK": "1",
        "FEEDS_MODE": "replay",
        "FEEDS_REPLAY_URL": f"http://127.0.0.1:{ports.hook_fail}",  # feeds are off; never a real site
        "RPC_PROBE_URLS": "",
        "RPC_PROBE_OWN_CHAIN": "",
        "LOG_LEVEL": "INFO",
    }


@dataclass
class Supervised:
    cmd: list[str]
    proc: subprocess.Popen[bytes] | None = None
    held: bool = False  # a fault keeps it down on purpose
    restarts: int = 0
    unexpected: list[tuple[float, int | None]] = field(default_factory=list)


class Supervisor:
    """Starts the service's processes (each in its own session, logging to logs/<name>.log) and
    restarts any that exits while not held, one second later, as systemd's Restart=always."""

    RESTART_DELAY = 1.0

    def __init__(self, commands: dict[str, list[str]], env: dict[str, str], logs: Path, timeline: Timeline) -> None:
        self.env = env
        self.logs = logs
        self.timeline = timeline
        self.procs = {name: Supervised(cmd) for name, cmd in commands.items()}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)

    def start(self, name: str) -> None:
        entry = self.procs[name]
        log: IO[bytes] = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - the process keeps it
        log.write(f"\n==== start at {self.timeline.now():.1f} s ====\n".encode())
        log.flush()
        entry.proc = subprocess.Popen(
            entry.cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        entry.held = False

    def start_all(self, names: list[str] | None = None) -> None:
        """Start the named processes (all not yet started by default) and the supervision."""
        for name in names if names is not None else [n for n, e in self.procs.items() if e.proc is None]:
            self.start(name)
        if not self._thread.is_alive():
            self._thread.start()

    def hold(self, name: str) -> None:
        with self._lock:
            self.procs[name].held = True

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Kill the process and its group (a Celery worker's pool children with it)."""
        proc = self.procs[name].proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)

    def release(self, name: str) -> None:
        """Start a held process again."""
        with self._lock:
            self.start(name)

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                for name, entry in self.procs.items():
                    proc = entry.proc
                    if entry.held or proc is None or proc.poll() is None:
                        continue
                    try:  # what it left in its group (a granian worker holding the port)
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    entry.unexpected.append((self.timeline.now(), proc.returncode))
                    self.timeline.note(
                        "supervisor", f"{name} exited unexpectedly (code {proc.returncode}); restarting it"
                    )
                    time.sleep(self.RESTART_DELAY)
                    self.start(name)
                    entry.restarts += 1

    def children(self, name: str) -> list[int]:
        """The direct child processes (granian's workers) of a supervised process."""
        proc = self.procs[name].proc
        if proc is None:
            return []
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == proc.pid:
                found.append(int(stat.parent.name))
        return sorted(found)

    def stop_all(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        for entry in self.procs.values():
            if entry.proc is not None and entry.proc.poll() is None:
                entry.proc.send_signal(signal.SIGTERM)
        # Long enough for a warm shutdown of idle processes; the run's verdict is already in.
        deadline = time.monotonic() + 6
        for entry in self.procs.values():
            if entry.proc is None:
                continue
            try:
                entry.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # whatever is left of the group (pool children)
                os.killpg(entry.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
