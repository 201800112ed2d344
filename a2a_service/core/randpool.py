"""Random bytes for per-response tokens (request ids, sign-in nonces), drawn from the OS in
blocks.

os.urandom is a system call per token: on a loaded machine it measured tens of microseconds,
more than the rest of an unpaid 402. The bytes here are the OS's own (os.urandom, as
`secrets` uses), only fetched POOL_BYTES at a time and handed out once each. A forked child
drops its parent's block (os.register_at_fork), so two workers never hand out the same bytes."""

from __future__ import annotations

import os
import threading

POOL_BYTES = 4096


class RandomPool:
    def __init__(self) -> None:
        self._block = b""
        self._pos = 0
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._block, self._pos = b"", 0

    def token_bytes(self, n: int) -> bytes:
        with self._lock:
            pos = self._pos
            if pos + n > len(self._block):
                self._block, pos = os.urandom(max(POOL_BYTES, n)), 0
            self._pos = pos + n
            return self._block[pos : pos + n]

    def token_hex(self, n: int) -> str:
        return self.token_bytes(n).hex()


POOL = RandomPool()
token_bytes = POOL.token_bytes
token_hex = POOL.token_hex
