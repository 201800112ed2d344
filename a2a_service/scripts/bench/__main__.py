"""`make bench`. See a2a_service/scripts/bench/__init__.py."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import time

from a2a_service.scripts.bench.cpu import cpu_scenario
from a2a_service.scripts.bench.free import free_news_scenario, scenario
from a2a_service.scripts.bench.paid import x402_scenario
from a2a_service.scripts.bench.phases import phases_scenario
from a2a_service.scripts.bench.schemes import schemes_scenario
from a2a_service.scripts.bench.servers import bench_env, free_port, prepare, stop
from a2a_service.scripts.bench.targets import ratios_report
from a2a_service.scripts.bench.webhooks import webhook_scenario


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


def run_scenarios(env: dict[str, str]) -> int:
    ensure_postgres(env)
    print(f"database: {env.get('DATABASE_URL', 'SQLite (.run/bench)')}; redis: {env['REDIS_URL']}")
    only = os.environ.get("BENCH_ONLY", "")
    if only == "cpu":  # in this process: it sets Django up (prepare included)
        cpu_scenario(env)
        return ratios_report()
    if only == "phases":  # in this process too
        phases_scenario(env)
        return ratios_report()
    prepare(env)
    if only in ("", "x402"):
        x402_scenario(env)
    if only in ("", "schemes"):
        schemes_scenario(env)
    if only in ("", "free"):
        free_news_scenario(env)
    if only in ("", "webhooks"):
        webhook_scenario(env)
    if only in ("", "server"):
        scenario("web server", "/api/a2a/agents/news/status", ["granian", "gunicorn"], env)
    return ratios_report()


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
            # BENCH_ONLY=cpu runs the service in this process: its Redis subscribers would log
            # the server's going away.
            logging.disable(logging.CRITICAL)
            stop(redis_proc)


if __name__ == "__main__":
    sys.exit(main())
