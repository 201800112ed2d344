"""The faults, injected on a schedule during the load, each recorded as a window of time (from
its start to its recovery, plus a short settling tail) the report measures the routes in.

- web_kill: one of granian's worker processes killed with SIGKILL (granian respawns it);
- celery_kill: the default Celery worker (the deposits' and the reconciler's) killed with
  SIGKILL, held down, then started again;
- pg_restart: PostgreSQL restarted (`pg_ctl restart -m fast`, every client disconnected);
- redis_restart: redis-server killed and started again, empty (broker queues, cache, counters);
- rpc_outage: the chain RPC unreachable (the service's proxy in front of anvil closed) for
  --rpc-outage seconds; agents keep sending deposits straight to the chain meanwhile."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .chain import TcpProxy
from .stack import Postgres, Redis, Supervisor, Timeline

FAULTS = ("web_kill", "celery_kill", "pg_restart", "redis_restart", "rpc_outage")
# When each fault starts, as a fraction of the load's duration (calm before the first and after
# the last); a fault's window ends at its recovery plus SETTLE_SECONDS, or at the next fault.
AT = {"web_kill": 0.15, "celery_kill": 0.27, "pg_restart": 0.42, "redis_restart": 0.55, "rpc_outage": 0.68}
SETTLE_SECONDS = 10.0
CELERY_DOWN_SECONDS = 10.0
REDIS_DOWN_SECONDS = 3.0


@dataclass
class Window:
    name: str
    start: float  # seconds since the run's start (Timeline)
    recovered: float = 0.0
    end: float = 0.0
    detail: str = ""


@dataclass
class Services:
    supervisor: Supervisor
    postgres: Postgres
    redis: Redis
    proxy: TcpProxy
    rpc_cut: threading.Event


class Faults(threading.Thread):
    def __init__(
        self,
        services: Services,
        timeline: Timeline,
        names: list[str],
        *,
        load_seconds: float,
        rpc_outage_seconds: float,
    ) -> None:
        super().__init__(name="faults", daemon=True)
        self.s = services
        self.timeline = timeline
        self.names = [n for n in FAULTS if n in names]
        self.load_seconds = load_seconds
        self.rpc_outage_seconds = rpc_outage_seconds
        self.windows: list[Window] = []
        self.errors: list[str] = []
        self.load_start = 0.0
        self._cancel = threading.Event()

    def schedule(self) -> list[tuple[str, float]]:
        """(fault, seconds after the load's start), in order."""
        return [(name, AT[name] * self.load_seconds) for name in self.names]

    def run(self) -> None:
        self.load_start = self.timeline.now()
        actions: dict[str, Callable[[], str]] = {
            "web_kill": self.web_kill,
            "celery_kill": self.celery_kill,
            "pg_restart": self.pg_restart,
            "redis_restart": self.redis_restart,
            "rpc_outage": self.rpc_outage,
        }
        for name, at in self.schedule():
            if self._cancel.wait(max(0.0, self.load_start + at - self.timeline.now())):
                return
            window = Window(name=name, start=self.timeline.now())
            self.timeline.note("fault", f"{name} starts")
            try:
                window.detail = actions[name]()
            except Exception as exc:  # a fault the harness could not inject is reported, not hidden
                window.detail = f"injection failed: {type(exc).__name__}: {exc}"
                self.errors.append(f"{name}: {window.detail}")
            window.recovered = self.timeline.now()
            self.timeline.note("fault", f"{name} recovered ({window.detail})")
            self.windows.append(window)

    def cancel(self) -> None:
        self._cancel.set()

    def close_windows(self, load_end: float) -> list[Window]:
        """Each window's end: its recovery plus SETTLE_SECONDS, cut at the next fault and the load's end."""
        for i, w in enumerate(self.windows):
            nxt = self.windows[i + 1].start if i + 1 < len(self.windows) else load_end
            w.end = min(w.recovered + SETTLE_SECONDS, nxt, load_end)
        return self.windows

    # -- the faults -------------------------------------------------------------------------------
    def web_kill(self) -> str:
        workers = self.s.supervisor.children("web")
        if not workers:
            raise RuntimeError("granian has no worker processes to kill")
        victim = workers[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = self.s.supervisor.children("web")
            if victim not in now and len(now) >= len(workers):
                return f"worker {victim} killed, granian respawned it"
            time.sleep(0.2)
        return f"worker {victim} killed, NOT respawned within 60 s"

    def celery_kill(self) -> str:
        sup = self.s.supervisor
        sup.hold("worker")
        sup.kill("worker", signal.SIGKILL)
        time.sleep(CELERY_DOWN_SECONDS)
        sup.release("worker")
        return f"default worker killed (SIGKILL), restarted after {CELERY_DOWN_SECONDS:.0f} s"

    def pg_restart(self) -> str:
        t0 = time.monotonic()
        self.s.postgres.restart()
        return f"pg_ctl restart -m fast took {time.monotonic() - t0:.1f} s"

    def redis_restart(self) -> str:
        self.s.redis.kill()
        time.sleep(REDIS_DOWN_SECONDS)
        self.s.redis.start()
        return f"redis-server killed, started again empty after {REDIS_DOWN_SECONDS:.0f} s"

    def rpc_outage(self) -> str:
        self.s.rpc_cut.set()
        self.s.proxy.cut()
        try:
            self._cancel.wait(self.rpc_outage_seconds)
        finally:
            self.s.proxy.restore()
            self.s.rpc_cut.clear()
        return f"chain RPC unreachable for {self.rpc_outage_seconds:.0f} s"

    def summary(self) -> list[dict[str, Any]]:
        return [vars(w) for w in self.windows]
