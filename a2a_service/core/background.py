"""Background threads a web process runs for itself (flushing buffered counts, listening for
invalidations). They start once per process, and again in a forked worker, which does not
inherit its parent's threads."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable

from a2a_service.core.ratelog import log_throttled

logger = logging.getLogger(__name__)


class PerProcess:
    """Runs a start function once in each process."""

    def __init__(self) -> None:
        self._started = False
        self._lock = threading.Lock()
        # A flag reset in a forked child, not a pid check per call (asked on every request).
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._started = False
        self._lock = threading.Lock()

    def ensure(self, start: Callable[[], None]) -> None:
        if self._started:
            return
        with self._lock:
            if self._started:
                return
            self._started = True
            start()


def repeat_every(seconds: float, func: Callable[[], None], *, name: str) -> None:
    """Call func every `seconds` in a daemon thread, and once more when the process exits."""

    def loop() -> None:
        while True:
            time.sleep(seconds)
            try:
                func()
            except Exception:  # the thread must outlive a failure, or the work stops for good
                log_throttled(
                    logger, f"background-{name}", "background task %s failed", name, level=logging.ERROR
                )

    threading.Thread(target=loop, name=name, daemon=True).start()
    atexit.register(func)
