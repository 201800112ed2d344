"""Writes of the calendar feed: events upserted on (source, calendar, uid); the calendar's
events it no longer lists (or cancels) within the window are removed, as a calendar client
would. Staff events (source "manual") are never touched."""

from __future__ import annotations

from datetime import datetime

from catalog.feeds.calendar.impact import impact_for
from catalog.feeds.calendar.parse import CalendarFeed, ParsedCalendar
from catalog.feeds.registry import FeedPass
from catalog.feeds.unique import unique_on
from catalog.models import CalendarEvent

SOURCE = "calendar"


def events_sync(
    *,
    feed: CalendarFeed,
    parsed: ParsedCalendar,
    feed_pass: FeedPass,
    seen_at: datetime,
    start: datetime,
    end: datetime,
) -> int:
    """Upsert the calendar's occurrences; returns the rows written. One save per event (a few
    hundred a pass at most): post_save reaches the listeners as any other write does. An
    occurrence the calendar lists twice (one UID) is written once, the last listed."""
    replay = feed_pass.replay
    occurrences = unique_on(
        parsed.occurrences, key=lambda o: o.uid, what=f"calendar {feed.name} events", feed_pass=feed_pass
    )
    seen: set[str] = set()
    for occ in occurrences:
        impact = impact_for(title=occ.title, categories=occ.categories, priority=occ.priority)
        category = impact.category or (occ.categories[0].lower()[:64] if occ.categories else "")
        CalendarEvent.objects.update_or_create(
            source=SOURCE,
            calendar=feed.name,
            uid=occ.uid,
            defaults={
                "title": occ.title,
                "category": category,
                "country": feed.country,
                "impact": impact.impact,
                "impact_basis": impact.basis,
                "starts_at": occ.starts_at,
                "ends_at": occ.ends_at,
                "all_day": occ.all_day,
                "description": occ.description,
                "url": occ.url,
                "replay": replay,
                "observed_at": seen_at,
            },
        )
        seen.add(occ.uid)
    ours = CalendarEvent.objects.filter(source=SOURCE, calendar=feed.name)
    for gone in ours.filter(starts_at__gte=start, starts_at__lte=end).exclude(uid__in=seen):
        gone.delete()
    for cancelled in ours.filter(uid__in=parsed.cancelled - seen):
        cancelled.delete()
    return len(seen)


def events_prune(*, before: datetime) -> int:
    """Ingested events that started before `before` (the past window); staff events stay."""
    deleted, _ = CalendarEvent.objects.filter(source=SOURCE, starts_at__lt=before).delete()
    return deleted
