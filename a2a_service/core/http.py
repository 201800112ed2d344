"""The one function through which the service talks HTTP to the outside. Tests patch
it, and every adapter (facilitator, feeds, RPC probes, webhook deliveries) goes through it.

Server-side request forgery: a URL's host is resolved when the connection is opened, every
address it resolves to is checked, and the socket is connected to the checked address (the
Host header, TLS SNI and certificate verification still use the hostname). A check done
earlier (when a webhook is registered) proves nothing later: DNS can answer differently by
then (rebinding). Redirects are never followed, so a public URL cannot bounce to a private one.

A receiver can keep a request alive indefinitely by sending a byte just before each read
timeout; `deadline` bounds the whole exchange (resolution, connect, headers, body) on the
wall clock: a watchdog shuts the sockets down when it passes."""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, cast
from urllib.parse import urlparse

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 forms that carry an IPv4 address a gateway will reach: the address is judged by the
# IPv4 address inside (6to4 2002::/16 and IPv4-mapped are unwrapped by ipaddress itself).
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Local-use NAT64 (RFC 8215): its embedding is the operator's, so nothing inside is trusted.
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
# The only IPv6 unicast space allocated for the public internet.
GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")


class TargetRefused(Exception):
    """The URL is not one this service may connect to (not an OSError on purpose: urllib3
    would wrap it as a connection failure and the reason would be lost)."""


class DeadlineExceeded(requests.exceptions.Timeout):
    """The whole exchange took longer than its deadline."""


def address_public(address: IPAddress) -> bool:
    """Whether an address is on the public internet, judging an IPv4 address carried in an
    IPv6 one (IPv4-mapped, 6to4, NAT64) by the IPv4 address. Python's `is_private` misses
    CGNAT (100.64.0.0/10, where cloud metadata services such as 100.100.100.200 live) and
    treats 6to4 and NAT64 as global; `is_global` plus the unwrapping does not."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address.sixtofour is not None:
            address = address.sixtofour
        elif address in NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        elif address in NAT64_LOCAL or address not in GLOBAL_UNICAST_V6:
            return False
    return address.is_global and not address.is_multicast and not address.is_reserved


def host_addresses(host: str, port: int) -> list[str]:
    """The resolver (tests patch it to play DNS rebinding)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_addresses(host: str, port: int, *, public_only: bool) -> list[str]:
    """Resolve `host`; with `public_only`, refuse it if any address it resolves to is not
    public (a name with one private address among public ones is someone's trick)."""
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
        addresses = [str(literal)]
    except ValueError:
        try:
            addresses = host_addresses(host, port)
        except (socket.gaierror, UnicodeError, ValueError):  # UnicodeError: a host IDNA cannot encode
            raise TargetRefused(f"{host} does not resolve") from None
    if not addresses:
        raise TargetRefused(f"{host} does not resolve")
    if public_only:
        for text in addresses:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            if not address_public(address):
                raise TargetRefused(f"{host} resolves to a non-public address ({address})")
    return addresses


