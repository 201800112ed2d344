from __future__ import annotations

from datetime import UTC, datetime


def naive_utc(value: datetime) -> str:
    """ISO 8601 in UTC without a zone designator, as the news catalog publishes it."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None
