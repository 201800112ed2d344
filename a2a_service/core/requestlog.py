"""Requests that can be followed: a request id on every request, in its log records, in the
Celery tasks it queues (a2a_service/core/taskobserve.py) and in its answer; and each request
timed by route, status and the layer that answered it.

The id is the client's `X-Request-ID` when it is a sane one (1-128 characters of letters,
digits and `._:-`), else a new one; the answer carries it in `X-Request-ID`. It lives in a
context variable for the request (or task), and RequestIdFilter copies it onto every log
record the console handler prints.

Two places set it up, one per way in: `observe_request` in front of everything in
a2a_service/wsgi.py (so the fast paths, which answer without Django, are timed and carry the
id too), and RequestObserveMiddleware inside Django, which finds what the WSGI layer set in the
environ (Django's request.META is the same dict) or, when Django is reached without that layer
(the test client, another WSGI server pointed at Django alone), does the same itself. The
middleware also records the URL pattern Django resolved; a fast path's answer is labelled with
the pattern its path resolves to (remembered per path), so routes stay a bounded set of labels."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar, Token
from typing import Any, NamedTuple

from django.core.signals import request_finished

from a2a_service.core.metrics import REQUESTS
from a2a_service.core.randpool import token_hex

REQUEST_ID_HEADER = "X-Request-ID"
REQUEST_ID_MAX_CHARS = 128
_REQUEST_ID = re.compile(rf"[A-Za-z0-9._:-]{{1,{REQUEST_ID_MAX_CHARS}}}")
# Keys in the WSGI environ (request.META): the request's id, the URL pattern that answered (set
# by Django's middleware), the layer in front of Django that answered (metrics.LAYERS).
ENVIRON_REQUEST_ID = "a2a.request_id"
ENVIRON_ROUTE = "a2a.route"
ENVIRON_LAYER = "a2a.layer"
ENVIRON_ID_SENT = "a2a.request_id_sent"  # Django's middleware put the id in its answer
UNRESOLVED = "<unresolved>"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Context(NamedTuple):  # a tuple: made on every request, the cheapest to build
    request_id: str
    task: str = ""
    task_id: str = ""


_context: ContextVar[Context | None] = ContextVar("a2a_request_context", default=None)
# The context RequestObserveMiddleware entered itself (no observe_request in front), left when
# Django sends request_finished: after the middleware returns, Django still logs the response
# (django.request, 4xx and 5xx), which must carry the id.
_left_at_finish: ContextVar[Token[Context | None] | None] = ContextVar(
    "a2a_request_context_owned", default=None
)


def request_id_new() -> str:
    return token_hex(12)


def request_id_accept(value: str | None) -> str:
    """The client's id if it is a sane one, else a new one (never an unbounded label or log field)."""
    if value and _REQUEST_ID.fullmatch(value):
        return value
    return request_id_new()


def current() -> Context | None:
    return _context.get()


def request_id() -> str | None:
    context = _context.get()
    return None if context is None else context.request_id


def context_enter(context: Context) -> Token[Context | None]:
    return _context.set(context)


def context_exit(token: Token[Context | None]) -> None:
    _context.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts the current request id (and task) on each record, unless the record carries its own
    (a money event logged after commit carries the id of the request that made it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _context.get()
        if context is not None:
            if not hasattr(record, "request_id"):
                record.request_id = context.request_id
            if context.task and not hasattr(record, "task"):
                record.task = context.task
                record.task_id = context.task_id
        return True


class PlainFormatter(logging.Formatter):
    """The plain format, with the request id (when there is one) at the end of the line."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        text = super().formatMessage(record)
        rid = getattr(record, "request_id", None)
        return f"{text} [request_id={rid}]" if rid else text


# --- timing -------------------------------------------------------------------------------------
_ROUTES: dict[str, str] = {}
ROUTES_REMEMBERED = 4096


def route_of(path: str) -> str:
    """The URL pattern a path resolves to (for a fast path's answer, which Django never saw)."""
    route = _ROUTES.get(path)
    if route is None:
        from django.urls import resolve

        try:
            route = "/" + str(resolve(path).route)
        except Exception:  # Resolver404, or a path Django could not even decode
            route = UNRESOLVED
        if len(_ROUTES) >= ROUTES_REMEMBERED:
            _ROUTES.clear()
        _ROUTES[path] = route
    return route


def request_observe(*, route: str, method: str, status: str, layer: str, seconds: float) -> None:
    """One observation per request, a dictionary update (metrics.BufferedHistogram)."""
    REQUESTS.observe((route, method if method in METHODS else "other", status, layer), seconds)


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def observe_request(
    app: WSGIApp, environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    """Run `app` for one request with its id in context, the id in its answer, and time it.
    (In front of the fast paths: a few microseconds, one buffered histogram observation.)"""
    started = time.perf_counter()
    sent = environ.get("HTTP_X_REQUEST_ID")
    rid = sent if sent and _REQUEST_ID.fullmatch(sent) else token_hex(12)
    environ[ENVIRON_REQUEST_ID] = rid
    token = _context.set(Context(rid))
    status = "500"

    def start(status_line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        nonlocal status
        status = status_line[:3]
        if ENVIRON_ID_SENT not in environ:  # a layer in front of Django answered
            headers = [*headers, (REQUEST_ID_HEADER, rid)]
        return start_response(status_line, headers, exc_info)

    try:
        return app(environ, start)
    finally:
        _context.reset(token)
        method = environ.get("REQUEST_METHOD", "")
        REQUESTS.observe(
            (
                environ.get(ENVIRON_ROUTE) or route_of(environ.get("PATH_INFO", "")),
                method if method in METHODS else "other",
                status,
                environ.get(ENVIRON_LAYER, "django"),
            ),
            time.perf_counter() - started,
        )


class RequestObserveMiddleware:
    """First in MIDDLEWARE: the request id and timing for requests that reach Django (see the
    module's docstring), and the URL pattern that answered."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        environ = request.META
        rid = environ.get(ENVIRON_REQUEST_ID)
        alone = rid is None  # not behind observe_request: this middleware does its work
        if alone:
            _request_finished()  # a context left behind by a response nobody closed
            rid = environ[ENVIRON_REQUEST_ID] = request_id_accept(environ.get("HTTP_X_REQUEST_ID"))
            _left_at_finish.set(_context.set(Context(request_id=rid)))
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            match = getattr(request, "resolver_match", None)
            environ[ENVIRON_ROUTE] = UNRESOLVED if match is None else "/" + str(match.route)
        response[REQUEST_ID_HEADER] = rid
        environ[ENVIRON_ID_SENT] = True
        if alone:
            request_observe(
                route=environ[ENVIRON_ROUTE],
                method=request.method or "",
                status=str(response.status_code),
                layer="django",
                seconds=time.perf_counter() - started,
            )
        return response


def _request_finished(**_: Any) -> None:
    token = _left_at_finish.get()
    if token is not None:
        _left_at_finish.set(None)
        try:
            _context.reset(token)
        except ValueError:  # entered in another context (another thread): nothing of ours to leave
            pass


request_finished.connect(_request_finished, dispatch_uid="a2a_service.core.requestlog")
