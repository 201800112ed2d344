"""Daily hit counters (free hits, teaser views, 402 challenges) for the conversion funnel.

With Redis (production, CI) a hit is one HINCRBY on today's hash, off the database; a beat
task moves the counts into DailyCounter rows. Without Redis (the embedded local stack) a hit
updates its DailyCounter row directly. Reads add both, so the funnel is exact either way."""

from __future__ import annotations

import logging
from datetime import date, timedelta

import redis
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from a2a_service.core.locks import redis_lock
from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import COUNTER_HASH_PREFIX as HASH_PREFIX
from a2a_service.core.redisconn import counter_hash, redis_client
from catalog.models import DailyCounter

logger = logging.getLogger(__name__)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def counter_increment(*, metric: str, key: str, day: date | None = None, by: int = 1) -> None:
    day = day or timezone.now().date()
    key = key[:120]
    client = redis_client()
    if client is not None:
        try:
            client.hincrby(counter_hash(day), f"{metric}|{key}", by)
        except redis.RedisError:
            # Counting never fails the request it counts; while Redis is away hits are lost.
            log_throttled(
                logger, "counter-increment", "could not count a hit in Redis; hits are lost meanwhile"
            )
        return
    counter_add_to_db(metric=metric, key=key, day=day, by=by)


def counter_add_to_db(*, metric: str, key: str, day: date, by: int) -> None:
    """One conditional UPDATE; the row is created on first use. Two processes creating the
    same row at once: the loser's INSERT fails on the unique constraint and it retries the
    UPDATE, so no hit is lost."""
    for _ in range(3):
        if DailyCounter.objects.filter(day=day, metric=metric, key=key).update(count=F("count") + by):
            return
        try:
            with transaction.atomic():
                DailyCounter.objects.create(day=day, metric=metric, key=key, count=by)
            return
        except IntegrityError:
            continue


# Longer than a flush takes; a flusher that died holding the lease delays the next this long.
FLUSH_LOCK_SECONDS = 120


def counters_flush() -> int:
    """Move Redis counts into DailyCounter rows. The counts are subtracted from Redis only
    after the database transaction commits, and by the amount read, so hits that arrive
    meanwhile stay for the next flush. One flush at a time (a lease in Redis): two flushes
    reading the same counts would both add them to the database (two beats, each sending
    flush-counters, would count every hit twice). A flush that finds one running skips."""
    client = redis_client()
    if client is None:
        return 0
    with redis_lock("counters-flush", seconds=FLUSH_LOCK_SECONDS) as taken:
        return _flush(client) if taken else 0


def _flush(client: redis.Redis) -> int:
    moved = 0
    for raw in client.scan_iter(match=f"{HASH_PREFIX}*", count=100):
        name = raw.decode()
        day = date.fromisoformat(name.removeprefix(HASH_PREFIX))
        # This client does not decode responses: fields are bytes (redis types them bytes | str).
        counts = {_text(f): int(v) for f, v in client.hgetall(name).items() if int(v)}
        if not counts:
            continue
        with transaction.atomic():
            for field, n in counts.items():
                metric, _, key = field.partition("|")
                counter_add_to_db(metric=metric, key=key, day=day, by=n)
        pipe = client.pipeline()
        for field, n in counts.items():
            pipe.hincrby(name, field, -n)
        pipe.execute()
        moved += sum(counts.values())
    return moved


def counters_pending(*, since: date) -> dict[str, int]:
    """Counts still in Redis, per metric, from `since` on."""
    client = redis_client()
    if client is None:
        return {}
    totals: dict[str, int] = {}
    day = since
    today = timezone.now().date()
    names = []
    while day <= today:
        names.append(counter_hash(day))
        day += timedelta(days=1)
    pipe = client.pipeline()
    for name in names:
        pipe.hgetall(name)
    try:
        replies = pipe.execute()
    except redis.RedisError:
        # The funnel shows the counts already in the database rather than failing.
        log_throttled(logger, "counters-pending", "could not read pending hit counts from Redis")
        return {}
    for counts in replies:
        for field, n in counts.items():
            metric = field.decode().partition("|")[0]
            totals[metric] = totals.get(metric, 0) + int(n)
    return totals
