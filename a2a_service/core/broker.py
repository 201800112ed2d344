"""Celery's broker transport with Redis: kombu's Redis transport, with the one fault that made a
Redis restart stop a worker for good.

What happened (kombu 5.7, celery 5.7; reproduced by tests/e2e/test_broker_restart.py): the worker
loses the broker while a BRPOP is in flight and a task it received is still running (so its
message is unacknowledged). Celery's consumer first calls `Connection.collect()`: closing the
channel fails on the dead BRPOP socket (a connection error, ignored), and collect then closes the
transport anyway, which sets `transport.client = None` while the channel stays registered as the
connection's default channel. Celery then calls `Connection.close()`, which closes that default
channel again; closing restores the unacknowledged message, which needs a new Redis client,
whose parameters kombu reads from `transport.client.hostname`: AttributeError. AttributeError is
not one of the connection errors celery ignores there, so the worker exits with
`CRITICAL Unrecoverable error: AttributeError("'NoneType' object has no attribute 'hostname'")`.

Here a channel whose transport is already closed raises a connection error instead, which every
close path ignores: the restore is skipped (the message stays in Redis's unacked hash, restored
after the visibility timeout; without persistence it is gone with the restart, and the
webhook sweeper queues its delivery again from the database), and the worker reconnects."""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise RedisConnectionError("the broker connection of this channel is already closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
