"""The macro calendar as risk: upcoming events with their impact and time to event, and the
macro gate (closed within ±MACRO_GATE_HOURS of a high-impact event, open otherwise).

One gate function (`macro_gate`) answers for /risk/macro-gate, the decision pack's macro
check and the morning brief, so they never disagree. Events are CalendarEvent rows: the ICS
calendars the calendar feed ingests and the events staff add in the admin."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from django.conf import settings
from django.db.models import Count, Max, QuerySet

from catalog.analytics.provenance import Provenance
from catalog.models import CalendarEvent

GateState = Literal["open", "closed", "unknown"]

IMPACT_RANK = {CalendarEvent.Impact.LOW: 0, CalendarEvent.Impact.MEDIUM: 1, CalendarEvent.Impact.HIGH: 2}

# A calendar is read for events scheduled days or weeks ahead: a row observed a week ago still
# says when the event is. Older than that, the feed (weekly-published ICS files) has stopped.
CALENDAR_MAX_AGE = timedelta(days=7)


def gate_hours() -> float:
    return float(settings.MACRO_GATE_HOURS)


def hours_to(event: CalendarEvent, now: datetime) -> float:
    return (event.starts_at - now) / timedelta(hours=1)


@dataclass(frozen=True)
class MacroGate:
    state: GateState
    hours: float
    reason: str
    blocking: list[CalendarEvent] = field(default_factory=list)  # high impact, within ±hours
    next_high: CalendarEvent | None = None  # the nearest high-impact event starting after now
    reopens_at: datetime | None = None  # closed: when the last overlapping window ends
    next_close_at: datetime | None = None  # open: when the next high-impact window starts
    calendar_rows: int = 0
    ahead: int = 0  # events of any impact still ahead


def _when(event: CalendarEvent, now: datetime) -> str:
    h = hours_to(event, now)
    return f"in {h:.1f} h" if h >= 0 else f"{-h:.1f} h ago"


def macro_gate(*, now: datetime, hours: float | None = None) -> MacroGate:
    """Closed while any high-impact event starts within ±hours of now; the reopening time is
    the end of the chain of overlapping windows. Unknown when no calendar row exists at all."""
    h = gate_hours() if hours is None else hours
    window = timedelta(hours=h)
    total = CalendarEvent.objects.count()
    if total == 0:
        return MacroGate("unknown", h, "No calendar ingested: the macro gate cannot be checked.")
    ahead = CalendarEvent.objects.filter(starts_at__gte=now).count()
    high = list(
        CalendarEvent.objects.filter(impact=CalendarEvent.Impact.HIGH, starts_at__gte=now - window).order_by(
            "starts_at", "id"
        )
    )
    blocking = [e for e in high if e.starts_at <= now + window]
    next_high = next((e for e in high if e.starts_at > now), None)
    if blocking:
        end = blocking[-1].starts_at + window
        for e in high:
            if e.starts_at - window <= end:
                end = max(end, e.starts_at + window)
        later = [e for e in high if e.starts_at - window > end]
        first = blocking[0]
        return MacroGate(
            "closed",
            h,
            f"{len(blocking)} high-impact event(s) within ±{h:g} h; first: {first.title} {_when(first, now)}.",
            blocking=blocking,
            next_high=next_high,
            reopens_at=end,
            next_close_at=later[0].starts_at - window if later else None,
            calendar_rows=total,
            ahead=ahead,
        )
    if next_high is not None:
        reason = f"No high-impact event within ±{h:g} h; next: {next_high.title} {_when(next_high, now)}."
    elif ahead == 0:
        reason = "The calendar lists no event ahead at all: it may be out of date."
    else:
        reason = f"No high-impact event within ±{h:g} h, and none scheduled ahead."
    return MacroGate(
        "open",
        h,
        reason,
        next_high=next_high,
        next_close_at=next_high.starts_at - window if next_high else None,
        calendar_rows=total,
        ahead=ahead,
    )


def upcoming(
    *, now: datetime, days: float, min_impact: str = "low", country: str = ""
) -> QuerySet[CalendarEvent]:
    """Events starting from now to `days` ahead at `min_impact` or more, by start time. An
    all-day event (midnight UTC) of today stays listed for the day."""
    impacts = [k for k, rank in IMPACT_RANK.items() if rank >= IMPACT_RANK[CalendarEvent.Impact(min_impact)]]
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    qs = CalendarEvent.objects.filter(impact__in=impacts, starts_at__lte=now + timedelta(days=days)).filter(
        starts_at__gte=now
    ) | CalendarEvent.objects.filter(
        impact__in=impacts, all_day=True, starts_at__gte=start_of_day, starts_at__lt=now
    )
    if country:
        qs = qs.filter(country__iexact=country)
    return qs.order_by("starts_at", "id")


def calendar_sources(prov: Provenance) -> None:
    """Count the calendar's rows per source, calendar and replay flag, each at its newest
    observation (the feed rewrites its rows every pass)."""
    rows = (
        CalendarEvent.objects.order_by()
        .values("source", "calendar", "replay")
        .annotate(newest=Max("observed_at"), items=Count("id"))
    )
    for row in rows:
        prov.add(
            source=row["source"] or "manual",
            venue=row["calendar"] or None,
            replay=row["replay"],
            as_of=row["newest"],
            items=row["items"],
        )
