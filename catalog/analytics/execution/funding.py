"""Perpetual funding: a reading's funding period and its rate as a simple annual percentage."""

from __future__ import annotations

from datetime import datetime

# The perpetual funding period when a reading does not tell it (the usual 8 h of the majors).
DEFAULT_FUNDING_HOURS = 8.0


def funding_hours(funding_at: datetime | None, next_funding_at: datetime | None) -> float:
    """The funding period: the distance between the reading's funding time and the next one
    when the venue gives both (okx), else DEFAULT_FUNDING_HOURS."""
    if funding_at is not None and next_funding_at is not None and next_funding_at > funding_at:
        hours = (next_funding_at - funding_at).total_seconds() / 3600
        if 0.5 <= hours <= 24:
            return hours
    return DEFAULT_FUNDING_HOURS


def funding_annualized_pct(rate: float, hours: float) -> float:
    """A per-period funding rate as a simple annual percentage (periods a year x rate)."""
    return rate * (24.0 / hours) * 365.0 * 100.0
