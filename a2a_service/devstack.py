"""`make run`: the whole local stack in one foreground process.

Starts the web server (granian, WSGI), a Celery worker and Celery beat, each in its
own process group, and stops all of them on Ctrl-C (or when any one of them dies),
so nothing is left running behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
        "beat": [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(RUN / "celerybeat-schedule"),
        ],
    }


def main() -> int:
    port = os.environ.get("PORT", "8000")
    for folder in ("broker/queue", "broker/processed", "results", "cache"):
        (RUN / folder).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local")
    procs: dict[str, subprocess.Popen] = {}
    stopping = False

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    for name, cmd in _commands(port).items():
        # A session of its own: the terminal's Ctrl-C reaches only this supervisor, which
        # then stops each child in order instead of all of them racing.
        procs[name] = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    print(
        f"\nlocal stack up: http://127.0.0.1:{port}/api/a2a/discovery/storefront  (admin: /admin/)",
        flush=True,
    )
    print("Ctrl-C stops web, worker and beat.\n", flush=True)

    exit_code = 0
    while not stopping:
        for name, proc in procs.items():
            if proc.poll() is not None:
                print(f"{name} exited with {proc.returncode}; stopping the stack", flush=True)
                exit_code = proc.returncode or 1
                stopping = True
                break
        time.sleep(0.3)

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
