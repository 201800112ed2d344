"""The feed sources and what one pass of one source gets to work with.

An adapter package (catalog/feeds/<source>/) registers one `FeedSource` when it is imported:
its name, its default interval and its `run(feed_pass) -> rows written`. A pass reads its base
URLs through `FeedPass.base()` (the live setting, or the local replay server's stand-in for
it) and fetches through `FeedPass.fetch()` (the project's one outbound HTTP function, with the
feed limits). It raises FeedError (or anything) to fail the pass: the runner records the
reason, rolls back what the pass wrote and backs the source off; other sources go on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.conf import settings
from django.utils import timezone

from a2a_service.core.http import outbound_request


class FeedError(Exception):
    """A pass failed for a reason worth recording (bad status, garbage, too large, ...)."""


@dataclass(frozen=True, kw_only=True)
class FeedSource:
    name: str  # e.g. "news", "exchanges", "polymarket"; the ingest_feeds --source name
    run: Callable[[FeedPass], int]
    interval_seconds: int = 300
    description: str = ""
    # The settings holding this source's base URLs; in replay mode each is served by the
    # replay server under /<setting name in lower case>/ (see FeedPass.base).
    url_settings: tuple[str, ...] = ()


@dataclass
class FeedPass:
    source: str
    replay: bool = False
    started_at: datetime = field(default_factory=timezone.now)
    # What went wrong in part of a pass that still succeeded (one feed of several failed):
    # the runner records it on the source's FeedState (last_note) without failing the pass.
    warnings: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def base(self, setting_name: str) -> str:
        """The base URL of a setting: the live one, or its replay stand-in."""
        if self.replay:
            return self.replay_base(setting_name.lower())
        return str(getattr(settings, setting_name)).rstrip("/")

    def replay_shift(self, newest: datetime, *, step: timedelta = timedelta(minutes=1)) -> timedelta:
        """How far to move a recorded sample's timestamps so that its newest one (`newest`)
        lands on this pass's start, floored to `step` (a bar's length keeps bars aligned).
        Zero on a live pass. Recorded samples keep their shape (a trend, a range, a gap) but
        would otherwise grow older every day and make every product stale; the rows stay
        marked replay, so nobody mistakes them for live data."""
        if not self.replay:
            return timedelta(0)
        step_s = max(int(step.total_seconds()), 1)
        target = datetime.fromtimestamp(int(self.started_at.timestamp()) // step_s * step_s, tz=UTC)
        return max(target - newest, timedelta(0))

    def replay_base(self, key: str) -> str:
        """The replay server's base for `key`: it serves catalog/feeds/samples/<key>/."""
        return f"{settings.FEEDS_REPLAY_URL.rstrip('/')}/{key}"

    def fetch(self, url: str, *, params: dict[str, Any] | None = None, **kwargs: Any) -> requests.Response:
        """GET through the one outbound HTTP function: the feed's timeout and deadline, a
        bounded body, our User-Agent, no redirects, no private targets (except the replay
        server, which is the operator's own). A non-2xx answer or a full body fails the pass."""
        headers = {"User-Agent": settings.FEEDS_USER_AGENT, **kwargs.pop("headers", {})}
        limit = settings.FEEDS_MAX_BODY_BYTES
        resp = outbound_request(
            "GET",
            url,
            params=params,
            headers=headers,
            timeout=settings.FEEDS_HTTP_TIMEOUT_SECONDS,
            deadline=settings.FEEDS_HTTP_DEADLINE_SECONDS,
            max_body_bytes=limit + 1,
            public_only=False if self.replay else None,
            **kwargs,
        )
        if resp.is_redirect or not 200 <= resp.status_code < 300:
            raise FeedError(f"{url} answered {resp.status_code}")
        if len(resp.content) > limit:
            raise FeedError(f"{url} answered more than {limit} bytes")
        return resp


_SOURCES: dict[str, FeedSource] = {}


def feed_register(source: FeedSource) -> FeedSource:
    if source.name in _SOURCES:
        raise ValueError(f"feed source {source.name} registered twice")
    _SOURCES[source.name] = source
    return source


def feeds_all() -> list[FeedSource]:
    return list(_SOURCES.values())


def feed_get(name: str) -> FeedSource | None:
    return _SOURCES.get(name)
