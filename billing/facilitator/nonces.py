"""One nonce sequence per gas key across every process that settles with it.

The x402 signer keeps its next nonce in the memory of one process. Two processes settling with
the same key (two granian workers with settlement in process, two web nodes, a separate
facilitator next to them) each read the chain's pending count, take the same nonce and broadcast
two different transactions with it: the second is refused as `replacement transaction
underpriced` and its payment fails. Here the allocation and the broadcast happen under one lock
per key and chain, shared by all processes: in Redis (REDIS_URL, every production deployment),
or, without Redis (the embedded local stack, one machine), a locked file in RUN_DIR. The nonce
is the larger of the chain's pending count (read under the lock, after the previous holder's
broadcast) and the shared counter the previous holder left (a guard against an RPC node behind
a load balancer that has not seen that broadcast yet). The counter expires after
COUNTER_TTL_SECONDS and is dropped after a failed send or a receipt timeout, so a transaction
that never reached the pool leaves no gap: the chain's count decides again."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import redis

# The lock outlives a holder that died while holding it by at most this long. Longer than an
# allocation and a broadcast can take: three RPC requests, each bounded by web3's 30 s timeout.
LOCK_TTL_SECONDS = 120
# How long the shared counter is trusted over the chain's pending count.
COUNTER_TTL_SECONDS = 600


class NonceLockUnavailable(Exception):
    """The key's lock could not be taken (Redis unreachable, or held too long by another
    process): nothing was broadcast, so the payment may be sent again."""


class NonceSequence(Protocol):
    def hold(self) -> AbstractContextManager[None]:
        """The key's lock, across processes."""
        ...

    def next(self) -> int | None:
        """The next nonce the previous holder left, if recent (only while held)."""
        ...

    def advance(self, next_nonce: int) -> None:
        """After a broadcast with next_nonce - 1 (only while held)."""
        ...

    def forget(self) -> None:
        """The chain's pending count decides the next nonce."""
        ...


class RedisNonces:
    def __init__(self, client: redis.Redis, key: str, *, wait_seconds: float) -> None:
        self._client, self._key, self._wait = client, key, wait_seconds

    @contextmanager
    def hold(self) -> Iterator[None]:
        # Polled every 10 ms (redis-py's default, 100 ms, would add up to that to each settlement
        # that waits behind another).
        lock = self._client.lock(
            f"{self._key}:lock", timeout=LOCK_TTL_SECONDS, sleep=0.01, blocking_timeout=self._wait
        )
        try:
            acquired = lock.acquire()
        except redis.RedisError as exc:
            raise NonceLockUnavailable(f"the facilitator's nonce lock is unavailable: {exc}") from exc
        if not acquired:
            raise NonceLockUnavailable(f"the facilitator's nonce lock was busy for {self._wait:.0f} s")
        try:
            yield
        finally:
            try:
                lock.release()
            except redis.RedisError:  # expired, or Redis went away: its TTL frees it
                pass

    def next(self) -> int | None:
        try:
            value = self._client.get(self._key)
        except redis.RedisError as exc:
            raise NonceLockUnavailable(f"the facilitator's nonce counter is unavailable: {exc}") from exc
        return None if value is None else int(value)

    def advance(self, next_nonce: int) -> None:
        try:
            self._client.set(self._key, next_nonce, ex=COUNTER_TTL_SECONDS)
        except redis.RedisError:  # broadcast already: the chain's pending count holds it too
            pass

    def forget(self) -> None:
        try:
            self._client.delete(self._key)
        except redis.RedisError:
            pass


class FileNonces:
    """The counter in a file locked with flock (every process of one machine): `<next> <until>`."""

    # flock excludes other open files, not other threads sharing one: threads of this process
    # queue on this lock first.
    _threads = threading.Lock()

    def __init__(self, path: Path, *, wait_seconds: float) -> None:
        self._path, self._wait = path, wait_seconds
        self._fd: int | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        if not self._threads.acquire(timeout=self._wait):
            raise NonceLockUnavailable(f"the facilitator's nonce lock was busy for {self._wait:.0f} s")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                self._lock(fd)
                self._fd = fd
                yield
            finally:
                self._fd = None
                os.close(fd)  # closing releases the flock
        finally:
            self._threads.release()

    def _lock(self, fd: int) -> None:
        deadline = time.monotonic() + self._wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise NonceLockUnavailable(
                        f"the facilitator's nonce lock was busy for {self._wait:.0f} s"
                    ) from None
                time.sleep(0.005)

    def next(self) -> int | None:
        assert self._fd is not None, "next() outside hold()"
        os.lseek(self._fd, 0, os.SEEK_SET)
        parts = os.read(self._fd, 64).split()
        if len(parts) != 2 or float(parts[1]) < time.time():
            return None
        return int(parts[0])

    def _write(self, text: str) -> None:
        assert self._fd is not None, "written outside hold()"
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, text.encode())

    def advance(self, next_nonce: int) -> None:
        self._write(f"{next_nonce} {time.time() + COUNTER_TTL_SECONDS}")

    def forget(self) -> None:
        if self._fd is not None:
            self._write("")
            return
        with self.hold():
            self._write("")
