"""Settlements broadcast but not yet confirmed, remembered across every process that settles.

When a settle's wait for its receipt fails, the x402 facilitator schemes remember the
broadcast transaction under a key derived from the payment (its signature), so that the
retry of the same payment reconciles against that transaction instead of verifying and
broadcasting another (which, once the first is mined, reverts on the spent authorization:
a channel deposit refused although its money reached the channel). The SDK's default store
is a dict in one process. Here two granian workers, and every node, settle with one key, and
a retry reaches whichever process the balancer picks, so the store is Redis (REDIS_URL,
every production deployment); the embedded local stack, without Redis, keeps the SDK's.

The hash kept is the one that can still be mined: when the receipt did not come, this
process's signer may have replaced the stuck transaction by the same call with more gas
(service.HealingWeb3Signer), and only this process knows the replacement.

Failures keep the SDK's guarantees: a write that fails is reported by the SDK as a failed
settlement naming the transaction (never a pending one a retry could not find), and a read
that fails finds nothing, so the retry verifies again and the spent authorization refuses
a second transfer on chain."""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from x402.pending_settlement_store import (
    PENDING_SETTLEMENT_TTL_SECONDS,
    InMemoryPendingSettlementStore,
    PendingSettlementStore,
)

from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import redis_client

logger = logging.getLogger(__name__)

KEY_PREFIX = "a2a:x402:pending:"


class RedisPendingSettlements:
    """The SDK's PendingSettlementStore in Redis: one key per pending payment, expiring after
    the SDK's own TTL."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        current: Callable[[str], str] = str,
        ttl_seconds: float = PENDING_SETTLEMENT_TTL_SECONDS,
    ) -> None:
        self._client = client
        self._current = current  # the hash that now carries a transaction (its replacement's)
        self._ttl_ms = int(ttl_seconds * 1000)

    def get(self, key: str) -> str | None:
        try:
            value = self._client.get(KEY_PREFIX + key)
        except redis.RedisError as exc:
            log_throttled(
                logger,
                "pending-settlements-read",
                "pending settlements: Redis unreadable (%s); the retry verifies again",
                exc,
                level=logging.WARNING,
                exc_info=False,
            )
            return None
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    def set(self, key: str, tx_hash: str) -> None:
        # Raises: the SDK then reports a failed settlement naming the transaction.
        self._client.set(KEY_PREFIX + key, self._current(tx_hash), px=self._ttl_ms)

    def delete(self, key: str) -> None:
        try:
            self._client.delete(KEY_PREFIX + key)
        except redis.RedisError:  # it expires anyway; a confirmed outcome is not masked
            pass


def pending_settlements(redis_url: str, *, current: Callable[[str], str] = str) -> PendingSettlementStore:
    """Shared by every process where the deployment has Redis, else this process's own (where
    a replacement is found by the signer that made it)."""
    client = redis_client() if redis_url else None
    if client is None:
        return InMemoryPendingSettlementStore()
    return RedisPendingSettlements(client, current=current)
