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
        self._pid = 0
        self._lock = threading.Lock()

    def ensure(self, start: Callable[[], None]) -> None:
        pid = os.getpid()
        if self._pid == pid:
            return
        with self._lock:
            if self._pid == pid:
                return
            self._pid = pid
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
