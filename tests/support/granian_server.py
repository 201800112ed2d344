"""A real granian server (`make run`'s web command, a2a_service/scripts/devstack.py) on the test
database, for tests that need what only real processes show: several workers, persistent
connections."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from django.db import connection

from billing.chain.localchain import FACILITATOR, dev_account, free_port
from tests.support import ROOT


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@contextmanager
def granian(
    *, rpc_url: str, run_dir: Path, workers: int = 1, threads: int = 2, ready: str = "", **extra_env: str
) -> Iterator[tuple[subprocess.Popen, str, Path]]:
    """(process, base URL, log) of a server with the local settings (DEBUG off) settling x402
    payments in process on `rpc_url`, once `ready` (a path) answers and every worker is up."""
    from a2a_service.scripts.devstack import _commands

    db = connection.settings_dict
    port = str(free_port())
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.local",
        "DJANGO_DEBUG": "false",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "A2A_RUN_DIR": str(run_dir),
        "CHAIN_RPC_URL": rpc_url,
        "FACILITATOR_URL": "",
        "FACILITATOR_PRIVATE_KEY": "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x"),
        "PYTHONUNBUFFERED": "1",
        **extra_env,
    }
    cmd = _commands(port)["web"]
    cmd[cmd.index("--workers") + 1] = str(workers)
    cmd[cmd.index("--blocking-threads") + 1] = str(threads)
    log = run_dir / "granian.log"
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if requests.get(base + ready, timeout=5).status_code < 500 and len(children(proc.pid)) == workers:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.3)
        yield proc, base, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
