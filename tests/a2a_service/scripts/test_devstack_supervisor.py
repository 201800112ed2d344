"""`make run`'s supervisor (a2a_service/scripts/devstack.py): a process that exits unexpectedly
is started again; one that keeps exiting stops the stack instead of restarting forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from a2a_service.scripts.devstack import Supervisor

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


def test_every_production_process_has_a_systemd_unit_that_restarts_it():
    """docs/deployment/systemd/: a unit for each process `make run` supervises (the replay server
    is local only), restarted always and never given up on, running the same command."""
    import configparser
    import shlex
    from pathlib import Path

    from a2a_service.scripts.devstack import ROOT, _commands

    units = ROOT / "docs" / "deployment" / "systemd"
    expected = {"web": "a2a-web", "worker": "a2a-worker", "webhooks": "a2a-webhooks", "beat": "a2a-beat"}
    commands = _commands("8000")
    assert set(commands) == set(expected)  # a new process needs its unit
    for name, unit in [*expected.items(), ("facilitator", "a2a-facilitator")]:
        parser = configparser.RawConfigParser(strict=False)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read(units / f"{unit}.service")
        service = parser["Service"]
        assert service["Restart"] == "always" and parser["Unit"]["StartLimitIntervalSec"] == "0", unit
        assert service["EnvironmentFile"] == "/etc/a2a/a2a.env" and "a2a.target" in parser["Install"]["WantedBy"]
        argv = shlex.split(service["ExecStart"])
        assert Path(argv[0]).name == ("granian" if name in ("web", "facilitator") else "celery"), unit
        if name == "facilitator":
            assert argv[-1] == commands["web"][-1]  # the same application, on an internal address
            continue
        local = commands[name]
        # The same program and the options that decide what it does (not host, port or sizes).
        for option in ("worker", "beat", "--interface", "--scheduler", "--respawn-failed-workers", "--queues"):
            assert (option in argv) == (option in local), (unit, option)
        for option in ("--interface", "--scheduler"):
            if option in local:
                assert argv[argv.index(option) + 1] == local[local.index(option) + 1], (unit, option)
        if "--queues" in argv:  # the default of WEBHOOK_DELIVERY_QUEUE
            assert argv[argv.index("--queues") + 1] == "webhooks"
        if name == "web":
            assert argv[-1] == local[-1]
