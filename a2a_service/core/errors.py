"""One place that turns domain errors and framework exceptions into HTTP answers.

Every error body is JSON. Validation errors use the HTTPValidationError shape,
{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}, with status 422."""

from __future__ import annotations

import logging
import math
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, JsonResponse
from pydantic import ValidationError as PydanticValidationError
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

logger = logging.getLogger(__name__)


class SkipExpectedUnavailable(logging.Filter):
    """django.request logs every 5xx as an error; a 503 for a product that is not available
    is an answer we chose, not a fault, so it is not logged as one."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) != 503


class ExpectedClientErrorsAtInfo(logging.Filter):
    """django.request logs every 4xx as a warning. A missing key (401), a payment challenge
    (402), an unknown id (404/405), a conflict (409), broken input (422) or a rate limit (429)
    is the API answering a client as documented, so it is logged at INFO; other 4xx (400,
    403: hosts, CSRF) stay warnings, 5xx stay errors."""

    STATUSES = frozenset({401, 402, 404, 405, 409, 422, 429})

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and getattr(record, "status_code", None) in self.STATUSES:
            # The level was checked at WARNING; drop the record if INFO is not wanted.
            if not logging.getLogger(record.name).isEnabledFor(logging.INFO):
                return False
            record.levelno = logging.INFO
            record.levelname = logging.getLevelName(logging.INFO)
        return True


class ApiError(Exception):
    """A domain error with its HTTP status. Subclasses name the situations."""

    status_code = 400
    code = "error"
    # What a paid call that ended in this error came to, when its kind does not say it
    # (a2a_service/core/metrics.py PAID_OUTCOMES; billing/paid_call.py paid_call_failure).
    paid_call_outcome: str | None = None

    def __init__(
        self, detail: str, *, extra: dict[str, Any] | None = None, headers: dict[str, str] | None = None
    ):
        super().__init__(detail)
        self.detail = detail
        self.extra = extra or {}
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail, "code": self.code, **self.extra}


class NotFound(ApiError):
    status_code = 404
    code = "not_found"


class Unauthorized(ApiError):
    status_code = 401
    code = "unauthorized"


class PaymentRequired(ApiError):
    status_code = 402
    code = "payment_required"


class Forbidden(ApiError):
    status_code = 403
    code = "forbidden"


class Conflict(ApiError):
    status_code = 409
    code = "conflict"


class ProductUnavailable(ApiError):
    """The product behind a paid route is not built (or is switched off). Raised before
    any payment or debit, so nothing is charged."""

    status_code = 503
    code = "product_unavailable"


# How long an agent waits before retrying when the database connection failed (a restart or a
# failover takes seconds).
DATABASE_RETRY_SECONDS = 2


class DatabaseUnavailable(ApiError):
    """The database connection failed (a restart, a failover, a connection the server closed):
    503 with Retry-After, never a 500. The failed statement's transaction was rolled back; the
    next request reconnects (CONN_HEALTH_CHECKS)."""

    status_code = 503
    code = "database_unavailable"

    def __init__(self) -> None:
        super().__init__(
            f"the database connection failed; retry in {DATABASE_RETRY_SECONDS} s with the same request (the "
            "same payment proof, or the same Idempotency-Key): what this call wrote in a transaction that "
            "did not commit was undone, and a payment it had already claimed is answered 202 (pending) with "
            "where to follow it, never charged twice; GET /api/a2a/account shows your balance.",
            extra={"retry_after": DATABASE_RETRY_SECONDS},
            headers={"Retry-After": str(DATABASE_RETRY_SECONDS)},
        )


def database_unavailable(exc: BaseException) -> DatabaseUnavailable | None:
    """The 503 for a lost database connection, or None for any other error. OperationalError and
    InterfaceError are how Django reports a connection that failed or was closed (psycopg's
    AdminShutdown, a refused connection, a closed connection); logged once here, since
    django.request does not log the 503s we choose."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    logger.warning("database unavailable: %s", str(exc).strip()[:300])
    return DatabaseUnavailable()


class RequestValidationError(ApiError):
    status_code = 422
    code = "validation_error"

    def __init__(self, errors: list[dict[str, Any]]):
        super().__init__("validation error")
        self.errors = errors

    def body(self) -> dict[str, Any]:
        return {"detail": self.errors}

    @classmethod
    def single(cls, loc: list[str | int], msg: str, type_: str) -> RequestValidationError:
        return cls([{"loc": loc, "msg": msg, "type": type_}])

    @classmethod
    def from_pydantic(cls, exc: PydanticValidationError, location: str) -> RequestValidationError:
        errors = [
            {"loc": [location, *err["loc"]], "msg": err["msg"], "type": err["type"]}
            for err in exc.errors(include_url=False, include_context=False, include_input=False)
        ]
        return cls(errors)


