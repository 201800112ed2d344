"""The one Redis client of a process (None without REDIS_URL: the embedded local stack),
and the names of the shared hashes several layers write."""

from __future__ import annotations

from datetime import date
from functools import lru_cache

import redis
from django.conf import settings

from a2a_service.core.hotsettings import settings_cached

# Daily hit counters: one hash per day, field "<metric>|<key>". Views and the free-document
# layer add to it; catalog.counters moves the counts into DailyCounter rows.
COUNTER_HASH_PREFIX = "a2a:ctr:"


@lru_cache(maxsize=2)
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


@settings_cached  # asked several times per request by the layers in front of Django
def redis_client() -> redis.Redis | None:
    return _redis(settings.REDIS_URL) if settings.REDIS_URL else None


def channel(name: str) -> str:
    """A pub/sub channel of this deployment. Channels are not scoped by Redis database (keys
    are): services sharing one Redis server on different databases (the test suite's workers,
    a staging deployment) must not hear each other's invalidations."""
    client = redis_client()
    db = client.connection_pool.connection_kwargs.get("db", 0) if client is not None else 0
    return f"{name}:db{db}"


def counter_hash(day: date) -> str:
    return f"{COUNTER_HASH_PREFIX}{day.isoformat()}"
