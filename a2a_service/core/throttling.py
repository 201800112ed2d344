"""The per-client rate limit (DRF throttling, failing open).

With Redis, a client's budget is a fixed-window counter: one INCR per request in one round
trip, shared by every web process and by the credit fast path in front of Django
(billing/api/credit_fastpath.py), so a client has one budget whichever way it is served.
DRF's own history-list throttle costs two cache round trips and re-pickles up to `rate`
timestamps per request. A fixed window lets a client spend up to twice its rate across a
window boundary; that is the usual trade for counting in one step.

The credit fast path counts in the same windows without a round trip per request
(BufferedWindows): each process adds its counts to Redis every FLUSH_SECONDS and learns the
window's total from the reply; the first request of a window a process has not seen yet is
counted in Redis at once, so it learns the total before it admits anything. A client is
refused once the total it knows plus its unflushed requests reach the rate, so over several
processes (web nodes) a client can exceed its rate by what the other processes admitted in
the last FLUSH_SECONDS, each of those calls paid; a client refused on one node is refused on
every other from its first request there.

Without Redis (the embedded local stack), DRF's own throttle runs on the configured cache.
If the cache cannot be reached, the request is served and the failure logged, instead of
every request answering 500; health reports the cache as down meanwhile.

A request may carry a credential with a rate of its own (billing's whale tiers: an API key or
a whale token of an account with a tier). This package imports no app, so the apps register
a resolver (client_rate_register): given the request's META (or the bare WSGI environ), it
returns a ClientRate or None, or raises an ApiError to refuse the request (a forged or
expired credential: that refusal is an answer, not a cache failure, so it is not failed open).
A ClientRate replaces the base rate for that request and is counted in windows of its own
scope, per caller address like the base budget (ClientRateThrottle.budget)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from redis import Redis
from rest_framework.throttling import AnonRateThrottle, BaseThrottle

from a2a_service.core.background import PerProcess, repeat_every
from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import redis_client

if TYPE_CHECKING:
    from rest_framework.request import Request

logger = logging.getLogger(__name__)

WINDOW_PREFIX = "a2a:rl:"


@dataclass(frozen=True)
class ClientRate:
    """A rate a credential carries: `num_requests` per `duration` seconds, counted in windows
    of `scope` (one scope per account, say), per caller address."""

    scope: str
    num_requests: int
    duration: int


@dataclass(frozen=True)
class ClientBudget:
    """What one request is counted against: the windows of `ident`, `num_requests` per
    `duration` seconds."""

    ident: str
    num_requests: int
    duration: int


ClientRateResolver = Callable[[Mapping[str, Any]], ClientRate | None]
CLIENT_RATE_RESOLVERS: list[ClientRateResolver] = []


def client_rate_register(resolver: ClientRateResolver) -> None:
    """Register a resolver of credential rates (see the module docstring); the first that
    answers a request wins."""
    if resolver not in CLIENT_RATE_RESOLVERS:
        CLIENT_RATE_RESOLVERS.append(resolver)


def client_rate(meta: Mapping[str, Any]) -> ClientRate | None:
    """The rate the request's credential carries, or None (the base rate). Raises the
    resolver's ApiError for a refused credential."""
    for resolver in CLIENT_RATE_RESOLVERS:
        rate = resolver(meta)
        if rate is not None:
            return rate
    return None


# One round trip: count the request; the first count of a window sets its expiry.
WINDOW_TAKE = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""
_scripts: dict[int, Any] = {}


def _required_redis() -> Redis:
    # Called only where Redis is configured; raising lets the caller fail open.
    client = redis_client()
    if client is None:
        raise RuntimeError("REDIS_URL is not set")
    return client


def rate_window_take(*, ident: str, num_requests: int, duration: int) -> float | None:
    """Count one request of `ident` in the current window of `duration` seconds. Returns
    None if it is within `num_requests`, else the seconds until the window ends. Raises
    if Redis cannot be reached (callers fail open)."""
    client = _required_redis()
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(WINDOW_TAKE)
    key, remaining = _window(ident, duration, time.time())
    count = script(keys=[key], args=[duration + 1])
    return None if count <= num_requests else remaining


