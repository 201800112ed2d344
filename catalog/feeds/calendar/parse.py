"""ICS calendars (RFC 5545) read with `icalendar`: the VEVENTs of one calendar as occurrences
with UTC start/end times, within a window.

Times: a DTSTART with TZID is read in that zone (an IANA name, a VTIMEZONE the file defines,
or one of the legacy aliases below); a UTC time ("...Z") as UTC; a floating time in the
calendar's X-WR-TIMEZONE, else UTC. An all-day event (a DATE) starts at that day's midnight
UTC and is marked all_day. Recurring events (a simple RRULE, with EXDATEs and overridden
instances) are expanded within the window with python-dateutil when it is installed (it
comes with icalendar); without it, recurring masters are skipped with a warning."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar

from catalog.feeds.registry import FeedError

try:  # python-dateutil: a dependency of icalendar, so normally present
    from dateutil.rrule import rrulestr  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - exercised by monkeypatching RRULE_AVAILABLE
    rrulestr = None

RRULE_AVAILABLE = rrulestr is not None

# At most this many occurrences of one recurring event within the window (a daily rule over a
# long horizon would otherwise write hundreds of rows of one event).
MAX_OCCURRENCES = 400
TITLE_MAX = 300
DESCRIPTION_MAX = 4000
URL_MAX = 500
# TZIDs that are not IANA names but common in published calendars (BLS uses "US-Eastern" with
# its own VTIMEZONE; the alias is only used when the file does not define the zone).
TZ_ALIASES = {
    "US-Eastern": "America/New_York",
    "US/Eastern": "America/New_York",
    "Eastern Standard Time": "America/New_York",
    "US-Central": "America/Chicago",
    "Central Standard Time": "America/Chicago",
    "US-Pacific": "America/Los_Angeles",
    "Pacific Standard Time": "America/Los_Angeles",
    "GMT Standard Time": "Europe/London",
    "W. Europe Standard Time": "Europe/Berlin",
    "Romance Standard Time": "Europe/Paris",
    "Tokyo Standard Time": "Asia/Tokyo",
}
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class CalendarFeed:
    """One entry of CALENDAR_ICS_URLS: `name|url[|country]`."""

    name: str
    url: str
    country: str = ""


def calendars_setting(value: str | Iterable[str]) -> list[CalendarFeed]:
    """CALENDAR_ICS_URLS as CalendarFeeds. A malformed entry fails the pass (FeedError) before
    anything is fetched: an operator's typo should show as an error, not as missing events."""
    entries = value.split(",") if isinstance(value, str) else list(value)
    feeds: list[CalendarFeed] = []
    for raw in entries:
        entry = str(raw).strip()
        if not entry:
            continue
        name, _, rest = entry.partition("|")
        url, _, country = rest.partition("|")
        name, url, country = name.strip().lower(), url.strip(), country.strip().upper()
        if not NAME_RE.match(name) or not url.lower().startswith(("http://", "https://")):
            raise FeedError(f"CALENDAR_ICS_URLS: {entry!r} is not name|url[|country]")
        if any(f.name == name for f in feeds):
            raise FeedError(f"CALENDAR_ICS_URLS: the name {name!r} is used twice")
        feeds.append(CalendarFeed(name=name, url=url, country=country[:8]))
    return feeds


@dataclass(frozen=True)
class Occurrence:
    uid: str
    title: str
    starts_at: datetime  # UTC
    ends_at: datetime | None  # UTC
    all_day: bool
    description: str = ""
    url: str = ""
    categories: tuple[str, ...] = ()
    priority: int | None = None


@dataclass
class ParsedCalendar:
    occurrences: list[Occurrence] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cancelled: set[str] = field(default_factory=set)  # uids the calendar marks STATUS:CANCELLED


def calendar_read(body: bytes) -> icalendar.Calendar:
    """The VCALENDAR in `body`, or FeedError: empty, not iCalendar, or without any VEVENT (a
    real release calendar always has some; an empty answer must not wipe the stored events)."""
    if not body.strip():
        raise FeedError("empty body")
    try:
        cal = icalendar.Calendar.from_ical(body)
    except (ValueError, IndexError, KeyError, UnicodeError) as exc:
        raise FeedError(f"not an iCalendar document: {str(exc)[:200]}") from exc
    if not isinstance(cal, icalendar.Calendar) or cal.name != "VCALENDAR":
        raise FeedError("not an iCalendar document: no VCALENDAR")
    if not cal.walk("VEVENT"):
        raise FeedError("the calendar has no VEVENT")
    return cal


