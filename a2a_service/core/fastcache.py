"""Answers served in front of Django, kept per process and in Redis, forgotten on push.

Two WSGI layers answer requests without Django when the answer depends only on the shop's
data: the unpaid 402 challenge (billing/x402/fastpath.py) and the free documents (catalogs,
discovery documents, manifests, teasers: FreeFastPath below). Both keep

1. a per-process copy (PushInvalidatedCopy), used only while the process listens on its
   invalidation channel (a subscriber thread; while it is not subscribed the copy is unused,
   because an invalidation could be missed);
2. the stored answers in Redis, read with one Lua round trip that also counts the hit in
   today's counter hash (catalog/counters.py), so the conversion funnel keeps counting;
3. else Django renders the answer (and it is stored).

Hits served from a process's copy are counted in memory and added to the Redis counters
every second (and at exit).

The free documents are stored under a version number: a write that changes what they show
(any model save or delete but the high-churn ones listed in FREE_CACHE_IGNORED_MODELS, see
catalog/signals.py) increments the version and publishes on the channel once it commits.
The version is read before Django renders and the answer is stored only if it is still
the current one, so a document rendered from data that changed meanwhile is never stored."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, Generic, TypeVar, cast

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import timezone

from a2a_service.core.background import PerProcess, repeat_every
from a2a_service.core.hotsettings import settings_cached
from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import channel, counter_hash, redis_client
from a2a_service.core.requestlog import ENVIRON_LAYER

logger = logging.getLogger(__name__)

# (counter field "metric|key", body, response headers)
Answer = tuple[str, bytes, list[tuple[str, str]]]

LOCAL_MAX_ENTRIES = 5000
COUNT_FLUSH_SECONDS = 1.0


V = TypeVar("V")


@settings_cached
def _proxy_ssl_header() -> tuple[str, str] | None:
    header = settings.SECURE_PROXY_SSL_HEADER
    return (header[0], header[1]) if header else None


def request_is_secure(environ: dict[str, Any]) -> bool:
    """HttpRequest.is_secure() on a bare WSGI environ."""
    proxy_header = _proxy_ssl_header()
    if proxy_header is not None:
        header, secure_value = proxy_header
        value = environ.get(header)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return environ.get("wsgi.url_scheme") == "https"


class PushInvalidatedCopy(Generic[V]):
    """This process's copy of stored answers (of type V: Answer for the free documents, what the
    challenge layer prepares for its own) and its buffered hit counts."""

    def __init__(self, *, channel: str, name: str, ttl: float | None = None) -> None:
        """ttl: seconds an entry is used at most (None: until an invalidation)."""
        self.channel = channel
        self.name = name
        self.ttl = ttl
        # key -> (answer, time.monotonic() after which it is not used)
        self._data: dict[str, tuple[V, float]] = {}
        self._generation = 0
        self._listening = threading.Event()
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._threads = PerProcess()

    # -- the copy ---------------------------------------------------------------------
    def get(self, key: str) -> V | None:
        if not self._listening.is_set():
            return None
        entry = self._data.get(key)
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]

    def generation(self) -> int:
        return self._generation

    def put(self, key: str, value: V, generation: int, ttl: float | None = None) -> None:
        """ttl: this entry's own lifetime in seconds (else the copy's)."""
        life = ttl if ttl is not None else self.ttl
        with self._lock:
            # An invalidation that arrived while the value was fetched makes it stale.
            if not self._listening.is_set() or generation != self._generation:
                return
            if len(self._data) >= LOCAL_MAX_ENTRIES:
                self._data.clear()
            self._data[key] = (value, math.inf if life is None else time.monotonic() + life)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._data.clear()

    # -- counts -----------------------------------------------------------------------
    def count(self, field: str) -> None:
        """Count a hit in the counter hash field `field` ("metric|key")."""
        with self._lock:
            self._counts[field] += 1

    def flush_counts(self) -> None:
        with self._lock:
            counts, self._counts = self._counts, Counter()
        client = redis_client()
        if not counts or client is None:
            return
        try:
            pipe = client.pipeline(transaction=False)
            name = counter_hash(timezone.now().date())
            for field, n in counts.items():
                pipe.hincrby(name, field, n)
            pipe.execute()
        except Exception:
            with self._lock:  # put them back for the next try
                self._counts.update(counts)
            log_throttled(
                logger, f"{self.name}-counts", "could not add %s counts to Redis; will retry", self.name
            )

    # -- threads ----------------------------------------------------------------------
    def ensure_started(self) -> None:
        """Start the subscriber and count flusher once per process (also after a fork)."""
        self._threads.ensure(self._start)

    def _start(self) -> None:
        with self._lock:
            self._listening.clear()
            self._data.clear()
            self._counts.clear()
        threading.Thread(target=self._listen, name=f"{self.name}-invalidation", daemon=True).start()
        repeat_every(COUNT_FLUSH_SECONDS, self.flush_counts, name=f"{self.name}-counts")

    def _listen(self) -> None:
        while True:
            try:
                client = redis_client()
                if client is None:
                    return
                pubsub = client.pubsub(ignore_subscribe_messages=False)
                pubsub.subscribe(channel(self.channel))
                for message in pubsub.listen():
                    if message["type"] == "subscribe":
                        # (Re)subscribed: whatever was missed meanwhile is forgotten.
                        self.clear()
                        self._listening.set()
                    elif message["type"] == "message":
                        self.clear()
            except Exception:
                log_throttled(
                    logger,
                    f"{self.name}-invalidation-channel",
                    "%s invalidation channel lost; local copy off until resubscribed",
                    self.name,
                    level=logging.INFO,
                )
            self._listening.clear()
            self.clear()
            time.sleep(0.5)


# -- free documents -------------------------------------------------------------------------

FREE_PREFIX = "a2a:free:"
FREE_VERSION_KEY = "a2a:free:version"
FREE_CHANNEL = "a2a:free:invalidate"
# Bounds how long a document can outlive a change made while Redis was unreachable (or one
# made by a deploy: new code renders the next documents, old ones expire).
FREE_TTL_SECONDS = 60
# Set in the WSGI environ (request.META) by a free view whose answer may be stored: the
# counter field its hit is counted under.
ENVIRON_FIELD = "a2a.free_cache.field"
# The copy's entries live no longer than the stored ones: a document that (against the rule
# of CACHEABLE_ROUTES) came to depend on the clock is at most this old.
FREE_LOCAL: PushInvalidatedCopy[Answer] = PushInvalidatedCopy(
    channel=FREE_CHANNEL, name="free-cache", ttl=FREE_TTL_SECONDS
)
# Requests carrying any of these may be answered differently (or are someone's): Django.
_BYPASS_HEADERS = frozenset(
    {
        "HTTP_COOKIE",
        "HTTP_AUTHORIZATION",
        "HTTP_ORIGIN",
        "HTTP_X_API_KEY",
        "HTTP_X_WHALE_TOKEN",  # billing.whale: checked (401 if refused) and rate-limited by Django
        "HTTP_X_SESSION_TOKEN",
        "HTTP_PAYMENT_SIGNATURE",
        "HTTP_X_PAYMENT",
        "HTTP_X_INGEST_TOKEN",
        "HTTP_IDEMPOTENCY_KEY",
        "HTTP_ACCESS_CONTROL_REQUEST_METHOD",
    }
)
_MAX_KEY_CHARS = 1024
# Django's SecurityMiddleware adds HSTS only to https answers: the layer in a2a_service/wsgi.py
# adds it to the stored answers on the same condition, so it is not stored. Nor is the id of the
# request that rendered it: each answer carries its own (a2a_service/core/requestlog.py).
_NOT_STORED_HEADERS = {"strict-transport-security", "x-request-id"}
# The version, then the answer stored under it, in one round trip. (The hit is counted by
# the process once it is known to be within the client's rate, with the process's copy's hits.)
FREE_LOOKUP = """
local v = redis.call('GET', KEYS[1]) or '0'
return {v, redis.call('GET', ARGV[1] .. v .. ARGV[2])}
"""
# Store only if no write was made since the version was read (the answer may show old data).
FREE_STORE = """
if (redis.call('GET', KEYS[1]) or '0') == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
"""


@lru_cache(maxsize=1)
def settings_fingerprint() -> str:
    """Part of every key: a deployment with other settings never reads these documents."""
    values = []
    for name in sorted(dir(settings)):
        if name.isupper():
            value = getattr(settings, name, None)
            if isinstance(value, str | int | float | bool | list | tuple | type(None)):
                values.append(f"{name}={value!r}")
    return hashlib.sha1("\n".join(values).encode()).hexdigest()[:12]


@receiver(setting_changed)
def _settings_changed(**kwargs: Any) -> None:
    settings_fingerprint.cache_clear()


def free_documents_forget() -> None:
    """A write changed what the free documents show: every stored one is stale, in Redis
    (a new version) and, by the invalidation channel, in every process's copy."""
    FREE_LOCAL.clear()
    client = redis_client()
    if client is None:
        return
    try:
        client.incr(FREE_VERSION_KEY)
        client.publish(channel(FREE_CHANNEL), b"forget")
    except Exception:
        # Redis is unreachable: so is every process's copy (the subscribers lost their
        # channel and stopped using it), and stored documents expire within FREE_TTL_SECONDS.
        log_throttled(
            logger, "free-cache-forget", "could not drop stored free documents", level=logging.ERROR
        )


