"""The base of every API view, and the helpers views share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse
from pydantic import BaseModel
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from a2a_service.core import schemas as s
from a2a_service.core.errors import BodyTooLarge, body_size_check

# Who counts hits (metric, key). The catalog app registers its daily counters when it is
# ready; this package imports no app.
HIT_COUNTERS: list[Callable[..., None]] = []


def hit_counter_register(counter: Callable[..., None]) -> None:
    if counter not in HIT_COUNTERS:
        HIT_COUNTERS.append(counter)


ERRORS_COMMON = {
    404: OpenApiResponse(s.ErrorOut, description="unknown resource"),
    422: OpenApiResponse(s.HTTPValidationError, description="broken parameters or body"),
    429: OpenApiResponse(s.RateLimitedOut, description="rate limited; see Retry-After"),
}


def base_url(request: Request) -> str:
    return settings.PUBLIC_BASE_URL or request.build_absolute_uri("/").rstrip("/")


def ok(model: BaseModel, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(model.model_dump(mode="json", by_alias=True), status=status, headers=headers)


class ApiView(APIView):
    """Base of every API view: JSON in, JSON out, errors through the one handler. A body over
    the size limit is refused (413) before authentication, throttling or any read of it."""

    metric = "hit"

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        body_size_check(request)
        super().initial(request, *args, **kwargs)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, BodyTooLarge):
            refusal = self.body_too_large(self.request, exc)
            if refusal is not None:
                return refusal
        return super().handle_exception(exc)

    def body_too_large(self, request: Request, exc: BodyTooLarge) -> Response | None:
        """The 413 in the view's own protocol (JSON-RPC views); None: the REST form."""
        return None

    def count_hit(self, key: str) -> None:
        # Counting must never fail the request it counts.
        for counter in HIT_COUNTERS:
            try:
                counter(metric=self.metric, key=key)
            except Exception:  # noqa: BLE001
                pass
