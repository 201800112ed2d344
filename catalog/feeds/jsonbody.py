"""Reading the JSON a feed answered and the loose numbers inside it. A body that is not JSON
fails the pass (FeedError); one odd field of one record is read as missing instead, so a
venue's typo in one market does not cost the others."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import requests

from catalog.feeds.registry import FeedError


def json_body(resp: requests.Response) -> Any:
    """The decoded body, or FeedError for an empty or malformed one."""
    if not resp.content.strip():
        raise FeedError(f"{resp.url} answered an empty body")
    try:
        return json.loads(resp.content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FeedError(f"{resp.url} answered malformed JSON: {str(exc)[:120]}") from None


def number(value: Any) -> float | None:
    """A finite number from a JSON number or a numeric string; None for anything else."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        result = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            result = float(value)
        except ValueError:
            return None
    else:
        return None
    return result if math.isfinite(result) else None


def decimal(value: Any, *, places: int, limit: float) -> Decimal | None:
    """`value` as a Decimal rounded to `places`, or None when missing, not finite or |value| >= limit
    (the column's max_digits)."""
    f = number(value)
    if f is None or abs(f) >= limit:
        return None
    try:
        return Decimal(str(f)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None


def probability(value: Any) -> Decimal | None:
    """A price of a binary outcome: a number in [0, 1], 6 places."""
    p = decimal(value, places=6, limit=10)
    return p if p is not None and 0 <= p <= 1 else None


def usd(value: Any) -> Decimal | None:
    """A non-negative USD amount, 2 places (DecimalField(max_digits=24, decimal_places=2))."""
    d = decimal(value, places=2, limit=1e21)
    return d if d is not None and d >= 0 else None


def timestamp(value: Any) -> datetime | None:
    """An ISO 8601 time ("2026-11-30T12:00:00Z", "2026-11-30"), aware UTC; None when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def text(value: Any, *, max_length: int) -> str:
    return value.strip()[:max_length] if isinstance(value, str) else ""