def recorded_at(cal: icalendar.Calendar) -> datetime | None:
    """When the calendar was generated: its newest DTSTAMP (or LAST-MODIFIED). The replay
    moves recorded samples by the time since then."""
    newest: datetime | None = None
    for event in cal.walk("VEVENT"):
        for prop in ("DTSTAMP", "LAST-MODIFIED"):
            value = _decoded(event, prop)
            if isinstance(value, datetime):
                stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
                if newest is None or stamp > newest:
                    newest = stamp
    return newest


def _decoded(component: Any, name: str) -> Any:
    try:
        return component.decoded(name)
    except (KeyError, ValueError, TypeError):
        return None


def _zone(name: str) -> ZoneInfo | None:
    for candidate in (name, TZ_ALIASES.get(name, "")):
        if not candidate:
            continue
        try:
            return ZoneInfo(candidate)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    return None


def calendar_zone(cal: icalendar.Calendar) -> ZoneInfo:
    """The zone of floating times: X-WR-TIMEZONE (Google and Outlook exports set it), else UTC."""
    name = str(cal.get("X-WR-TIMEZONE") or "").strip()
    zone = _zone(name) if name else None
    return zone or ZoneInfo("UTC")


def _aware(value: datetime, tzid: str, default: ZoneInfo) -> datetime:
    if value.tzinfo is not None:
        return value
    zone = _zone(tzid) if tzid else None
    return value.replace(tzinfo=zone or default)


def _tzid(component: Any, name: str) -> str:
    prop = component.get(name)
    params = getattr(prop, "params", None)
    return str(params.get("TZID", "")) if params else ""


def _categories(component: Any) -> tuple[str, ...]:
    raw = component.get("CATEGORIES")
    if raw is None:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        cats = getattr(item, "cats", None)
        values = cats if cats is not None else str(item).split(",")
        out += [str(c).strip() for c in values if str(c).strip()]
    return tuple(dict.fromkeys(out))


def _priority(component: Any) -> int | None:
    raw = component.get("PRIORITY")
    if raw is None:
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        return None
    return value if 1 <= value <= 9 else None


def _url(component: Any) -> str:
    url = str(component.get("URL") or "").strip()
    return url if url.lower().startswith(("http://", "https://")) and len(url) <= URL_MAX else ""


def _text(component: Any, name: str, limit: int) -> str:
    return str(component.get(name) or "").strip()[:limit]


def _utc(value: date | datetime) -> datetime:
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return datetime.combine(value, time(0), tzinfo=UTC)


def _recurrence_key(value: date | datetime) -> str:
    """An occurrence's recurrence id, in UTC (or the date of an all-day event)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return value.strftime("%Y%m%d")


@dataclass
class _Event:
    """One VEVENT's fields, its start normalized (aware datetime, or a date)."""

    uid: str
    start: date | datetime
    duration: timedelta | None
    title: str
    description: str
    url: str
    categories: tuple[str, ...]
    priority: int | None
    cancelled: bool
    component: Any


def _event(component: Any, default: ZoneInfo) -> _Event | None:
    start = _decoded(component, "DTSTART")
    if not isinstance(start, date):  # absent or unparseable (icalendar keeps the raw text)
        return None
    if isinstance(start, datetime):
        start = _aware(start, _tzid(component, "DTSTART"), default)
    end = _decoded(component, "DTEND")
    duration: timedelta | None = None
    if isinstance(end, datetime) and isinstance(start, datetime):
        duration = _aware(end, _tzid(component, "DTEND"), default) - start
    elif isinstance(end, date) and not isinstance(end, datetime) and not isinstance(start, datetime):
        duration = end - start
    elif isinstance(dur := _decoded(component, "DURATION"), timedelta):
        duration = dur
    if duration is not None and duration < timedelta(0):
        duration = None
    title = _text(component, "SUMMARY", TITLE_MAX)
    uid = str(component.get("UID") or "").strip()
    if not uid:
        # No UID (the RFC requires one): a stable stand-in from what identifies the event.
        uid = "nouid-" + hashlib.sha1(f"{title}|{_recurrence_key(start)}".encode()).hexdigest()[:20]
    return _Event(
        uid=uid[:250],
        start=start,
        duration=duration,
        title=title or "(untitled event)",
        description=_text(component, "DESCRIPTION", DESCRIPTION_MAX),
        url=_url(component),
        categories=_categories(component),
        priority=_priority(component),
        cancelled=str(component.get("STATUS") or "").strip().upper() == "CANCELLED",
        component=component,
    )


