"""One pass of one feed source: locked, inside one transaction, recorded on its FeedState.

The lock is the FeedState row itself: a pass claims it with a conditional update
(`running_since` empty or stale), so two workers (or beat and an operator) never run the same
source at once, while different sources run side by side. The pass's writes are one
transaction: a failure leaves nothing half-written. A failure backs the source off
exponentially (next_attempt_at); scheduled passes skip a source until then.

FEEDS_MODE: live (the sources' real URLs), replay (the local replay server's recorded
samples) or auto (live; a pass that cannot reach its source at all is run again on the
replay, logged and recorded)."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from datetime import timedelta

import requests
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from a2a_service.core.http import TargetRefused
from a2a_service.core.observe import feed_pass_observe
from catalog.feeds.registry import FeedPass, FeedSource, feed_get, feeds_all
from catalog.models import FeedState
from catalog.signals import data_pass_finished

logger = logging.getLogger("catalog.feeds")

MODES = ("live", "replay", "auto")
# Errors that mean "the source could not be reached" (auto mode replays those; anything else,
# a bad answer from a reachable source, is the source's failure and is recorded as such).
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    TargetRefused,
)
ERROR_MAX_CHARS = 2000
# Failed feeds kept per pass (a venue's every book failing is many): health stays small.
FAILED_FEEDS_MAX = 50


class FeedUnknown(Exception):
    """No source of that name is registered."""


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_MAX_CHARS]


def _failed_feeds(feed_pass: FeedPass) -> list[dict[str, str]]:
    failed = [asdict(f) for f in feed_pass.failed_feeds]
    if len(failed) > FAILED_FEEDS_MAX:
        more = len(failed) - FAILED_FEEDS_MAX + 1
        failed = [*failed[: FAILED_FEEDS_MAX - 1], {"feed": f"{more} more", "reason": "in the admin's note"}]
    return failed


def _backoff(failures: int) -> timedelta:
    seconds = settings.FEEDS_BACKOFF_BASE_SECONDS * 2 ** max(failures - 1, 0)
    return timedelta(seconds=min(seconds, settings.FEEDS_BACKOFF_MAX_SECONDS))


def _claim(name: str) -> bool:
    """Take the source's lock: one conditional UPDATE, so exactly one contender wins."""
    FeedState.objects.get_or_create(name=name)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.FEEDS_LOCK_STALE_SECONDS)
    return bool(
        FeedState.objects.filter(name=name)
        .filter(Q(running_since__isnull=True) | Q(running_since__lt=stale))
        .update(running_since=now)
    )


def _attempt(source: FeedSource, feed_pass: FeedPass) -> int:
    with transaction.atomic():
        return int(source.run(feed_pass))


def feed_run(*, name: str, mode: str | None = None, force: bool = False) -> FeedState:
    """Run one pass of source `name` and return its FeedState, with `outcome` set to "ok",
    "failed", "running" (another pass holds the lock: skipped) or "backoff" (skipped until
    next_attempt_at; `force` runs it anyway). A failure is recorded, never raised."""
    source = feed_get(name)
    if source is None:
        raise FeedUnknown(name)
    mode = mode or settings.FEEDS_MODE
    if mode not in MODES:
        raise ValueError(f"FEEDS_MODE must be one of {', '.join(MODES)}, not {mode!r}")
    state, _ = FeedState.objects.get_or_create(name=name)
    if not force and state.next_attempt_at is not None and state.next_attempt_at > timezone.now():
        state.outcome = "backoff"  # type: ignore[attr-defined]
        return state
    if not _claim(name):
        logger.info("feed %s: a pass is already running; skipped", name)
        state.refresh_from_db()
        state.outcome = "running"  # type: ignore[attr-defined]
        return state
    state.refresh_from_db()

    started = timezone.now()
    clock = time.monotonic()
    replay = mode == "replay"
    note = ""
    error: BaseException | None = None
    rows = 0
    # The pass's record (warnings, failed feeds, oddities), kept when the pass raises.
    feed_pass = FeedPass(source=name, replay=replay)
    try:
        try:
            rows = _attempt(source, feed_pass)
        except NETWORK_ERRORS as exc:
            if mode != "auto":
                raise
            note = f"live unreachable ({_reason(exc)}); replayed"
            logger.warning("feed %s: %s", name, note)
            replay = True
            feed_pass = FeedPass(source=name, replay=True)
            rows = _attempt(source, feed_pass)
    except Exception as exc:  # any failure of the adapter is the source's, recorded below
        error = exc
        logger.warning(
            "feed %s: pass failed: %s", name, _reason(exc), exc_info=not isinstance(exc, NETWORK_ERRORS)
        )

    finished = timezone.now()
    fields: dict[str, object] = {
        "running_since": None,
        "last_attempt_at": started,
        "last_duration_ms": int((time.monotonic() - clock) * 1000),
        # Which feeds failed (and why) in this pass, whether it succeeded or not.
        "last_failed_feeds": _failed_feeds(feed_pass),
    }
    if feed_pass.failed_feeds:
        logger.warning(
            "feed %s: %d feed(s) failed: %s",
            name,
            len(feed_pass.failed_feeds),
            "; ".join(f"{f.feed}: {f.reason}" for f in feed_pass.failed_feeds[:10]),
        )
    if error is None:
        fields |= {
            "last_success_at": finished,
            "last_error": "",
            "last_note": "; ".join([note, *feed_pass.warnings]).strip("; ")[:ERROR_MAX_CHARS],
            "last_oddities": feed_pass.oddities,
            "rows_written": rows,
            "consecutive_failures": 0,
            "next_attempt_at": None,
            "last_replay": replay,
        }
    else:
        failures = state.consecutive_failures + 1
        fields |= {
            "last_error": _reason(error),
            "consecutive_failures": failures,
            "next_attempt_at": finished + _backoff(failures),
        }
    FeedState.objects.filter(name=name).update(**fields)
    feed_pass_observe(source=name, ok=error is None, rows=rows if error is None else 0)
    state.refresh_from_db()
    state.outcome = "ok" if error is None else "failed"  # type: ignore[attr-defined]
    data_pass_finished.send(sender=feed_run)  # what it changed may make a product (un)available
    return state


def feeds_due() -> list[str]:
    """Registered sources not backed off (what a scheduler may start now)."""
    now = timezone.now()
    held = set(FeedState.objects.filter(next_attempt_at__gt=now).values_list("name", flat=True))
    return [s.name for s in feeds_all() if s.name not in held]