class _Exchange:
    """One deadline-bound exchange: the sockets it opened, for its watchdog."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = time.monotonic() + (seconds if seconds is not None else 1e9)
        self.expired = False
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()

    def adopt(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.expired:  # the watchdog already fired: do not start talking
                sock.close()
                raise DeadlineExceeded("connecting outlived the deadline")

    def expire(self) -> None:
        """The watchdog (another thread): shutting a socket down wakes a recv blocked on it."""
        with self.lock:
            self.expired = True
            for sock in self.sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for sock in sockets:
            try:
                sock.close()
            except OSError:
                pass


class _Current(threading.local):
    exchange: _Exchange | None = None


_current = _Current()
_resolver_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")


def _resolve_within(host: str, port: int, public_only: bool) -> list[str]:
    """Resolution is a blocking C call the watchdog cannot interrupt: under a deadline it runs
    on a helper thread and is abandoned when the deadline passes."""
    exchange = _current.exchange
    if exchange is None:
        return checked_addresses(host, port, public_only=public_only)
    future = _resolver_pool.submit(checked_addresses, host, port, public_only=public_only)
    try:
        return future.result(timeout=max(exchange.deadline - time.monotonic(), 0.0))
    except FutureTimeout:
        exchange.expire()
        raise DeadlineExceeded(f"resolving {host} outlived the deadline") from None


class _PinnedConnectionMixin:
    """urllib3 connection that resolves through `checked_addresses` and connects to the
    address it checked. `self.host` stays the hostname, so urllib3 still sends it as the
    Host header and uses it for TLS SNI and certificate verification."""

    public_only: bool = True
    _dns_host: str
    port: int
    timeout: Any
    source_address: Any
    socket_options: Any
    host: str

    def _new_conn(self) -> socket.socket:
        addresses = _resolve_within(self._dns_host, self.port, self.public_only)
        exchange = _current.exchange
        last_error: OSError | None = None
        for address in addresses:
            connect_timeout = self.timeout
            if exchange is not None:  # a socket still connecting is not yet the watchdog's to shut
                remaining = max(exchange.deadline - time.monotonic(), 0.001)
                connect_timeout = remaining if connect_timeout is None else min(connect_timeout, remaining)
            try:
                sock = urllib3_connection.create_connection(
                    (address, self.port),
                    connect_timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out") from exc
            except OSError as exc:
                last_error = exc
                continue
            if exchange is not None:
                exchange.adopt(sock)
            sys.audit("http.client.connect", self, self.host, self.port)
            return sock
        # The mixin is only ever combined with HTTPConnection (see _adapter_class).
        raise NewConnectionError(
            cast(HTTPConnection, self), f"Failed to establish a new connection: {last_error}"
        )


def _adapter_class(*, public_only: bool) -> type[HTTPAdapter]:
    http_conn = type("PinnedHTTPConnection", (_PinnedConnectionMixin, HTTPConnection), {})
    https_conn = type("PinnedHTTPSConnection", (_PinnedConnectionMixin, HTTPSConnection), {})
    # type() builds the classes at runtime, so mypy sees plain `type`: set the mixin's flag by name.
    setattr(http_conn, "public_only", public_only)  # noqa: B010
    setattr(https_conn, "public_only", public_only)  # noqa: B010
    http_pool = type("PinnedHTTPConnectionPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn})
    https_pool = type("PinnedHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn})

    class PinnedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": http_pool, "https": https_pool}

    return PinnedAdapter


_ADAPTERS = {flag: _adapter_class(public_only=flag) for flag in (True, False)}


def _new_session(*, public_only: bool) -> requests.Session:
    session = requests.Session()
    # No proxy from the environment when only public addresses may be reached: a proxy would
    # resolve the host itself, after our check.
    session.trust_env = not public_only
    for scheme in ("http://", "https://"):
        session.mount(scheme, _ADAPTERS[public_only]())
    return session


# Pooled sessions for calls without a deadline (a pooled connection goes to an address that
# was checked when it was opened).
_sessions = {True: _new_session(public_only=True), False: _new_session(public_only=False)}
# Kept for callers that close the pooled connections (tests, after a live server stops).
_session = _sessions[False]


def close_sessions() -> None:
    for session in _sessions.values():
        session.close()


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlparse(url)
    try:
        port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    except ValueError:
        port = None
    return parsed.scheme, (parsed.hostname or ""), port


def _operator_origin(url: str) -> bool:
    """The operator's own facilitator (often self-hosted on loopback) is configuration, not
    input: a URL of its origin (scheme, host and port) may be private."""
    origin = _origin(url)
    return bool(origin[1]) and origin == _origin(settings.FACILITATOR_URL)


def outbound_request(
    method: str,
    url: str,
    *,
    timeout: float | None = None,
    public_only: bool | None = None,
    deadline: float | None = None,
    max_body_bytes: int | None = None,
    **kwargs: Any,
) -> requests.Response:
    """`timeout` bounds each connect and each read; `deadline` (seconds) the whole exchange.
    `public_only` None: on, unless OUTBOUND_ALLOW_PRIVATE_TARGETS or the URL is on the
    operator's facilitator origin. `max_body_bytes`: the body is cut there (a receiver's answer
    is only excerpted). Raises TargetRefused, DeadlineExceeded or a requests exception.

    Each call is logged once at INFO (its callers report failures as they see fit) with its
    method, the URL without its query or credentials (which may carry someone's token), status or
    error and duration; the record carries the request or task id it was made for
    (a2a_service/core/requestlog.py)."""
    started = time.perf_counter()
    parts = urlparse(url)
    where = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
    try:
        resp = _outbound(
            method,
            url,
            timeout=timeout,
            public_only=public_only,
            deadline=deadline,
            max_body_bytes=max_body_bytes,
            **kwargs,
        )
    except Exception as exc:
        logger.info(
            "outbound %s %s failed after %.0f ms: %s",
            method,
            where,
            (time.perf_counter() - started) * 1000,
            f"{type(exc).__name__}: {exc}"[:300],
        )
        raise
    logger.info(
        "outbound %s %s %s in %.0f ms", method, where, resp.status_code, (time.perf_counter() - started) * 1000
    )
    return resp


def _outbound(
    method: str,
    url: str,
    *,
    timeout: float | None,
    public_only: bool | None,
    deadline: float | None,
    max_body_bytes: int | None,
    **kwargs: Any,
) -> requests.Response:
    if public_only is None:
        public_only = not (settings.OUTBOUND_ALLOW_PRIVATE_TARGETS or _operator_origin(url))
    if public_only and "proxies" in kwargs:
        raise ValueError("a proxy would resolve the host after the check: not with public_only")
    timeout = timeout or settings.OUTBOUND_HTTP_TIMEOUT_SECONDS
    if deadline is None and max_body_bytes is None:
        return _sessions[public_only].request(method, url, timeout=timeout, allow_redirects=False, **kwargs)
    if _current.exchange is not None:
        raise RuntimeError("outbound_request with a deadline does not nest")
    # A session of its own: a pooled keep-alive connection would carry on outside this
    # exchange's watchdog, and each attempt resolves and checks the host afresh.
    session = _new_session(public_only=public_only)
    exchange = _current.exchange = _Exchange(deadline)
    watchdog = threading.Timer(deadline, exchange.expire) if deadline is not None else None
    if watchdog is not None:
        watchdog.daemon = True
        watchdog.start()
    host = urlparse(url).hostname
    try:
        resp = session.request(method, url, timeout=timeout, allow_redirects=False, stream=True, **kwargs)
        try:
            body = bytearray()
            for chunk in resp.iter_content(16384):
                body += chunk
                if max_body_bytes is not None and len(body) >= max_body_bytes:
                    break
            resp._content = bytes(body[:max_body_bytes] if max_body_bytes is not None else body)
            # requests' private flag (Response.content reads it); types-requests does not declare it.
            resp._content_consumed = True  # type: ignore[attr-defined]
        finally:
            resp.close()
        if exchange.expired:
            raise DeadlineExceeded(f"the exchange with {host} outlived its {deadline} s deadline")
        return resp
    except Exception as exc:
        if exchange.expired and not isinstance(exc, DeadlineExceeded | TargetRefused):
            raise DeadlineExceeded(f"the exchange with {host} outlived its {deadline} s deadline") from exc
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()
        _current.exchange = None
        exchange.close()
        session.close()
