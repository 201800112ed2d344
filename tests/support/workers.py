"""A real Celery worker process for the tests that need the broker in the loop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.support import ROOT


def start_celery_worker(queue: str, *, log_path=None, loglevel: str = "WARNING", **extra_env: str):
    """A real Celery worker process (solo pool) on the test database, consuming one queue.
    log_path: where its output goes (else nowhere)."""
    from django.db import connection

    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        **extra_env,
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "a2a_service",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            loglevel,
            "--without-gossip",
            "--without-mingle",
            "--queues",
            queue,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL if log_path is None else open(log_path, "ab"),
        stderr=subprocess.DEVNULL if log_path is None else subprocess.STDOUT,
        start_new_session=True,
    )


def stop_process(proc, *, grace: float = 20) -> None:
    """Stop a process started in its own session (a Celery worker, a server): SIGTERM to its
    group, then SIGKILL if it is still there after `grace` seconds. A worker that outlived its
    test (a warm shutdown slower than the wait on a loaded machine) would consume the next
    test's tasks."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)

