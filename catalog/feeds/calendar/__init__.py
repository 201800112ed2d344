"""The calendar feed: macro releases and central-bank events from the ICS calendars of
CALENDAR_ICS_URLS (`name|url[|country]`, comma-separated), parsed with icalendar, kept within
CALENDAR_PAST_DAYS before and CALENDAR_HORIZON_DAYS after the pass, upserted into
CalendarEvent (source "calendar", the entry's name as its calendar) with an impact level
(catalog/feeds/calendar/impact.py). Staff add events in the admin (source "manual"); a pass
never touches them.

Each calendar fails on its own: a calendar that cannot be fetched or parsed is rolled back and
warned of while the others are written; the pass fails only when every calendar failed.

Replay: calendar <name> is served from catalog/feeds/samples/calendar_ics_urls/<name>.ics
(recorded in the real ICS format). Its events are moved by whole weeks (a release keeps its
weekday and local time) so that the sample's generation time (newest DTSTAMP) lands in the
week before the pass: recorded upcoming releases stay upcoming."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from pathlib import Path

import requests
from django.conf import settings
from django.db import transaction

from a2a_service.core.http import TargetRefused
from catalog.feeds.calendar.parse import (
    CalendarFeed,
    calendar_occurrences,
    calendar_read,
    calendars_setting,
    recorded_at,
)
from catalog.feeds.calendar.store import SOURCE, events_prune, events_sync
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register

logger = logging.getLogger(__name__)

NAME = SOURCE
REPLAY_KEY = "calendar_ics_urls"
SAMPLES = Path(__file__).resolve().parent.parent / "samples" / REPLAY_KEY
UNREACHABLE = (requests.exceptions.ConnectionError, requests.exceptions.Timeout, TargetRefused)


def calendar_url(feed_pass: FeedPass, feed: CalendarFeed) -> str:
    return f"{feed_pass.replay_base(REPLAY_KEY)}/{feed.name}.ics" if feed_pass.replay else feed.url


def replay_weeks(feed_pass: FeedPass, recorded: datetime | None) -> timedelta:
    """The replay's shift of one calendar: the whole weeks since it was recorded (back in time
    on a machine whose clock is before the recording, where replay_shift would not move it)."""
    if not feed_pass.replay or recorded is None:
        return timedelta(0)
    if feed_pass.started_at >= recorded:
        raw = feed_pass.replay_shift(recorded, step=timedelta(days=1))
        return timedelta(weeks=raw.days // 7)
    return timedelta(weeks=-((recorded - feed_pass.started_at).days // 7 + 1))


def calendar_run(feed_pass: FeedPass) -> int:
    feeds = calendars_setting(settings.CALENDAR_ICS_URLS)
    if feed_pass.replay:
        recorded = [f for f in feeds if (SAMPLES / f"{f.name}.ics").is_file()]
        if skipped := sorted({f.name for f in feeds} - {f.name for f in recorded}):
            logger.info("calendar: no replay sample for %s, skipped", ", ".join(skipped))
        if feeds and not recorded:
            raise FeedError("no recorded sample for any calendar of CALENDAR_ICS_URLS")
        feeds = recorded
    now = feed_pass.started_at
    start = now - timedelta(days=settings.CALENDAR_PAST_DAYS)
    end = now + timedelta(days=settings.CALENDAR_HORIZON_DAYS)
    rows = 0
    failures: list[tuple[str, Exception]] = []
    for feed in feeds:
        url = calendar_url(feed_pass, feed)
        try:
            with transaction.atomic():  # a savepoint: a calendar that fails leaves nothing behind
                cal = calendar_read(feed_pass.fetch(url).content)
                shift = replay_weeks(feed_pass, recorded_at(cal))
                parsed = calendar_occurrences(cal, start=start, end=end, shift=shift)
                rows += events_sync(
                    feed=feed, parsed=parsed, feed_pass=feed_pass, seen_at=now, start=start, end=end
                )
        except Exception as exc:  # noqa: BLE001 - one calendar's failure; judged with the others below
            logger.warning("calendar: %s failed: %s", feed.name, exc)
            failures.append((feed.name, exc))
            feed_pass.feed_failed(
                feed=feed.url, error=exc, detail=f"{feed.name}: {type(exc).__name__}: {exc}"[:500]
            )
            continue
        for warning in parsed.warnings:
            feed_pass.warn(f"{feed.name}: {warning}"[:500])
    if failures and len(failures) == len(feeds):
        if all(isinstance(exc, UNREACHABLE) for _, exc in failures):
            # Nothing could be reached: raised as it is, so auto mode replays.
            raise failures[0][1]
        raise FeedError("; ".join(f"{name}: {type(e).__name__}: {e}" for name, e in failures)[:1000])
    events_prune(before=start)
    return rows


CALENDAR = feed_register(
    FeedSource(
        name=NAME,
        run=calendar_run,
        # Release calendars change a few times a week; every 6 hours is plenty (and polite).
        interval_seconds=6 * 3600,
        description="macro and central-bank events from ICS calendars (CALENDAR_ICS_URLS)",
        url_settings=("CALENDAR_ICS_URLS",),
    )
)
