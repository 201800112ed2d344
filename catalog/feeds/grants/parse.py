"""Grant announcements from RSS 2.0/Atom bytes (read and checked by catalog/feeds/syndication.py):
title, link, summary, publication time and the application deadline when the entry states one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from catalog.feeds.syndication import entry_published, strip_html, syndication_parse

_MON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# A date as announcements write it: 2026-03-31, March 31, 2026 / Mar 31 2026, 31 March 2026.
_DATE = (
    rf"(\d{{4}}-\d{{2}}-\d{{2}}|{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}\s+{_MON}\s+\d{{4}})"
)
# The date must follow a deadline word, so a program's start or event date is not taken for it.
DEADLINE_RE = re.compile(
    rf"\b(?:deadline|apply by|applications? (?:close[sd]?|due|open until)|close[sd]?|due(?: date)?|"
    rf"submissions? (?:close[sd]?|due)|until)\b\W{{0,3}}(?:on\s+|is\s+|by\s+)?{_DATE}",
    re.IGNORECASE,
)
# Date fields some grant feeds carry besides pubDate (feedparser exposes unknown elements by name).
DEADLINE_FIELDS = ("deadline", "closes", "expirationdate", "ev_enddate")


@dataclass(kw_only=True)
class GrantEntry:
    external_id: str
    title: str
    link: str
    summary: str
    published_at: datetime | None
    deadline: datetime | None


def date_parse(value: str) -> datetime | None:
    """A stated date (one of the forms of _DATE), as the end of that day in UTC: a deadline
    "March 31" is open all of March 31."""
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", value.strip().rstrip(".")).replace(",", " ")
    text = re.sub(r"\.", "", " ".join(text.split()))
    for fmt in ("%Y-%m-%d", "%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y"):
        try:
            day = datetime.strptime(text if fmt == "%Y-%m-%d" else text.title().replace("Sept ", "Sep "), fmt)
        except ValueError:
            continue
        return datetime.combine(day.date(), time(23, 59, 59), tzinfo=UTC)
    return None


def deadline_in(text: str) -> datetime | None:
    match = DEADLINE_RE.search(text)
    return date_parse(match.group(1)) if match else None


def _deadline(entry: Any, text: str) -> datetime | None:
    for key in DEADLINE_FIELDS:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            parsed = date_parse(value) or deadline_in(f"deadline {value}")
            if parsed is not None:
                return parsed
    return deadline_in(text)


def grants_parse(body: bytes, *, url: str = "") -> list[GrantEntry]:
    """Raises FeedError for an empty body, malformed XML or a document that is no feed."""
    parsed = syndication_parse(body, url=url)
    out = []
    for entry in parsed.entries:
        title = strip_html(entry.get("title", ""))[:400]
        link = (entry.get("link") or "").strip()[:500]
        if not title and not link:
            continue
        summary = strip_html(entry.get("summary", ""))
        out.append(
            GrantEntry(
                external_id=(entry.get("id") or link or title)[:300],
                title=title or link,
                link=link,
                summary=summary[:2000],
                published_at=entry_published(entry),
                deadline=_deadline(entry, f"{title}. {summary}"),
            )
        )
    return out


__all__ = ["GrantEntry", "date_parse", "deadline_in", "grants_parse"]