def _occurrence(ev: _Event, start: date | datetime, uid: str, shift: timedelta) -> Occurrence:
    # The replay shift is whole weeks, added in the event's own zone so that a release keeps
    # its weekday and local time across a daylight-saving change.
    moved = start + shift
    end = moved + ev.duration if ev.duration is not None else None
    return Occurrence(
        uid=uid,
        title=ev.title,
        starts_at=_utc(moved),
        ends_at=_utc(end) if end is not None else None,
        all_day=not isinstance(start, datetime),
        description=ev.description,
        url=ev.url,
        categories=ev.categories,
        priority=ev.priority,
    )


def _exdates(component: Any, default: ZoneInfo) -> set[str]:
    raw = component.get("EXDATE")
    if raw is None:
        return set()
    out: set[str] = set()
    for prop in raw if isinstance(raw, list) else [raw]:
        tzid = str(prop.params.get("TZID", "")) if getattr(prop, "params", None) else ""
        for item in getattr(prop, "dts", []):
            value = item.dt
            if isinstance(value, datetime):
                value = _aware(value, tzid, default)
            out.add(_recurrence_key(value))
    return out


def _expand(ev: _Event, lo: datetime, hi: datetime, default: ZoneInfo) -> list[date | datetime]:
    """The starts of a recurring event's occurrences within [lo, hi] (recorded time)."""
    rule_text = ev.component.get("RRULE").to_ical().decode()
    if isinstance(ev.start, datetime):
        rule = rrulestr(rule_text, dtstart=ev.start)
        starts: list[date | datetime] = list(rule.between(lo, hi, inc=True))
    else:  # all-day: dateutil iterates naive datetimes at midnight
        first = datetime.combine(ev.start, time(0))
        rule = rrulestr(rule_text, dtstart=first)
        window = (lo.astimezone(UTC).replace(tzinfo=None), hi.astimezone(UTC).replace(tzinfo=None))
        starts = [d.date() for d in rule.between(*window, inc=True)]
    excluded = _exdates(ev.component, default)
    return [s for s in starts if _recurrence_key(s) not in excluded][:MAX_OCCURRENCES]


def calendar_occurrences(
    cal: icalendar.Calendar,
    *,
    start: datetime,
    end: datetime,
    shift: timedelta = timedelta(0),
) -> ParsedCalendar:
    """The occurrences starting within [start, end] once moved by `shift` (the replay's; zero
    live). Events without a usable DTSTART are skipped and counted in a warning."""
    default = calendar_zone(cal)
    out = ParsedCalendar()
    lo, hi = start - shift, end - shift  # the window in the calendar's recorded time
    masters: list[_Event] = []
    overrides: dict[tuple[str, str], _Event] = {}
    broken = 0
    skipped_recurring = 0
    failed_rules: list[str] = []
    for component in cal.walk("VEVENT"):
        ev = _event(component, default)
        if ev is None:
            broken += 1
            continue
        rid = _decoded(component, "RECURRENCE-ID")
        if isinstance(rid, date):
            if isinstance(rid, datetime):
                rid = _aware(rid, _tzid(component, "RECURRENCE-ID"), default)
            overrides[(ev.uid, _recurrence_key(rid))] = ev
            continue
        masters.append(ev)

    def keep(ev: _Event, when: date | datetime, uid: str) -> None:
        if ev.cancelled:
            out.cancelled.add(uid)
            return
        occurrence = _occurrence(ev, when, uid, shift)
        if start <= occurrence.starts_at <= end:
            out.occurrences.append(occurrence)

    used: set[tuple[str, str]] = set()
    for ev in masters:
        if ev.component.get("RRULE") is None:
            keep(ev, ev.start, ev.uid)
            continue
        if not RRULE_AVAILABLE:
            skipped_recurring += 1
            continue
        try:
            starts = _expand(ev, lo, hi, default)
        except (ValueError, TypeError) as exc:  # a rule dateutil refuses (e.g. UNTIL without zone)
            failed_rules.append(f"{ev.uid}: {exc}"[:200])
            continue
        for when in starts:
            key = (ev.uid, _recurrence_key(when))
            instance = overrides.get(key)
            used.add(key)
            keep(instance or ev, instance.start if instance else when, f"{ev.uid}/{key[1]}")
    # Overridden instances whose master is absent (or outside the window): standalone events.
    for key, ev in overrides.items():
        if key not in used and not any(m.uid == key[0] for m in masters):
            keep(ev, ev.start, f"{key[0]}/{key[1]}")

    if broken:
        out.warnings.append(f"{broken} VEVENT(s) without a usable DTSTART skipped")
    if skipped_recurring:
        out.warnings.append(
            f"{skipped_recurring} recurring event(s) skipped: python-dateutil is not installed"
        )
    if failed_rules:
        out.warnings.append("recurrence rule(s) not expanded: " + "; ".join(failed_rules[:3]))
    return out