def _window(ident: str, duration: int, now: float) -> tuple[str, float]:
    """The window's Redis key and the seconds until it ends."""
    window = int(now // duration)
    return f"{WINDOW_PREFIX}{duration}:{window}:{ident}", (window + 1) * duration - now


class BufferedWindows:
    """This process's requests in the shared windows, added to Redis in the background."""

    FLUSH_SECONDS = 0.05

    def __init__(self, *, background: bool = True) -> None:
        """background=False: nothing flushes but explicit flush() calls (tests)."""
        self._background = background
        self._threads = PerProcess()
        self._lock = threading.Lock()
        # (key, duration, window end) -> requests not yet added to Redis
        self._pending: Counter[tuple[str, int, float]] = Counter()
        # Taken by the flush in progress: still counted here until Redis's reply is known.
        self._inflight: Counter[tuple[str, int, float]] = Counter()
        self._flushing = threading.Lock()
        self._known: dict[str, tuple[int, float]] = {}  # key -> (total in Redis, window end)

    def take(self, *, ident: str, num_requests: int, duration: int) -> float | None:
        """Like rate_window_take, from what this process knows: None if the request is
        within the rate, else the seconds until the window ends."""
        self._ensure_started()
        now = time.time()
        key, remaining = _window(ident, duration, now)
        slot = (key, duration, now + remaining)
        with self._lock:
            if key in self._known:
                known = self._known[key][0]
                if known + self._inflight[slot] + self._pending[slot] >= num_requests:
                    return remaining
                self._pending[slot] += 1
                return None
        return self._take_first(slot, num_requests, remaining)

    def _take_first(self, slot: tuple[str, int, float], num_requests: int, remaining: float) -> float | None:
        """The first request of a window this process has not seen is counted in Redis at once,
        and the reply is the window's total from every process: a client that another node (or
        another worker of this one) has taken past its rate is refused here from its first
        request, not only after the next flush. One round trip per client and window."""
        key, duration, _ = slot
        try:
            pipe = _required_redis().pipeline(transaction=False)
            pipe.incrby(key, 1)
            pipe.expire(key, duration + 1, nx=True)
            total = int(pipe.execute()[0])
        except Exception:
            # Redis is away: counted here and added at a later flush, like every other request.
            with self._lock:
                if self._inflight[slot] + self._pending[slot] >= num_requests:
                    return remaining
                self._pending[slot] += 1
            log_throttled(logger, "ratelimit-take", "could not count a request in Redis; counted locally")
            return None
        with self._lock:
            # A flush that replied meanwhile may know a higher total; keep the higher one.
            if total > self._known.get(key, (0, 0.0))[0]:
                self._known[key] = (total, slot[2])
        return None if total <= num_requests else remaining

    def flush(self) -> None:
        with self._flushing:
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, Counter()
            self._inflight = pending
        if not pending:
            return
        try:
            pipe = _required_redis().pipeline(transaction=False)
            for (key, duration, _), n in pending.items():
                pipe.incrby(key, n)
                pipe.expire(key, duration + 1, nx=True)
            replies = pipe.execute()
        except Exception:
            # Added again at the next flush, and meanwhile they still count here: while
            # Redis is away each process limits on its own counts. Ended windows are dropped.
            now = time.time()
            with self._lock:
                self._pending.update({slot: n for slot, n in pending.items() if slot[2] > now})
                self._inflight = Counter()
            log_throttled(logger, "ratelimit-flush", "could not add rate-limit counts to Redis; will retry")
            return
        now = time.time()
        with self._lock:
            for (key, _, ends), total in zip(pending, replies[::2], strict=True):
                self._known[key] = (int(total), ends)
            self._inflight = Counter()
            for key in [k for k, (_, ends) in self._known.items() if ends < now]:
                del self._known[key]

    def reset(self) -> None:
        """Forget what this process counted and knows (tests)."""
        with self._lock:
            self._pending.clear()
            self._inflight.clear()
            self._known.clear()

    def _ensure_started(self) -> None:
        if self._background:
            self._threads.ensure(self._start)

    def _start(self) -> None:
        self.reset()  # a forked child starts with nothing of its parent's
        repeat_every(self.FLUSH_SECONDS, self.flush, name="rate-limit-counts")


BUFFERED_WINDOWS = BufferedWindows()


class ClientRateThrottle(AnonRateThrottle):
    _wait: float | None = None
    _ident: str | None = None
    # Set by SimpleRateThrottle.__init__ from parse_rate(); drf-stubs does not declare them.
    num_requests: int
    duration: int

    def budget(self, request: Any) -> ClientBudget | None:
        """What this request counts against: its credential's rate (a registered resolver)
        or the base rate, per caller address; None when no rate is configured. `request` is a
        DRF request or a ThrottleEnviron (the fast paths). Raises a resolver's ApiError."""
        if self.rate is None:
            return None
        address = self.get_ident(request)
        rate = client_rate(request.META)
        if rate is None:
            return ClientBudget(ident=address, num_requests=self.num_requests, duration=self.duration)
        return ClientBudget(
            ident=f"{rate.scope}|{address}", num_requests=rate.num_requests, duration=rate.duration
        )

    def allow_request(self, request, view) -> bool:
        # Imported here: errors imports DRF, whose settings import this module.
        from a2a_service.core.errors import ApiError

        try:
            budget = self.budget(request)
            if budget is None:
                return True
            if redis_client() is None:
                # DRF's own throttle, on this budget's rate and windows (get_cache_key).
                self.num_requests, self.duration, self._ident = (
                    budget.num_requests,
                    budget.duration,
                    budget.ident,
                )
                return super().allow_request(request, view)
            self._wait = rate_window_take(
                ident=budget.ident, num_requests=budget.num_requests, duration=budget.duration
            )
            return self._wait is None
        except ApiError:
            raise  # a refused credential is an answer (401), not a cache failure
        except Exception:
            log_throttled(logger, "ratelimit-take", "rate limit not applied: the cache is unreachable")
            return True

    def get_cache_key(self, request, view) -> str | None:
        if self._ident is None:
            return super().get_cache_key(request, view)
        return self.cache_format % {"scope": self.scope, "ident": self._ident}

    def wait(self) -> float | None:
        if redis_client() is None:
            return super().wait()
        return self._wait


_base: tuple[Any, Any, ClientRateThrottle | None] = (None, None, None)


def base_throttle() -> ClientRateThrottle:
    """A ClientRateThrottle for the fast paths' budget() and get_ident(), which keep no state:
    made again only when the rates change (DRF parses the rate in every instance's __init__,
    several microseconds a request). Tests replace AnonRateThrottle.THROTTLE_RATES, so the
    rates are compared, not cached for good."""
    global _base
    rates = ClientRateThrottle.THROTTLE_RATES
    rate = rates.get(ClientRateThrottle.scope or "")
    kept_rates, kept_rate, throttle = _base
    if throttle is None or kept_rates is not rates or kept_rate != rate:
        throttle = ClientRateThrottle()
        _base = (rates, rate, throttle)
    return throttle


class ThrottleEnviron:
    """What DRF's get_ident reads of a request, straight from the WSGI environ."""

    def __init__(self, environ: dict[str, Any]) -> None:
        self.META = environ
        self.headers = {"x-forwarded-for": environ.get("HTTP_X_FORWARDED_FOR")}


def requester_fingerprint(request: Any) -> str:
    """Who is asking, for limits kept per requester (ownership challenges, admin logins): the
    caller's address as the rate limit sees it (NUM_PROXIES), an IPv6 address grouped by its
    /64 (one host commonly holds a whole /64, so its addresses are one requester), keyed with
    SECRET_KEY so that what is stored names no address. `request` is a DRF or a Django request
    (get_ident reads only META and headers)."""
    address = BaseThrottle().get_ident(cast("Request", request)) or ""
    try:
        ip = ipaddress.ip_address(address)
        if ip.version == 6:
            address = str(ipaddress.ip_network(f"{ip}/64", strict=False))
    except ValueError:
        pass  # not an address (a misconfigured proxy's header): the text itself is the requester
    digest = hmac.new(settings.SECRET_KEY.encode(), b"requester:" + address.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]
