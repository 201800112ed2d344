"""The one function through which the service talks HTTP to the outside. Tests patch
it, and every adapter (facilitator, feeds, RPC probes) goes through it."""

from __future__ import annotations

from typing import Any

import requests
from django.conf import settings

_session = requests.Session()


def outbound_request(
    method: str, url: str, *, timeout: float | None = None, **kwargs: Any
) -> requests.Response:
    return _session.request(
        method,
        url,
        timeout=timeout or settings.OUTBOUND_HTTP_TIMEOUT_SECONDS,
        allow_redirects=False,
        **kwargs,
    )
