"""`make run`'s supervisor (a2a_service/devstack.py): a process that exits unexpectedly is
started again; one that keeps exiting stops the stack instead of restarting forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from a2a_service.devstack import Supervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
CRASHER = [sys.executable, "-c", "import sys; sys.exit(3)"]


def start(cmd: list[str]) -> subprocess.Popen:
    return subprocess.Popen(cmd, start_new_session=True)


def poll_until(supervisor: Supervisor, done, seconds: float = 30) -> str | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reason = supervisor.poll()
        if reason is not None or done():
            return reason
        time.sleep(0.05)
    raise AssertionError("the supervisor did not get there")


def stop_all(supervisor: Supervisor) -> None:
    for proc in supervisor.procs.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_killed_process_is_started_again_and_the_others_keep_running():
    supervisor = Supervisor(start, delays=(0.0,), limit=3, window=60)
    supervisor.add("worker", SLEEPER)
    supervisor.add("webhooks", SLEEPER)
    try:
        first = supervisor.procs["webhooks"]
        other = supervisor.procs["worker"]
        os.kill(first.pid, signal.SIGKILL)
        reason = poll_until(supervisor, lambda: supervisor.procs["webhooks"] is not first)
        assert reason is None
        again = supervisor.procs["webhooks"]
        assert again.pid != first.pid and again.poll() is None and first.returncode == -signal.SIGKILL
        assert supervisor.procs["worker"] is other and other.poll() is None
    finally:
        stop_all(supervisor)


def test_a_crash_looping_process_stops_the_stack_after_the_limit():
    supervisor = Supervisor(start, delays=(0.0,), limit=3, window=60)
    supervisor.add("beat", CRASHER)
    starts = set()
    try:
        reason = poll_until(supervisor, lambda: starts.add(supervisor.procs["beat"].pid) and False)
        assert reason is not None and reason.startswith("beat exited 3 times in 60 s (last with 3)")
        assert len(starts) == 3  # started, then started again twice before giving up
    finally:
        stop_all(supervisor)


def test_exits_older_than_the_window_do_not_count():
    supervisor = Supervisor(start, delays=(0.0,), limit=2, window=10)
    supervisor.add("web", CRASHER)
    try:
        supervisor.procs["web"].wait()
        assert supervisor.poll(now=100.0) is None  # first exit: restarted at once (delay 0)
        supervisor.procs["web"].wait()
        assert supervisor.poll(now=200.0) is None  # the second, 100 s later: not a loop
        supervisor.procs["web"].wait()
        assert supervisor.poll(now=205.0) is not None  # two within 10 s
    finally:
        stop_all(supervisor)
