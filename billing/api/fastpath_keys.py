"""The credit fast path's memory of issued keys (billing/api/credit_fastpath.py): which active
keys each key prefix stands for, so a keyed call finds its account without a query."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Callable
from dataclasses import dataclass

from billing.credits import KEY_LOOKUP_CHARS, KEY_PREFIX

KEY_CACHE_MAX_PREFIXES = 20_000


@dataclass(frozen=True)
class KeyHolder:
    key_id: int
    key_hash: str
    account_id: int
    wallet_address: str


class KeyCache:
    """This process's map from key prefix to the active keys with that prefix. An entry can
    outlive a revocation: the debit statement re-checks the key, and a refused debit drops
    the entry. Unknown keys are not remembered (Django answers them, rate-limited)."""

    def __init__(self) -> None:
        self._by_prefix: dict[str, list[KeyHolder]] = {}
        self._lock = threading.Lock()

    def find(self, key: str, *, load: Callable[[str], list[KeyHolder]]) -> KeyHolder | None:
        if not key.startswith(KEY_PREFIX) or len(key) < KEY_LOOKUP_CHARS + 8:
            return None
        prefix = key[:KEY_LOOKUP_CHARS]
        holders = self._by_prefix.get(prefix)
        if holders is None:
            holders = load(prefix)
            if not holders:
                return None
            with self._lock:
                if len(self._by_prefix) >= KEY_CACHE_MAX_PREFIXES:
                    self._by_prefix.clear()
                self._by_prefix[prefix] = holders
        digest = hashlib.sha256(key.encode()).hexdigest()
        for holder in holders:
            if hmac.compare_digest(holder.key_hash, digest):
                return holder
        return None

    def drop(self, key: str) -> None:
        with self._lock:
            self._by_prefix.pop(key[:KEY_LOOKUP_CHARS], None)

    def clear(self) -> None:
        with self._lock:
            self._by_prefix.clear()


KEYS = KeyCache()
