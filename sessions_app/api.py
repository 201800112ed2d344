"""Prepaid session endpoints."""

from __future__ import annotations

from typing import Annotated

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import Field
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.api import schemas as s
from catalog.api.errors import NotFound, Unauthorized
from catalog.api.inputs import QueryModel, parse_query, query_parameters
from catalog.api.views import ApiView
from catalog.models import Sku

BUY_HINT = {"buy": "/api/a2a/x402/session/desk-pack", "enterprise": "/api/a2a/x402/session/enterprise-pack"}


class SessionStatusQuery(QueryModel):
    token: Annotated[str, Field(min_length=8, max_length=128, description="session token")]


def session_by_token(token: str) -> None:
    """Sessions are sold through x402; until that route is open no token exists."""
    raise NotFound("unknown session token", extra=BUY_HINT)


class SessionStatusView(ApiView):
    @extend_schema(
        tags=["sessions"],
        summary="Calls used and remaining on a prepaid session",
        operation_id="session_status",
        parameters=query_parameters(SessionStatusQuery),
        responses={200: OpenApiResponse({"type": "object"}), 404: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request, SessionStatusQuery)
        session_by_token(query.token)


class SessionCallView(ApiView):
    @extend_schema(
        tags=["sessions"],
        summary="Call a session SKU: debits one call of the prepaid session",
        operation_id="session_call",
        parameters=[
            OpenApiParameter("X-Session-Token", str, OpenApiParameter.HEADER, required=False),
            OpenApiParameter(
                "token",
                str,
                OpenApiParameter.QUERY,
                required=False,
                description="session token, if not sent as X-Session-Token",
            ),
        ],
        responses={
            200: OpenApiResponse({"type": "object"}, description="the SKU's payload"),
            401: s.ErrorOut,
            402: s.ErrorOut,
            403: s.ErrorOut,
            404: s.ErrorOut,
            422: s.HTTPValidationError,
            503: s.ProductUnavailableOut,
        },
    )
    def get(self, request: Request, sku: str) -> Response:
        if not Sku.objects.live().filter(sku=sku).exists():
            raise NotFound(f"unknown SKU {sku!r}")
        token = request.headers.get("X-Session-Token") or request.query_params.get("token") or ""
        if not token:
            raise Unauthorized(
                "a session token is required (X-Session-Token header or token query)", extra=BUY_HINT
            )
        session_by_token(token)
