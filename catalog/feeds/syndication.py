"""RSS 2.0 and Atom documents, read from bytes we fetched (feedparser only ever parses them; it
never fetches a URL itself): the checks every syndication feed passes before its entries are
read (the news and grant feeds), and the readings of an entry they share. Pure: no database, no
network."""

from __future__ import annotations

import calendar
import html
import re
from datetime import UTC, datetime
from typing import Any

import feedparser

from catalog.feeds.registry import FeedError

_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RE = re.compile(r"\s+")


def syndication_parse(body: bytes, *, url: str = "") -> Any:
    """The parsed document (feedparser's). Raises FeedError for an empty body, malformed XML or
    a document that is no feed; a declared encoding that feedparser overrode is not malformed."""
    if not body.strip():
        raise FeedError(f"{url}: empty body")
    parsed = feedparser.parse(body)
    if parsed.get("bozo"):
        exc = parsed.get("bozo_exception")
        if not isinstance(exc, feedparser.CharacterEncodingOverride):
            raise FeedError(f"{url}: malformed feed ({type(exc).__name__}: {exc})"[:500])
    if not parsed.get("version"):
        raise FeedError(f"{url}: not an RSS or Atom feed")
    return parsed


def strip_html(value: str) -> str:
    text = _TAG_RE.sub(" ", value or "")
    return _SPACE_RE.sub(" ", html.unescape(text)).strip()


def entry_published(entry: Any) -> datetime | None:
    """When an entry was published (else last updated), in UTC; None when it says neither."""
    for key in ("published_parsed", "updated_parsed"):
        value = entry.get(key)
        if value:
            return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    return None