def _encode(field: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    return f"{field}\n".encode() + json.dumps(headers, separators=(",", ":")).encode() + b"\n" + body


def _decode(stored: bytes) -> Answer:
    field, headers, body = stored.split(b"\n", 2)
    return field.decode(), body, [(str(n), str(v)) for n, v in json.loads(headers)]


def _request_key(environ: dict[str, Any]) -> str | None:
    """What the answer depends on besides the shop's data; None: not a cacheable request."""
    if environ.get("REQUEST_METHOD") != "GET" or not _BYPASS_HEADERS.isdisjoint(environ):
        return None
    path = environ.get("PATH_INFO", "")
    if not (path.startswith(("/api/", "/.well-known/"))) or path.startswith("/api/a2a/x402/"):
        return None
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    scheme = "https" if request_is_secure(environ) else "http"
    # Django's answer varies on Accept (content negotiation) and on the forwarded host.
    accept = environ.get("HTTP_ACCEPT", "")
    forwarded = environ.get("HTTP_X_FORWARDED_HOST", "")
    key = f"{scheme}|{host}|{forwarded}|{accept}|{path}?{environ.get('QUERY_STRING', '')}"
    if len(key) > _MAX_KEY_CHARS:
        return None
    return key


class FreeFastPath:
    """WSGI middleware: the free documents Django stored, served without Django."""

    def __init__(self, app: Callable) -> None:
        self.app = app
        self._scripts: dict[str, Any] = {}

    def _script(self, client: Any, name: str, source: str) -> Any:
        script = self._scripts.get(name)
        if script is None:
            script = self._scripts[name] = client.register_script(source)
        return script

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        request_key = _request_key(environ)
        if request_key is None:
            return self.app(environ, start_response)
        client = redis_client()
        if client is None:
            return self.app(environ, start_response)
        FREE_LOCAL.ensure_started()
        fingerprint = settings_fingerprint()
        local_key = f"{fingerprint}:{request_key}"
        local = FREE_LOCAL.get(local_key)
        if local is not None:
            if not _within_rate(environ):
                return self.app(environ, start_response)  # Django answers 429 with Retry-After
            FREE_LOCAL.count(local[0])
            environ[ENVIRON_LAYER] = "free_cache"
            start_response("200 OK", local[2])
            return [local[1]]
        generation = FREE_LOCAL.generation()
        head, tail = f"{FREE_PREFIX}{fingerprint}:", f":{request_key}"
        try:
            version, stored = self._script(client, "lookup", FREE_LOOKUP)(
                keys=[FREE_VERSION_KEY], args=[head, tail]
            )
        except Exception:  # Redis trouble: Django answers, as it would without this layer
            return self.app(environ, start_response)
        if stored:
            try:
                answer = _decode(stored)
            except (ValueError, TypeError):  # not something this layer stored: Django answers
                return self.app(environ, start_response)
            FREE_LOCAL.put(local_key, answer, generation)
            if not _within_rate(environ):
                return self.app(environ, start_response)
            FREE_LOCAL.count(answer[0])
            environ[ENVIRON_LAYER] = "free_cache"
            start_response("200 OK", answer[2])
            return [answer[1]]
        key = head + version.decode() + tail
        return self._render_and_store(environ, start_response, client, version=version, key=key)

    def _render_and_store(
        self, environ: dict[str, Any], start_response: Callable, client: Any, *, version: bytes, key: str
    ) -> Iterable[bytes]:
        sent: list[tuple[str, list[tuple[str, str]]]] = []

        def recording_start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            sent.append((status, list(headers)))
            return start_response(status, headers, exc_info)

        result = self.app(environ, recording_start_response)
        field = environ.get(ENVIRON_FIELD)
        if not field or not sent or not sent[-1][0].startswith("200 "):
            return result
        headers = sent[-1][1]
        if any(name.lower() in ("set-cookie", "content-encoding") for name, _ in headers):
            return result  # someone's answer, or one that depends on more than the key
        try:
            body = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        stored_headers = [(n, v) for n, v in headers if n.lower() not in _NOT_STORED_HEADERS]
        try:
            self._script(client, "store", FREE_STORE)(
                keys=[FREE_VERSION_KEY, key],
                args=[version, _encode(field, stored_headers, body), FREE_TTL_SECONDS],
            )
        except Exception:  # storing is an optimisation: the answer stands without it
            log_throttled(logger, "free-cache-store", "could not store a free document in Redis")
        return [body]


def _within_rate(environ: dict[str, Any]) -> bool:
    """The client's rate limit, in the windows Django's throttle uses (one budget). Over it,
    Django answers (429 with Retry-After)."""
    # Imported here: the throttle module is imported by DRF's settings, after this one.
    from rest_framework.request import Request

    from a2a_service.core.throttling import BUFFERED_WINDOWS, ThrottleEnviron, base_throttle

    try:
        throttle = base_throttle()
        if not throttle.rate:
            return True
        wait = BUFFERED_WINDOWS.take(
            # get_ident reads only META and headers, which ThrottleEnviron has (no DRF Request here).
            ident=throttle.get_ident(cast(Request, ThrottleEnviron(environ))),
            num_requests=throttle.num_requests,
            duration=throttle.duration,
        )
        if wait:
            # Django refuses it (429, Retry-After) once it counts what this process admitted.
            BUFFERED_WINDOWS.flush()
    except Exception:  # the throttle fails open, as Django's does
        return True
    return not wait
