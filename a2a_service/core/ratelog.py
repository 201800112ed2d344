"""Rate-limited logging for failures that repeat on every request (Redis or a cache down).

Without it an outage writes one traceback per request, burying everything else in the log.
With it each kind of failure (its key) is logged with its traceback at most once per
LOG_REPEAT_SECONDS per process; the next record says how many were left out meanwhile."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

_lock = threading.Lock()
# key -> (monotonic time of the last record, occurrences left out since)
_last: dict[str, tuple[float, int]] = {}
_now = time.monotonic  # tests move this clock instead of waiting an interval


def _interval() -> float:
    from django.conf import settings

    return float(getattr(settings, "LOG_REPEAT_SECONDS", 60.0))


def log_throttled(
    logger: logging.Logger,
    key: str,
    msg: str,
    *args: Any,
    level: int = logging.WARNING,
    exc_info: bool = True,
) -> bool:
    """Log `msg` (with the current exception's traceback) unless a record of `key` was
    logged less than LOG_REPEAT_SECONDS ago. Returns whether it was logged."""
    if not logger.isEnabledFor(level):
        return False
    now = _now()
    with _lock:
        last, left_out = _last.get(key, (None, 0))
        if last is not None and now - last < _interval():
            _last[key] = (last, left_out + 1)
            return False
        _last[key] = (now, 0)
    if left_out:
        msg = f"{msg} (and {left_out} more like it since the last report)"
    logger.log(level, msg, *args, exc_info=exc_info, stacklevel=2)
    return True


def log_throttled_reset() -> None:
    """Forget every key (tests)."""
    with _lock:
        _last.clear()
