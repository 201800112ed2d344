"""Callers released together: each in its own thread (so each with its own database
connection), started at one barrier; what each returned, in no particular order, and any
exception raised in a thread reported to the test instead of lost with it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connections

T = TypeVar("T")


def at_once(callers: int, call: Callable[[], T], *, timeout: float = 60) -> list[T]:
    start = threading.Barrier(callers)
    results: list[T] = []
    failures: list[BaseException] = []

    def run() -> None:
        try:
            start.wait(timeout=30)
            results.append(call())
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert failures == [], failures
    assert len(results) == callers, f"{callers - len(results)} caller(s) did not finish"
    return results
