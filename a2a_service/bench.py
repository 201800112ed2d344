"""`make bench`: measured side by side, in one run, on this machine.

Scenario "web server": the same Django app and endpoint served by granian (WSGI, our
production server) and by gunicorn sync workers (the reference), each with the same
number of worker processes, loaded by wrk from a second process. Runs alternate and
repeat; the medians and their ratio are printed. The machine is small and noisy:
read ratios, not absolute numbers."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORKERS = os.environ.get("BENCH_WORKERS", "2")
DURATION = os.environ.get("BENCH_SECONDS", "5")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CONNECTIONS = os.environ.get("BENCH_CONNECTIONS", "32")


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
    if kind == "granian":
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
            "1",
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


def wait_ready(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def parse_wrk(out: str) -> dict[str, float]:
    def ms(text: str) -> float:
        value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = ms(re.search(r"\s50%\s+(\S+)", out).group(1))
    p99 = ms(re.search(r"\s99%\s+(\S+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": p50, "p99": p99, "non2xx": float(errors.group(1)) if errors else 0.0}


def run_wrk(url: str) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{DURATION}s", "--latency", url],
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


def main() -> int:
    if shutil.which("wrk") is None:
        print("wrk is not installed (make bench installs it with apt-get)", file=sys.stderr)
        return 2
    env = bench_env()
    prepare(env)
    scenario("web server", "/api/a2a/agents/news/status", ["granian", "gunicorn"], env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
