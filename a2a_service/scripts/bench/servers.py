"""The bench's servers: started on free ports, loaded by wrk, stopped; Django's shell on the
bench's database."""

from __future__ import annotations

import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
WORKERS = os.environ.get("BENCH_WORKERS", "2")
DURATION = os.environ.get("BENCH_SECONDS", "5")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CONNECTIONS = os.environ.get("BENCH_CONNECTIONS", "32")
# granian's threads per worker process for WSGI. One, as in production (docs/performance.md): measured
# here, a second thread per process lowered both the challenge and the credit call (GIL).
THREADS = os.environ.get("BENCH_THREADS", "1")
# Request threads per worker of the grouped-debit ceiling (debitalone.py): the calls a committer can group.
GROUP_THREADS = os.environ.get("BENCH_GROUP_THREADS", "16")
# How long a server may take to answer its first request (more on a loaded machine).
READY_SECONDS = float(os.environ.get("BENCH_READY_SECONDS", "30"))


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
        # The bench registers its 32 agents' wallets from one requester in a minute (20 by default).
        "OWNERSHIP_CHALLENGES_PER_REQUESTER": "100000",
        "PYTHONUNBUFFERED": "1",
    }
    return env


def prepare(env: dict[str, str]) -> None:
    for cmd in (["migrate", "--noinput", "-v", "0"], ["seed_catalog"]):
        subprocess.run(
            [sys.executable, "manage.py", *cmd], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
        )


def start(kind: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    if kind in ("x402-fastapi", "fastapi-plain", "x402-facilitator"):
        app = {
            "x402-fastapi": "reference:app",
            "fastapi-plain": "reference:plain_app",
            "x402-facilitator": "reference_facilitator:app",
        }[kind]
        cmd = [
            str(BIN / "uvicorn"),
            "a2a_service.scripts.bench." + app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            WORKERS,
            "--log-level",
            "warning",
        ]
    elif kind in ("granian", "granian-raw", "debit-one", "debit-grouped"):
        app = {
            "granian-raw": "a2a_service.scripts.bench.rawbytes:application",
            "debit-one": "a2a_service.scripts.bench.debitalone:one_per_call",
            "debit-grouped": "a2a_service.scripts.bench.debitalone:grouped",
        }.get(kind, "a2a_service.wsgi:application")
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
            GROUP_THREADS if kind == "debit-grouped" else THREADS,
            "--log-level",
            "warning",
            app,
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


def wait_ready(url: str, timeout: float | None = None, status: int = 200) -> None:
    deadline = time.monotonic() + (READY_SECONDS if timeout is None else timeout)
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


def raw_ceiling(url: str, env: dict[str, str], name: str, *, status: int) -> tuple[subprocess.Popen, str]:
    """granian serving, from constants, the bytes `url` answers now (status, headers, body):
    the raw-WSGI ceiling of that answer (rawbytes.py). Returns the server and its URL."""
    from a2a_service.scripts.bench.rawbytes import answer_save

    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            code, reason, headers, body = r.status, r.reason, r.getheaders(), r.read()
    except urllib.error.HTTPError as exc:
        code, reason, headers, body = exc.code, exc.reason, exc.headers.items(), exc.read()
    if code != status:
        raise RuntimeError(f"{url} answered {code}, not {status}")
    saved = ROOT / ".run" / "bench" / f"raw-{name}.json"
    answer_save(saved, f"{code} {reason}", list(headers), body)
    port = free_port()
    proc = start("granian-raw", port, {**env, "BENCH_RAW_ANSWER": str(saved)})
    raw_url = f"http://127.0.0.1:{port}/"
    wait_ready(raw_url, status=status)
    return proc, raw_url


def manage_shell(script: str, env: dict[str, str]) -> str:
    """Run Python in the service's Django context (its database); returns the last line printed."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:  # say why: the bench stops here
        raise RuntimeError(f"manage.py shell failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]
