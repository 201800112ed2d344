"""Trading hours of the reference markets the tokenized assets track, from the wall clock in
New York (zoneinfo, so daylight saving is followed). Exchange holidays and half days are not
modelled: on such a day the calendar below says open while the market is closed (products
say so in their `method`).

- US equities (NYSE/Nasdaq): pre-market 04:00-09:30, regular session 09:30-16:00, after hours
  16:00-20:00, Monday to Friday; closed otherwise.
- Spot metals (gold, silver, platinum, palladium; the CME Globex metals session): open from
  Sunday 18:00 to Friday 17:00 with a daily break 17:00-18:00.

Every function takes `now` (an aware datetime) so that callers and tests fix the instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

NEW_YORK = ZoneInfo("America/New_York")
PRE_OPEN, OPEN, CLOSE, POST_CLOSE = time(4, 0), time(9, 30), time(16, 0), time(20, 0)
METALS_BREAK_START, METALS_BREAK_END = time(17, 0), time(18, 0)
SPOT_METALS = frozenset({"XAU", "XAG", "XPT", "XPD"})
SEARCH_DAYS = 10  # the next open is never further than a long weekend away

UsSessionState = Literal["pre_market", "regular", "after_hours", "closed"]
ReferenceMarket = Literal["us_equities", "spot_metals"]


def _at(day: date, clock: time) -> datetime:
    return datetime.combine(day, clock, tzinfo=NEW_YORK)


def _trading_day(day: date) -> bool:
    return day.weekday() < 5


def us_session_state(now: datetime) -> UsSessionState:
    local = now.astimezone(NEW_YORK)
    if not _trading_day(local.date()):
        return "closed"
    clock = local.time()
    if PRE_OPEN <= clock < OPEN:
        return "pre_market"
    if OPEN <= clock < CLOSE:
        return "regular"
    if CLOSE <= clock < POST_CLOSE:
        return "after_hours"
    return "closed"


def us_next_open(now: datetime) -> datetime:
    """The next regular-session open strictly after `now` (UTC)."""
    day = now.astimezone(NEW_YORK).date()
    for offset in range(SEARCH_DAYS):
        candidate = _at(day + timedelta(days=offset), OPEN)
        if _trading_day(candidate.date()) and candidate > now:
            return candidate.astimezone(UTC)
    raise ValueError("no open within ten days")  # unreachable on a Monday-Friday week


def us_next_close(now: datetime) -> datetime:
    """The close of the session in progress, else of the next one (UTC)."""
    local = now.astimezone(NEW_YORK)
    if us_session_state(now) == "regular":
        return _at(local.date(), CLOSE).astimezone(UTC)
    return _at(us_next_open(now).astimezone(NEW_YORK).date(), CLOSE).astimezone(UTC)


def us_last_close(now: datetime) -> datetime:
    """The most recent regular-session close at or before `now` (UTC)."""
    day = now.astimezone(NEW_YORK).date()
    for offset in range(SEARCH_DAYS):
        candidate = _at(day - timedelta(days=offset), CLOSE)
        if _trading_day(candidate.date()) and candidate <= now:
            return candidate.astimezone(UTC)
    raise ValueError("no close within ten days")


def metals_open(now: datetime) -> bool:
    local = now.astimezone(NEW_YORK)
    weekday, clock = local.weekday(), local.time()
    if weekday == 5:  # Saturday
        return False
    if weekday == 6:  # Sunday: opens at 18:00
        return clock >= METALS_BREAK_END
    if weekday == 4:  # Friday: closes for the weekend at 17:00
        return clock < METALS_BREAK_START
    return not METALS_BREAK_START <= clock < METALS_BREAK_END


def metals_last_close(now: datetime) -> datetime:
    """The most recent 17:00 close (Monday to Friday) at or before `now` (UTC)."""
    day = now.astimezone(NEW_YORK).date()
    for offset in range(SEARCH_DAYS):
        candidate = _at(day - timedelta(days=offset), METALS_BREAK_START)
        if _trading_day(candidate.date()) and candidate <= now:
            return candidate.astimezone(UTC)
    raise ValueError("no close within ten days")


def metals_next_open(now: datetime) -> datetime:
    """The next reopening (18:00, Sunday to Thursday) strictly after `now` (UTC)."""
    day = now.astimezone(NEW_YORK).date()
    for offset in range(SEARCH_DAYS):
        candidate = _at(day + timedelta(days=offset), METALS_BREAK_END)
        if candidate.weekday() in (6, 0, 1, 2, 3) and candidate > now:
            return candidate.astimezone(UTC)
    raise ValueError("no open within ten days")


def reference_market(underlying: str) -> ReferenceMarket:
    return "spot_metals" if underlying.strip().upper() in SPOT_METALS else "us_equities"


@dataclass(frozen=True)
class ReferenceState:
    market: ReferenceMarket
    open: bool
    last_close: datetime  # UTC
    next_open: datetime  # UTC: the next open strictly after now (the next session's when open)


def reference_state(underlying: str, now: datetime) -> ReferenceState:
    """Whether the underlying's own market trades now (for equities: the regular session)."""
    market = reference_market(underlying)
    if market == "spot_metals":
        return ReferenceState(
            market=market,
            open=metals_open(now),
            last_close=metals_last_close(now),
            next_open=metals_next_open(now),
        )
    return ReferenceState(
        market=market,
        open=us_session_state(now) == "regular",
        last_close=us_last_close(now),
        next_open=us_next_open(now),
    )


def quote_stale(*, quoted_at: datetime, state: ReferenceState, now: datetime, max_age: timedelta) -> bool:
    """Whether a reference quote is older than it should be: while its market trades, older
    than `max_age`; while it is closed, older than `max_age` before the last close (the last
    close is then the right reference, however long ago it was)."""
    if state.open:
        return now - quoted_at > max_age
    return quoted_at < state.last_close - max_age
