"""Settings of operations (imported by base): logging, metrics, repeated failures and admin
logins."""

from __future__ import annotations

from .environment import env
from .webhooks import WEBHOOK_DELIVERY_QUEUE

# One handler, on the root logger: every record is printed once, whatever runs the code
# (granian and Celery add none to these loggers). Django's defaults put a second console
# handler on the "django" logger (active with DEBUG), which doubled every django.request
# line; "handlers": [] replaces it (and the unused mail_admins one).
# LOG_FORMAT: plain (a line of text) or json (one JSON object per line: time, level, logger,
# message, request_id, and a money event's ids; python-json-logger). Every record carries the
# id of the request or task it belongs to (a2a_service/core/requestlog.py). Outbound HTTP calls
# are logged at INFO by a2a_service.core.http (LOG_OUTBOUND_LEVEL=WARNING: failures only).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "a2a_service.core.requestlog.PlainFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
        },
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]}
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "filters": {
        "request_id": {"()": "a2a_service.core.requestlog.RequestIdFilter"},
        "expected_503": {"()": "a2a_service.core.errors.SkipExpectedUnavailable"},
        "expected_4xx": {"()": "a2a_service.core.errors.ExpectedClientErrorsAtInfo"},
    },
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"filters": ["expected_503", "expected_4xx"]},
        # The MCP SDK logs each stateless request's session start and end at INFO (agents/mcp/).
        "mcp": {"level": "WARNING"},
        "a2a_service.core.http": {"level": env("LOG_OUTBOUND_LEVEL", default="INFO")},
    },
}

# --- metrics (a2a_service/core/metrics.py; docs/operations/) -------------------------------------
# GET /internal/metrics answers the Prometheus exposition only to `Authorization: Bearer
# <METRICS_TOKEN>`; unset (the default), or any other request, gets the 404 of an unknown path.
# Several processes per node: set PROMETHEUS_MULTIPROC_DIR (an environment variable read by
# prometheus_client itself) to one directory shared by the node's web and Celery processes.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
# The Celery queues whose depth /internal/metrics reports (a2a_celery_queue_depth).
METRICS_CELERY_QUEUES = env.list("METRICS_CELERY_QUEUES", default=["celery", WEBHOOK_DELIVERY_QUEUE])
# --- operations (logging, admin) ---------------------------------------------------------------
# A failure that repeats on every request (Redis or the cache down) is logged with its traceback
# at most once per this many seconds per kind and process; the next record counts the rest.
LOG_REPEAT_SECONDS = env.float("LOG_REPEAT_SECONDS", default=60.0)
# Admin logins: after this many failed attempts from one IP address, or for one username,
# within the window, further attempts are refused (429 with Retry-After) until it ends.
ADMIN_LOGIN_MAX_FAILURES = env.int("ADMIN_LOGIN_MAX_FAILURES", default=5)
ADMIN_LOGIN_WINDOW_SECONDS = env.int("ADMIN_LOGIN_WINDOW_SECONDS", default=900)