class BodyTooLarge(ApiError):
    """A request body over the size limit (body_limit()): 413 with the HTTPValidationError
    shape, loc ["body"], type body_too_large. Refused on its Content-Length, before anything
    reads it (a2a_service.core.views.ApiView); views speaking JSON-RPC answer it in that form."""

    status_code = 413
    code = "body_too_large"

    def __init__(self, limit: int):
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit

    def body(self) -> dict[str, Any]:
        return {"detail": [{"loc": ["body"], "msg": self.detail, "type": self.code}]}


def body_limit() -> int:
    """The largest request body accepted: API_MAX_BODY_BYTES, or Django's own cap if lower."""
    django_cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    limit: int = settings.API_MAX_BODY_BYTES
    return limit if django_cap is None else min(limit, django_cap)


def body_size_check(request: HttpRequest) -> None:
    """Refuse a body whose declared length is over the limit, without reading it."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    limit = body_limit()
    if length > limit:
        raise BodyTooLarge(limit)


def _validation_errors_from_drf(detail: Any, loc: list[str | int]) -> list[dict[str, Any]]:
    if isinstance(detail, dict):
        out: list[dict[str, Any]] = []
        for key, value in detail.items():
            out += _validation_errors_from_drf(value, [*loc, key])
        return out
    if isinstance(detail, list):
        out = []
        for item in detail:
            out += _validation_errors_from_drf(item, loc)
        return out
    return [{"loc": loc, "msg": str(detail), "type": getattr(detail, "code", "invalid")}]


def rate_limited_body(wait_seconds: float | None) -> dict[str, Any]:
    """The 429 answer's body (also sent by the credit fast path in front of Django)."""
    wait = math.ceil(wait_seconds or 1)
    return {"detail": f"rate limit exceeded; retry in {wait} s", "code": "rate_limited", "retry_after": wait}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF EXCEPTION_HANDLER."""
    headers: dict[str, str] = {}
    if isinstance(exc, ApiError):
        set_rollback()
        return Response(exc.body(), status=exc.status_code, headers=exc.headers or None)
    if isinstance(exc, RequestDataTooBig):  # Django's own cap, met by a read we did not guard
        return Response(BodyTooLarge(body_limit()).body(), status=413)
    lost = database_unavailable(exc)
    if lost is not None:
        set_rollback()
        return Response(lost.body(), status=lost.status_code, headers=lost.headers)
    if isinstance(exc, PydanticValidationError):
        set_rollback()
        err = RequestValidationError.from_pydantic(exc, "body")
        return Response(err.body(), status=422)
    if isinstance(exc, drf_exceptions.ParseError):
        return Response(
            {
                "detail": [
                    {"loc": ["body"], "msg": f"JSON decode error: {exc.detail}", "type": "json_invalid"}
                ]
            },
            status=422,
        )
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return Response(
            {
                "detail": [
                    {"loc": ["body"], "msg": "request body must be application/json", "type": "content_type"}
                ]
            },
            status=422,
        )
    if isinstance(exc, drf_exceptions.ValidationError):
        return Response({"detail": _validation_errors_from_drf(exc.detail, ["body"])}, status=422)
    if isinstance(exc, drf_exceptions.Throttled):
        # drf-stubs omit Throttled.wait, which Throttled.__init__ sets (seconds or None).
        body = rate_limited_body(exc.wait)  # type: ignore[attr-defined]
        headers["Retry-After"] = str(body["retry_after"])
        return Response(body, status=429, headers=headers)
    if isinstance(exc, Http404 | drf_exceptions.NotFound):
        return Response({"detail": "Not found.", "code": "not_found"}, status=404)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return Response({"detail": str(exc.detail), "code": "method_not_allowed"}, status=405)
    if isinstance(exc, drf_exceptions.NotAcceptable):
        return Response({"detail": str(exc.detail), "code": "not_acceptable"}, status=406)
    if isinstance(exc, PermissionDenied | drf_exceptions.PermissionDenied):
        return Response({"detail": "Forbidden.", "code": "forbidden"}, status=403)
    if isinstance(exc, drf_exceptions.APIException):
        return Response({"detail": str(exc.detail), "code": exc.default_code}, status=exc.status_code)
    return None


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """handler404: unknown paths answer JSON too."""
    return JsonResponse({"detail": "Not found.", "code": "not_found", "path": request.path}, status=404)


def json_server_error(request: HttpRequest) -> JsonResponse:
    """handler500: called while the uncaught exception is handled, so a lost database
    connection anywhere (a view outside DRF, a middleware) still answers 503, not 500."""
    exc = sys.exc_info()[1]
    lost = None if exc is None else database_unavailable(exc)
    if lost is not None:
        return JsonResponse(lost.body(), status=lost.status_code, headers=lost.headers)
    return JsonResponse({"detail": "Internal server error.", "code": "server_error"}, status=500)


def json_bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    if isinstance(exception, RequestDataTooBig):  # a body over Django's cap, outside the API views
        return JsonResponse(BodyTooLarge(body_limit()).body(), status=413)
    return JsonResponse({"detail": "Bad request.", "code": "bad_request"}, status=400)
