"""One row per conflict key before any upsert, for every feed.

A source may send the same row twice in one answer (a bar repeated at a page's edge, a market
listed on two pages), and one symbol may be asked for twice (MARKET_SYMBOLS and the tokenized
watchlist). PostgreSQL refuses an INSERT ... ON CONFLICT DO UPDATE whose rows repeat a key
("cannot affect row a second time"), which would fail the whole venue; SQLite quietly keeps the
last. So every upsert goes through `unique_on` (or `bulk_upsert`, which keys on the conflict's
own columns): the last row of each key is kept, as SQLite would, and the repeats are recorded
on the pass as an oddity (FeedState.last_oddities and last_note), never a failure."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Literal, TypeVar

from django.db import models

from catalog.feeds.registry import FeedPass

T = TypeVar("T")
M = TypeVar("M", bound=models.Model)
EXAMPLES = 3


def unique_on(
    rows: Iterable[T],
    *,
    key: Callable[[T], Hashable],
    what: str,
    feed_pass: FeedPass,
    keep: Literal["last", "first"] = "last",
) -> list[T]:
    """`rows` with one per `key`, in the order each key was first seen: the last one sent (the
    newest reading of a repeated row), or the first when the rows are ranked (`keep`). A key
    sent more than once is an oddity of the pass."""
    kept: dict[Hashable, T] = {}
    sent: dict[Hashable, int] = {}
    for row in rows:
        k = key(row)
        if keep == "last" or k not in kept:
            kept[k] = row  # a dict keeps the first position of a key, whatever value it takes
        sent[k] = sent.get(k, 0) + 1
    repeated = {k: n for k, n in sent.items() if n > 1}
    if repeated:
        extra = sum(n - 1 for n in repeated.values())
        examples = ", ".join(f"{_label(k)} x{n}" for k, n in list(repeated.items())[:EXAMPLES])
        more = f" and {len(repeated) - EXAMPLES} more" if len(repeated) > EXAMPLES else ""
        feed_pass.oddity(
            f"{what}: {extra} repeated row(s) dropped ({examples}{more}); the last of each kept",
            count=extra,
        )
    return list(kept.values())


def bulk_upsert(
    model: type[M],
    rows: Sequence[M],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
    what: str,
    feed_pass: FeedPass,
    batch_size: int | None = None,
) -> int:
    """INSERT ... ON CONFLICT (unique_fields) DO UPDATE (update_fields) of `rows`, made unique
    on exactly the conflict's columns first. Returns the rows written."""
    unique = unique_on(
        rows,
        key=lambda row: tuple(getattr(row, name) for name in unique_fields),
        what=what,
        feed_pass=feed_pass,
    )
    model._default_manager.bulk_create(
        unique,
        batch_size=batch_size,
        update_conflicts=True,
        unique_fields=list(unique_fields),
        update_fields=list(update_fields),
    )
    return len(unique)


def _label(key: Hashable) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return "/".join(p.isoformat() if hasattr(p, "isoformat") else str(p) for p in parts)[:80]
