"""The feed sources and what one pass of one source gets to work with.

An adapter package (catalog/feeds/<source>/) registers one `FeedSource` when it is imported:
its name, its default interval and its `run(feed_pass) -> rows written`. A pass reads its base
URLs through `FeedPass.base()` (the live setting, or the local replay server's stand-in for
it) and fetches through `FeedPass.fetch()` (the project's one outbound HTTP function, with the
feed limits). It raises FeedError (or anything) to fail the pass: the runner records the
reason, rolls back what the pass wrote and backs the source off; other sources go on."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings
from django.utils import timezone

from a2a_service.core.http import TargetRefused, outbound_request


class FeedError(Exception):
    """A pass failed for a reason worth recording (bad status, garbage, too large, ...)."""


class RpcError(FeedError):
    """A JSON-RPC node answered with an error object (its code and message kept)."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


# JSON-RPC request ids: unique within the process, so an answer meant for another request
# (a confused proxy, a replayed body) is recognised.
_rpc_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class FeedSource:
    name: str  # e.g. "news", "exchanges", "polymarket"; the ingest_feeds --source name
    run: Callable[[FeedPass], int]
    interval_seconds: int = 300
    description: str = ""
    # The settings holding this source's base URLs; in replay mode each is served by the
    # replay server under /<setting name in lower case>/ (see FeedPass.base).
    url_settings: tuple[str, ...] = ()


@dataclass(frozen=True)
class FeedFailure:
    """One feed of a source (a news feed's URL, a venue, a partner) that failed in a pass, and
    why in words fit for the public health report (see public_reason)."""

    feed: str
    reason: str


@dataclass
class FeedPass:
    source: str
    replay: bool = False
    started_at: datetime = field(default_factory=timezone.now)
    # What went wrong in part of a pass that still succeeded (one feed of several failed):
    # the runner records it on the source's FeedState (last_note) without failing the pass.
    warnings: list[str] = field(default_factory=list)
    # The feeds of the source that failed in this pass (FeedState.last_failed_feeds; health
    # shows the source degraded with them).
    failed_feeds: list[FeedFailure] = field(default_factory=list)
    # Oddities of the source's data that the pass worked around (a row sent twice, ...): their
    # count goes to FeedState.last_oddities, their text to last_note. Never a failure.
    oddities: int = 0

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def feed_failed(self, *, feed: str, error: BaseException, detail: str | None = None) -> None:
        """One feed of the source failed (the others go on): recorded for health with a public
        reason, and warned of with the full one (`detail`, else the exception) for the admin."""
        self.failed_feeds.append(FeedFailure(feed=public_url(feed), reason=public_reason(error)))
        self.warn(detail or f"{feed}: {type(error).__name__}: {error}"[:500])

    def oddity(self, text: str, *, count: int = 1) -> None:
        """Something odd in the source's data that the pass handled (counted, noted)."""
        self.oddities += count
        self.warn(text[:500])

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

    def rpc(
        self,
        url: str,
        method: str,
        params: list[Any] | None = None,
        *,
        timeout: float | None = None,
        allow_private: bool = False,
    ) -> Any:
        """One JSON-RPC 2.0 call (POST) through the one outbound HTTP function, with fetch's
        limits (bounded body, our User-Agent, no redirects, no private targets except the
        replay server). Returns the answer's `result`. A non-2xx status, a redirect, a body
        that is not JSON, an answer of the wrong shape (not an object, another request's id,
        neither result nor error) raise FeedError; a JSON-RPC error object raises RpcError.

        `timeout` replaces the feed's timeout and deadline (the RPC probes keep theirs short).
        `allow_private`: the operator's own node (CHAIN_RPC_URL, often on loopback or a
        private network) may be on a private address, like the facilitator's origin; any
        other URL keeps the outbound rule."""
        request_id = next(_rpc_ids)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or []}
        limit = settings.FEEDS_MAX_BODY_BYTES
        resp = outbound_request(
            "POST",
            url,
            data=json.dumps(payload).encode(),
            headers={
                "User-Agent": settings.FEEDS_USER_AGENT,
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            timeout=timeout or settings.FEEDS_HTTP_TIMEOUT_SECONDS,
            deadline=timeout or settings.FEEDS_HTTP_DEADLINE_SECONDS,
            max_body_bytes=limit + 1,
            public_only=False if (self.replay or allow_private) else None,
        )
        if resp.is_redirect or resp.status_code in (301, 302, 303, 307, 308):
            raise FeedError(f"{url} answered {resp.status_code} (a redirect, not followed)")
        if len(resp.content) > limit:
            raise FeedError(f"{url} answered more than {limit} bytes")
        try:
            answer = json.loads(resp.content) if resp.content.strip() else None
        except (ValueError, UnicodeDecodeError):
            answer = None
        if not 200 <= resp.status_code < 300:
            # Some nodes carry a JSON-RPC error on a 4xx/5xx: its message says more than the status.
            detail = _rpc_error_text(answer.get("error")) if isinstance(answer, dict) else ""
            raise FeedError(f"{url} answered {resp.status_code}" + (f": {detail}" if detail else ""))
        if answer is None:
            raise FeedError(f"{url} answered {method} with a body that is not JSON")
        if not isinstance(answer, dict):
            raise FeedError(f"{url} answered {method} with a JSON {type(answer).__name__}, not an object")
        if answer.get("id") != request_id:
            raise FeedError(
                f"{url} answered {method} with id {str(answer.get('id'))[:40]!r}, not {request_id}"
            )
        if answer.get("error") is not None:
            error = answer["error"]
            code = error.get("code") if isinstance(error, dict) else None
            raise RpcError(
                f"{url} answered {method} with JSON-RPC error {_rpc_error_text(error)}",
                code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            )
        if "result" not in answer:
            raise FeedError(f"{url} answered {method} with neither result nor error")
        return answer["result"]


# How an unreachable source is named in public (the exception's text may name hosts and ports).
_NETWORK_WORDS: tuple[tuple[type[BaseException], str], ...] = (
    (requests.exceptions.Timeout, "timed out"),
    (requests.exceptions.ConnectionError, "unreachable"),
    (TargetRefused, "refused: not a public address"),
)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


def public_url(url: str) -> str:
    """A feed's URL as health may show it: no credentials, query or fragment (a feed URL may
    carry a token there). Anything that is not a URL (a venue, a partner's slug) as it is."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return url[:300]
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    host += f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, host, parts.path, "", ""))[:300]


def public_reason(error: BaseException) -> str:
    """Why a feed failed, in words health may show anyone: a network failure by its kind; our
    own FeedError's text (what the source answered) and ccxt's without any URL in it; any other
    exception (a driver's, a bug's) by its class name only."""
    for kind, words in _NETWORK_WORDS:
        if isinstance(error, kind):
            return words
    own = isinstance(error, FeedError)
    if own or type(error).__module__.startswith("ccxt"):
        text = " ".join(_URL.sub("", str(error)).split()).strip(" :;,")
        if own:
            return (text or type(error).__name__)[:200]
        return (f"{type(error).__name__}: {text}" if text else type(error).__name__)[:200]
    return type(error).__name__


def _rpc_error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{str(error.get('code'))[:20]}: {str(error.get('message'))[:200]}"
    return str(error)[:200]


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
