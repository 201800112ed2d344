"""The calendar feed (catalog/feeds/calendar/): ICS parsing of the recorded BLS and BEA samples
(time zones from a VTIMEZONE and from UTC, all-day dates, impact rules), PRIORITY, zones and
recurrence on hand-written calendars, idempotent passes that never touch staff events, one
failing calendar among several as a warning, the failures that fail the pass and write
nothing, the replay's whole-week shift, and the admin."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests
from django.contrib.auth import get_user_model
from django.db import transaction

import catalog.feeds.calendar as calendar_feed
from catalog.feeds.calendar import parse
from catalog.feeds.calendar.impact import IMPACT_RULES, impact_for, priority_impact
from catalog.feeds.calendar.parse import calendar_occurrences, calendar_read, calendars_setting, recorded_at
from catalog.feeds.registry import FeedError, FeedPass, feed_get
from catalog.feeds.replay import SAMPLES
from catalog.feeds.runner import feed_run
from catalog.models import CalendarEvent
from tests.support.feedserver import Answer, FeedServer, closed_port
from tests.support.sample_server import SampleServer

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # when the samples were recorded (their DTSTAMP)
BLS = (SAMPLES / "calendar_ics_urls" / "bls.ics").read_bytes()
BEA = (SAMPLES / "calendar_ics_urls" / "bea.ics").read_bytes()


def ics(*events: str, head: str = "") -> bytes:
    body = "\r\n".join(
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *filter(None, [head])]
        + [e.strip().replace("\n", "\r\n") for e in events]
        + ["END:VCALENDAR", ""]
    )
    return body.encode()


def vevent(uid: str, start: str, summary: str, *extra: str) -> str:
    return "\n".join(
        [
            "BEGIN:VEVENT",
            f"UID:{uid}",
            "DTSTAMP:20261123T120000Z",
            start,
            f"SUMMARY:{summary}",
            *extra,
            "END:VEVENT",
        ]
    )


def occurrences(body: bytes, *, now: datetime = NOW, past: int = 7, horizon: int = 60):
    return calendar_occurrences(
        calendar_read(body), start=now - timedelta(days=past), end=now + timedelta(days=horizon)
    )


def by_uid(parsed) -> dict:
    return {o.uid: o for o in parsed.occurrences}


def run_pass(*, replay: bool = False, started_at: datetime = NOW) -> tuple[int, FeedPass]:
    """One pass as the runner makes it (in a transaction), at a fixed instant."""
    feed_pass = FeedPass(source="calendar", replay=replay, started_at=started_at)
    with transaction.atomic():
        return calendar_feed.calendar_run(feed_pass), feed_pass


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    s = FeedServer()
    yield s
    s.close()


def serve(settings, server, **calendars: bytes | Answer) -> None:
    """Serve each calendar at /<name>.ics and configure CALENDAR_ICS_URLS with them."""
    entries = []
    for name, body in calendars.items():
        server.routes[f"/{name}.ics"] = body if isinstance(body, Answer) else Answer(body=body)
        entries.append(f"{name}|{server.url}/{name}.ics|US")
    settings.CALENDAR_ICS_URLS = ",".join(entries)


def ingested():
    return CalendarEvent.objects.filter(source="calendar")


# --- parsing the recorded samples ----------------------------------------------------------------
def test_bls_sample_reads_its_vtimezone_all_day_holidays_and_impacts():
    cal = calendar_read(BLS)
    assert recorded_at(cal) == NOW
    parsed = occurrences(BLS)
    events = by_uid(parsed)
    assert len(events) == 14 and parsed.warnings == []
    cpi = events["20261210-cpi@bls.gov"]
    # 08:30 in the file's own VTIMEZONE "US-Eastern" (EST in December): 13:30 UTC.
    assert cpi.starts_at == datetime(2026, 12, 10, 13, 30, tzinfo=UTC)
    assert cpi.ends_at == datetime(2026, 12, 10, 14, 0, tzinfo=UTC) and not cpi.all_day
    assert cpi.title == "Consumer Price Index for November 2026"
    assert cpi.url == "https://www.bls.gov/schedule/news_release/cpi.htm"
    thanksgiving = events["20261126-holiday@bls.gov"]
    assert thanksgiving.all_day and thanksgiving.starts_at == datetime(2026, 11, 26, tzinfo=UTC)
    assert thanksgiving.ends_at is None

    impacts = {
        uid: impact_for(title=o.title, categories=o.categories, priority=o.priority)
        for uid, o in events.items()
    }
    assert (impacts["20261210-cpi@bls.gov"].impact, impacts["20261210-cpi@bls.gov"].category) == (
        "high",
        "inflation",
    )
    assert (
        impacts["20261204-empsit@bls.gov"].impact == "high"
        and impacts["20261204-empsit@bls.gov"].rule == "payrolls"
    )
    # A producer price index is not a consumer price index: medium, by its own rule.
    assert (impacts["20261211-ppi@bls.gov"].impact, impacts["20261211-ppi@bls.gov"].rule) == ("medium", "ppi")
    for uid in ("20261210-realer@bls.gov", "20261201-jolts@bls.gov", "20261126-holiday@bls.gov"):
        assert (impacts[uid].impact, impacts[uid].basis) == ("low", "default")


def test_bea_sample_reads_utc_times_categories_and_the_window():
    parsed = occurrences(BEA)
    events = by_uid(parsed)
    gdp = events["bea-20261125-gdp@bea.gov"]
    assert gdp.starts_at == datetime(2026, 11, 25, 13, 30, tzinfo=UTC) and gdp.categories == ("GDP",)
    assert impact_for(title=gdp.title, categories=gdp.categories).impact == "high"
    pce = events["bea-20261125-pio@bea.gov"]
    assert impact_for(title=pce.title, categories=pce.categories).rule == "pce"
    assert "," in gdp.description  # the escaped commas are text
    # The window: 7 days back, 60 ahead; a shorter horizon leaves the January release out.
    assert "bea-20270107-trade@bea.gov" in events
    assert "bea-20270107-trade@bea.gov" not in by_uid(occurrences(BEA, horizon=30))
    assert "bea-20261119-itr@bea.gov" not in by_uid(occurrences(BEA, past=3))


# --- impact: PRIORITY first, then the rules --------------------------------------------------------
@pytest.mark.parametrize(
    "priority,impact",
    [(1, "high"), (4, "high"), (5, "medium"), (6, "low"), (9, "low"), (0, None), (None, None)],
)
def test_priority_levels(priority, impact):
    assert priority_impact(priority) == impact


@pytest.mark.parametrize(
    "title,categories,impact,category",
    [
        ("FOMC Meeting: Rate Decision", (), "high", "rates"),
        ("ECB Monetary Policy Decision", (), "high", "rates"),
        ("Nonfarm Payrolls", (), "high", "jobs"),
        ("Gross Domestic Product, Q3 advance", (), "high", "growth"),
        ("ISM Manufacturing PMI", (), "medium", "activity"),
        ("Advance Monthly Retail Sales", (), "medium", "consumption"),
        ("Initial Jobless Claims", (), "medium", "jobs"),
        ("Producer Price Index for November", (), "medium", "inflation"),
        ("Employment Cost Index", (), "low", ""),
        ("Quarterly Services Survey", ("CPI",), "high", "inflation"),  # a category names the release
        ("Quarterly Services Survey", (), "low", ""),
    ],
)
def test_impact_rules(title, categories, impact, category):
    got = impact_for(title=title, categories=categories)
    assert (got.impact, got.category) == (impact, category)
    assert got.basis == ("default" if impact == "low" and not category else "rule")


def test_the_feeds_priority_wins_over_the_rules():
    body = ics(
        vevent("p1", "DTSTART:20261201T150000Z", "Quarterly Services Survey", "PRIORITY:1"),
        vevent("p9", "DTSTART:20261202T133000Z", "Consumer Price Index", "PRIORITY:9"),
        vevent("p5", "DTSTART:20261203T133000Z", "Something", "PRIORITY:5"),
        vevent("p0", "DTSTART:20261204T133000Z", "Employment Situation", "PRIORITY:0"),
    )
    events = by_uid(occurrences(body))
    got = {
        uid: impact_for(title=o.title, categories=o.categories, priority=o.priority)
        for uid, o in events.items()
    }
    assert (got["p1"].impact, got["p1"].basis) == ("high", "priority")
    assert (got["p9"].impact, got["p9"].basis, got["p9"].category) == ("low", "priority", "inflation")
    assert got["p5"].impact == "medium"
    assert (got["p0"].impact, got["p0"].basis) == ("high", "rule")  # 0: undefined, the rules decide


def test_rules_are_data():
    assert all(rule.impact in ("high", "medium", "low") and rule.category for rule in IMPACT_RULES)


# --- time zones and recurrence on hand-written calendars ------------------------------------------
def test_time_zones_of_every_kind():
    body = ics(
        vevent("ecb", "DTSTART;TZID=Europe/Berlin:20261217T141500", "ECB Monetary Policy Decision"),
        vevent("alias", "DTSTART;TZID=US-Eastern:20261204T083000", "Employment Situation"),
        vevent("summer", "DTSTART;TZID=America/New_York:20261125T083000", "Durable Goods"),
        vevent("floating", "DTSTART:20261201T090000", "Tankan"),
        vevent("unknown", "DTSTART;TZID=Nowhere/Zone:20261201T090000", "Unknown zone"),
        vevent("allday", "DTSTART;VALUE=DATE:20261224", "Christmas Eve", "DTEND;VALUE=DATE:20261225"),
        head="X-WR-TIMEZONE:Asia/Tokyo",
    )
    events = by_uid(occurrences(body))
    assert events["ecb"].starts_at == datetime(2026, 12, 17, 13, 15, tzinfo=UTC)  # CET
    assert events["alias"].starts_at == datetime(2026, 12, 4, 13, 30, tzinfo=UTC)  # no VTIMEZONE: the alias
    assert events["summer"].starts_at == datetime(2026, 11, 25, 13, 30, tzinfo=UTC)
    assert events["floating"].starts_at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)  # X-WR-TIMEZONE Tokyo
    assert events["unknown"].starts_at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)  # the calendar's zone
    allday = events["allday"]
    assert allday.all_day and allday.starts_at == datetime(2026, 12, 24, tzinfo=UTC)
    assert allday.ends_at == datetime(2026, 12, 25, tzinfo=UTC)
    # Without X-WR-TIMEZONE a floating time is UTC; a daylight-saving date in New York is -4 h.
    body = ics(
        vevent("floating", "DTSTART:20261201T090000", "x"),
        vevent("july", "DTSTART;TZID=America/New_York:20270701T083000", "y"),
    )
    events = by_uid(occurrences(body, horizon=400))
    assert events["floating"].starts_at == datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    assert events["july"].starts_at == datetime(2027, 7, 1, 12, 30, tzinfo=UTC)


CLAIMS = vevent(
    "claims",
    "DTSTART;TZID=America/New_York:20261029T083000",
    "Unemployment Insurance Weekly Claims",
    "RRULE:FREQ=WEEKLY;BYDAY=TH",
    "EXDATE;TZID=America/New_York:20261126T083000",
    "DURATION:PT30M",
)
# Thanksgiving's release moves to Wednesday (an overridden instance of the series).
MOVED = vevent(
    "claims",
    "DTSTART;TZID=America/New_York:20261202T083000",
    "Unemployment Insurance Weekly Claims (moved)",
    "RECURRENCE-ID;TZID=America/New_York:20261203T083000",
)


def test_a_weekly_rule_expands_within_the_window_with_exdates_and_overrides():
    parsed = occurrences(ics(CLAIMS, MOVED), past=7, horizon=21)
    events = by_uid(parsed)
    assert sorted(events) == [
        "claims/20261119T133000Z",
        "claims/20261203T133000Z",
        "claims/20261210T133000Z",
    ]
    # The series crosses no DST change here; each occurrence is 08:30 New York, 30 minutes long.
    first = events["claims/20261119T133000Z"]
    assert (first.starts_at, first.ends_at) == (
        datetime(2026, 11, 19, 13, 30, tzinfo=UTC),
        datetime(2026, 11, 19, 14, 0, tzinfo=UTC),
    )
    moved = events["claims/20261203T133000Z"]
    assert moved.title.endswith("(moved)") and moved.starts_at == datetime(2026, 12, 2, 13, 30, tzinfo=UTC)
    assert impact_for(title=first.title).impact == "medium"
    # Daylight saving: the 29 October occurrence was 08:30 EDT (12:30 UTC).
    events = by_uid(occurrences(ics(CLAIMS), now=datetime(2026, 10, 29, tzinfo=UTC), past=1, horizon=1))
    assert events["claims/20261029T123000Z"].starts_at == datetime(2026, 10, 29, 12, 30, tzinfo=UTC)


def test_recurrence_without_dateutil_or_with_a_refused_rule_is_a_warning(monkeypatch):
    monkeypatch.setattr(parse, "RRULE_AVAILABLE", False)
    parsed = occurrences(ics(CLAIMS, vevent("one", "DTSTART:20261201T133000Z", "GDP")))
    assert list(by_uid(parsed)) == ["one"] and "python-dateutil is not installed" in parsed.warnings[0]
    monkeypatch.setattr(parse, "RRULE_AVAILABLE", True)
    bad = vevent(
        "bad", "DTSTART;TZID=America/New_York:20261201T083000", "x", "RRULE:FREQ=DAILY;UNTIL=20261210"
    )
    parsed = occurrences(ics(bad, vevent("one", "DTSTART:20261201T133000Z", "GDP")))
    assert list(by_uid(parsed)) == ["one"] and "not expanded" in parsed.warnings[0]


def test_broken_events_are_skipped_and_counted_and_cancelled_ones_noted():
    body = ics(
        vevent("ok", "DTSTART:20261201T133000Z", "GDP"),
        vevent("bad-date", "DTSTART:notadate", "x"),
        "BEGIN:VEVENT\nUID:no-start\nSUMMARY:y\nEND:VEVENT",
        vevent("gone", "DTSTART:20261202T133000Z", "CPI", "STATUS:CANCELLED"),
        vevent("", "DTSTART:20261203T133000Z", "No uid"),
    )
    parsed = occurrences(body)
    uids = sorted(by_uid(parsed))
    assert "ok" in uids and len(uids) == 2 and any(u.startswith("nouid-") for u in uids)
    assert parsed.cancelled == {"gone"} and parsed.warnings == [
        "2 VEVENT(s) without a usable DTSTART skipped"
    ]
    # The stand-in uid is stable: the same event gets the same one on every pass.
    assert sorted(by_uid(occurrences(body))) == uids


@pytest.mark.parametrize(
    "body,reason",
    [
        (b"", "empty body"),
        (b"   \r\n", "empty body"),
        (b"<html><body>Access denied</body></html>", "not an iCalendar document"),
        (b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x", "not an iCalendar document"),
        (b"BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20261201T000000Z\r\nEND:VEVENT\r\n", "no VCALENDAR"),
        (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", "no VEVENT"),
        (b"\xff\xfe\x00garbage", "not an iCalendar document"),
    ],
    ids=["empty", "blank", "html", "truncated", "bare-event", "no-events", "binary"],
)
def test_garbage_is_refused(body, reason):
    with pytest.raises(FeedError, match=reason):
        calendar_read(body)


def test_the_setting():
    feeds = calendars_setting("bls|https://x.test/bls.ics|us, fed|https://y.test/c.ics ,")
    assert [(f.name, f.url, f.country) for f in feeds] == [
        ("bls", "https://x.test/bls.ics", "US"),
        ("fed", "https://y.test/c.ics", ""),
    ]
    for bad in ("https://x.test/a.ics", "a|ftp://x", "a b|https://x", "a|https://x,a|https://y"):
        with pytest.raises(FeedError):
            calendars_setting(bad)


# --- passes ---------------------------------------------------------------------------------------
def test_registered():
    source = feed_get("calendar")
    assert source is not None and source.run is calendar_feed.calendar_run
    assert source.url_settings == ("CALENDAR_ICS_URLS",)


def test_a_pass_upserts_both_calendars_and_reruns_in_place(settings, server):
    serve(settings, server, bls=BLS, bea=BEA)
    rows, _ = run_pass()
    assert rows == 14 + 7 and ingested().count() == 21
    cpi = CalendarEvent.objects.get(calendar="bls", uid="20261210-cpi@bls.gov")
    assert (cpi.source, cpi.impact, cpi.impact_basis, cpi.category, cpi.country) == (
        "calendar",
        "high",
        "rule",
        "inflation",
        "US",
    )
    assert cpi.starts_at == datetime(2026, 12, 10, 13, 30, tzinfo=UTC) and not cpi.replay
    assert CalendarEvent.objects.get(calendar="bea", uid="bea-20261125-gdp@bea.gov").category == "growth"
    assert CalendarEvent.objects.get(uid="20261126-holiday@bls.gov").all_day
    ids = set(ingested().values_list("id", flat=True))

    # Re-run: same rows, updated in place (a rescheduled release moves, its row stays).
    server.routes["/bls.ics"] = Answer(body=BLS.replace(b"20261210T083000", b"20261211T083000"))
    rows, _ = run_pass()
    assert rows == 21 and set(ingested().values_list("id", flat=True)) == ids
    cpi.refresh_from_db()
    assert cpi.starts_at == datetime(2026, 12, 11, 13, 30, tzinfo=UTC)


def test_staff_events_are_never_touched_and_dropped_events_go(settings, server):
    staff = CalendarEvent.objects.create(
        title="FOMC rate decision", impact="high", category="rates", starts_at=NOW + timedelta(days=23)
    )
    old_staff = CalendarEvent.objects.create(title="Old staff note", starts_at=NOW - timedelta(days=90))
    serve(settings, server, bls=BLS)
    run_pass()
    assert ingested().count() == 14
    # The calendar drops a release (and one is long past): its row goes, staff rows stay.
    CalendarEvent.objects.create(
        source="calendar", calendar="bls", uid="ancient", title="x", starts_at=NOW - timedelta(days=40)
    )
    server.routes["/bls.ics"] = Answer(body=BLS.replace(b"UID:20261210-cpi@bls.gov", b"UID:renamed@bls.gov"))
    run_pass()
    uids = set(ingested().values_list("uid", flat=True))
    assert "20261210-cpi@bls.gov" not in uids and "renamed@bls.gov" in uids and "ancient" not in uids
    staff.refresh_from_db()
    assert (staff.source, staff.title, staff.impact, staff.uid) == (
        "manual",
        "FOMC rate decision",
        "high",
        "",
    )
    assert CalendarEvent.objects.filter(pk=old_staff.pk).exists()


def test_one_failing_calendar_is_a_warning_not_a_failed_pass(settings, server):
    serve(settings, server, bls=BLS, bea=Answer(status=500, body=b"oops"))
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "ok" and state.consecutive_failures == 0
    assert "bea" in state.last_note and "answered 500" in state.last_note
    assert set(ingested().values_list("calendar", flat=True)) == {"bls"}


def test_a_calendar_that_fails_while_writing_leaves_nothing_of_it(settings, server, monkeypatch):
    serve(settings, server, bls=BLS, bea=BEA)
    real = CalendarEvent.objects.update_or_create
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        if kwargs.get("calendar") == "bea":
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(CalendarEvent.objects, "update_or_create", flaky)
    rows, feed_pass = run_pass()
    assert rows == 14 and not ingested().filter(calendar="bea").exists()
    assert any("bea: RuntimeError: disk full" in w for w in feed_pass.warnings)


@pytest.fixture
def wide_window(settings):
    # feed_run passes at the real clock: keep the recorded samples inside the window whatever the date.
    settings.CALENDAR_PAST_DAYS = 100_000
    settings.CALENDAR_HORIZON_DAYS = 100_000


@pytest.mark.parametrize(
    "answer,reason",
    [
        (Answer(status=500, body=b"Internal Server Error"), "answered 500"),
        (Answer(body=b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:2026"), "not an iCalendar document"),
        (Answer(body=b"<!doctype html><title>Just a moment...</title>"), "not an iCalendar document"),
        (Answer(body=b""), "empty body"),
        (
            Answer(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}),
            "answered 302",
        ),
        (Answer(status=301, headers={"Location": "http://10.0.0.1/bls.ics"}), "answered 301"),
    ],
    ids=["500", "garbage", "html", "empty", "redirect-metadata", "redirect-private"],
)
def test_a_bad_calendar_fails_the_pass_with_its_reason_and_writes_nothing(
    settings, server, wide_window, answer, reason
):
    serve(settings, server, bls=answer, bea=answer)
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "failed" and reason in state.last_error and state.consecutive_failures == 1
    assert not ingested().exists()


def test_a_huge_calendar_fails_the_pass(settings, server, wide_window):
    settings.FEEDS_MAX_BODY_BYTES = 4096
    serve(settings, server, bls=BLS)
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "failed" and "more than 4096 bytes" in state.last_error
    assert not ingested().exists()


def test_a_calendar_that_times_out_fails_the_pass(settings, server, wide_window):
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.2
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 1.0
    serve(settings, server, bls=Answer(body=BLS, delay=1.5))
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "failed" and ("Timeout" in state.last_error or "Deadline" in state.last_error)
    assert not ingested().exists()


def test_a_public_url_that_resolves_to_a_private_address_is_refused(settings, wide_window):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    settings.CALENDAR_ICS_URLS = f"bls|http://127.0.0.1:{closed_port()}/bls.ics"
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "failed" and state.last_error.startswith("TargetRefused")


def test_a_malformed_setting_fails_the_pass(settings):
    settings.CALENDAR_ICS_URLS = "just-a-url"
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "failed" and "CALENDAR_ICS_URLS" in state.last_error


def test_a_pass_through_the_runner_records_its_rows(settings, server, wide_window):
    serve(settings, server, bls=BLS, bea=BEA)
    state = feed_run(name="calendar", mode="live")
    assert state.outcome == "ok" and state.rows_written == 21 and state.last_error == ""
    assert feed_run(name="calendar", mode="live").rows_written == 21
    assert ingested().count() == 21


# --- replay ---------------------------------------------------------------------------------------
@pytest.fixture
def replay(settings):
    s = SampleServer()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.FEEDS_REPLAY_URL = s.url
    settings.CALENDAR_ICS_URLS = "bls|https://www.bls.gov/schedule/news_release/bls.ics|US,bea|https://unreachable.invalid/bea.ics|US,fed|https://unreachable.invalid/fed.ics|US"
    yield s
    s.close()


def test_replay_moves_the_samples_by_whole_weeks(replay):
    later = NOW + timedelta(days=16, hours=5)  # two whole weeks (and a bit) after the recording
    rows, _ = run_pass(replay=True, started_at=later)
    assert rows > 0 and set(ingested().values_list("replay", flat=True)) == {True}
    assert replay.paths() == ["/calendar_ics_urls/bls.ics", "/calendar_ics_urls/bea.ics"]  # no sample for fed
    cpi = CalendarEvent.objects.get(uid="20261210-cpi@bls.gov")
    # Two weeks later, same weekday (Thursday) and the same 08:30 New York time.
    assert cpi.starts_at == datetime(2026, 12, 24, 13, 30, tzinfo=UTC) and cpi.starts_at.weekday() == 3
    assert CalendarEvent.objects.get(uid="20261126-holiday@bls.gov").starts_at == datetime(
        2026, 12, 10, tzinfo=UTC
    )
    # Upcoming releases stay upcoming: some of each calendar start after the pass.
    for name in ("bls", "bea"):
        assert ingested().filter(calendar=name, starts_at__gt=later, impact="high").exists()


def test_replay_at_the_recording_moves_nothing_and_without_samples_fails(replay, settings):
    run_pass(replay=True, started_at=NOW + timedelta(hours=3))
    assert CalendarEvent.objects.get(uid="20261210-cpi@bls.gov").starts_at == datetime(
        2026, 12, 10, 13, 30, tzinfo=UTC
    )
    settings.CALENDAR_ICS_URLS = "fed|https://unreachable.invalid/fed.ics"
    with pytest.raises(FeedError, match="no recorded sample"):
        run_pass(replay=True)


def test_auto_mode_replays_an_unreachable_calendar(replay, settings):
    settings.CALENDAR_PAST_DAYS = settings.CALENDAR_HORIZON_DAYS = 100_000
    settings.CALENDAR_ICS_URLS = f"bls|http://127.0.0.1:{closed_port()}/bls.ics|US"
    state = feed_run(name="calendar", mode="auto")
    assert state.outcome == "ok" and state.last_replay and "replayed" in state.last_note
    assert ingested().filter(replay=True).count() == 14


def test_a_network_failure_of_every_calendar_is_raised_as_such(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.CALENDAR_ICS_URLS = (
        f"a|http://127.0.0.1:{closed_port()}/a.ics,b|http://127.0.0.1:{closed_port()}/b.ics"
    )
    with pytest.raises(requests.exceptions.ConnectionError):
        run_pass()


# --- admin ----------------------------------------------------------------------------------------
@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(user)
    return client


def test_staff_add_events_and_see_ingested_ones_read_only(staff_client, settings, server):
    resp = staff_client.post(
        "/admin/catalog/calendarevent/add/",
        {
            "title": "ECB monetary policy decision",
            "impact": "high",
            "category": "rates",
            "country": "EU",
            "starts_at_0": "2026-12-17",
            "starts_at_1": "13:15:00",
            "description": "Press conference at 14:45 CET",
            "url": "https://www.ecb.europa.eu/press/calendars/mgcgc/html/index.en.html",
        },
    )
    assert resp.status_code == 302, resp.context["adminform"].form.errors if resp.context else resp
    ecb = CalendarEvent.objects.get(title="ECB monetary policy decision")
    assert (ecb.source, ecb.uid, ecb.impact, ecb.impact_basis, ecb.replay) == (
        "manual",
        "",
        "high",
        "manual",
        False,
    )
    assert staff_client.get(f"/admin/catalog/calendarevent/{ecb.pk}/change/").context["has_change_permission"]

    serve(settings, server, bls=BLS)
    run_pass()
    cpi = CalendarEvent.objects.get(uid="20261210-cpi@bls.gov")
    page = staff_client.get(f"/admin/catalog/calendarevent/{cpi.pk}/change/")
    assert page.status_code == 200 and not page.context["has_change_permission"]
    assert (
        staff_client.post(f"/admin/catalog/calendarevent/{cpi.pk}/change/", {"title": "x"}).status_code == 403
    )
    assert (
        staff_client.post(f"/admin/catalog/calendarevent/{cpi.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    listing = staff_client.get(
        "/admin/catalog/calendarevent/", {"q": "Consumer Price", "impact__exact": "high"}
    )
    assert listing.status_code == 200 and b"Consumer Price Index for November 2026" in listing.content
    assert ecb.title not in listing.content.decode()
