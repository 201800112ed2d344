"""GET /internal/metrics: the Prometheus exposition, answered in front of Django (wsgi.py) and
only to `Authorization: Bearer <METRICS_TOKEN>`. Without the setting, or without that exact
header, the request goes on to Django, which answers the 404 of any unknown path: the endpoint is
never public by default, and a stranger cannot tell it exists. It is no route of the API (not in
the OpenAPI document). `manage.py serve_metrics` serves the same exposition on an internal port
(a node that runs Celery workers and no web process)."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.signals import request_finished, request_started
from prometheus_client import CONTENT_TYPE_LATEST

from a2a_service.core.metrics import metrics_text
from a2a_service.core.requestlog import ENVIRON_LAYER, ENVIRON_ROUTE

METRICS_PATH = "/internal/metrics"


def metrics_authorized(authorization: str | None) -> bool:
    token = settings.METRICS_TOKEN
    if not token or not authorization:
        return False
    return hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode())


def metrics_scrape() -> bytes:
    """The exposition, with the database connections handled as Django handles a request's (the
    collectors read the database: a connection past its age or broken by a restart is replaced)."""
    request_started.send(sender=__name__)
    try:
        return metrics_text()
    finally:
        request_finished.send(sender=__name__)


def metrics_answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes] | None:
    """The exposition, or None (Django answers) when the request is not the token's GET."""
    if environ.get("REQUEST_METHOD") != "GET" or not metrics_authorized(environ.get("HTTP_AUTHORIZATION")):
        return None
    body = metrics_scrape()
    environ[ENVIRON_LAYER] = "internal"
    environ[ENVIRON_ROUTE] = METRICS_PATH
    start_response(
        "200 OK",
        [("Content-Type", CONTENT_TYPE_LATEST), ("Cache-Control", "no-store"), ("Content-Length", str(len(body)))],
    )
    return [body]
