"""Locks for work that must run once at a time across every process and node: scheduled
passes that beat sends, when two beats run (one started by mistake, or a second node's), or one
pass outlives its interval.

- advisory_xact_lock: a PostgreSQL advisory lock held until the current transaction ends; a
  second caller waits, then sees what the first committed. For work that is one transaction.
- redis_lock: a lease in Redis with an owner token; a second caller does not wait (it skips
  this pass). For work that spans a transaction and Redis writes after it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from a2a_service.core.redisconn import redis_client

LOCK_PREFIX = "a2a:lock:"
# Deletes the key only while it still holds this owner's token: a lease that ran out and was
# taken by another process is not released by the first.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def advisory_xact_lock(name: str) -> None:
    """Wait for the advisory lock `name`, held until the current transaction ends. Call it
    first inside `transaction.atomic()`, so everything after it reads what an earlier holder
    committed. On SQLite (the embedded local stack) a no-op: its transactions take the write
    lock when they begin (IMMEDIATE), so writers already run one at a time."""
    if connection.vendor != "postgresql":
        return
    if not connection.in_atomic_block:
        raise RuntimeError("advisory_xact_lock is held until the transaction ends: call it inside atomic()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [name])


@contextmanager
def redis_lock(name: str, *, seconds: int) -> Iterator[bool]:
    """Take the lease `name` for at most `seconds` (a process that dies holding it delays the
    next holder that long at most). Yields whether it was taken; without Redis, True (one
    process does the work: the embedded local stack)."""
    client = redis_client()
    if client is None:
        yield True
        return
    key, token = LOCK_PREFIX + name, secrets.token_hex(8)
    taken = bool(client.set(key, token, nx=True, ex=seconds))
    try:
        yield taken
    finally:
        if taken:
            client.eval(_RELEASE, 1, key, token)
