"""Prepaid session endpoints. The call route is an HTTP adapter over the one paid-call
service (billing/paid_call.py) with the session rail (sessions_app/rail.py)."""

from __future__ import annotations

from typing import Annotated

from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import RequestValidationError
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel, parse_query, query_parameters, query_values
from a2a_service.core.views import ApiView, base_url, ok
from billing.paid_call import SessionReceipt, paid_call, paid_offer
from catalog.models import Sku
from catalog.selectors import schemas as s
from sessions_app.rail import session_by_token, session_payment


class SessionStatusQuery(QueryModel):
    token: Annotated[str, Field(min_length=8, max_length=128, description="session token")]


class SessionStatusOut(BaseModel):
    pack: str
    calls_total: int
    calls_used: int
    calls_remaining: int
    expires_at: str
    expired: bool
    usage_by_sku: dict[str, int]
    skus: list[str]


class SessionStatusView(ApiView):
    @extend_schema(
        tags=["sessions"],
        summary="Calls used and remaining on a prepaid session",
        operation_id="session_status",
        description="The interface takes the session token as the query parameter `token` here. A URL "
        "is written to access logs (this service's, a proxy's, the agent's HTTP library's), so anyone "
        "who can read those logs learns the token, and with it can spend the session's calls on "
        "/api/a2a/session/call/{sku}. That route therefore accepts the token only in the "
        "X-Session-Token header; call this one sparingly and keep such logs private.",
        parameters=query_parameters(SessionStatusQuery),
        responses={200: SessionStatusOut, 404: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def get(self, request: Request) -> Response:
        session = session_by_token(parse_query(request, SessionStatusQuery).token)
        usage = dict(
            session.calls.values_list("sku__sku").annotate(n=Count("id")).values_list("sku__sku", "n")
        )
        skus = sorted(session.pack.covered_skus.filter(status=Sku.Status.LIVE).values_list("sku", flat=True))
        return ok(
            SessionStatusOut(
                pack=session.pack.sku.sku,
                calls_total=session.calls_total,
                calls_used=session.calls_used,
                calls_remaining=session.calls_remaining,
                expires_at=iso(session.expires_at) or "",
                expired=session.expired,
                usage_by_sku=usage,
                skus=skus,
            )
        )


class SessionCallView(ApiView):
    # No HEAD: Django would run get() for it and use up a call of the session for a
    # response whose body is dropped. 405 with Allow: GET, OPTIONS.
    http_method_names = ["get", "options"]

    @extend_schema(
        tags=["sessions"],
        summary="Call a session SKU: debits one call of the prepaid session",
        operation_id="session_call",
        description="The session token goes in the X-Session-Token header, never in the URL (URLs "
        "reach access logs): a `token` query parameter is refused with 422 token_in_query before "
        "anything else, and no call is used. HEAD is not answered (405).",
        parameters=[
            OpenApiParameter(
                "X-Session-Token",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="the session token (required: without it the answer is 401)",
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
        if "token" in request.query_params:
            # Refused, not ignored: the agent learns to move the token to the header at once.
            raise RequestValidationError.single(
                ["query", "token"],
                "send the session token in the X-Session-Token header, not in the URL "
                "(URLs are written to access logs); no call was used",
                "token_in_query",
            )
        rail = session_payment(token=request.headers.get("X-Session-Token", ""), sku=sku)
        offer = paid_offer(
            product=rail.sku.sku, params=query_values(request), base_url=base_url(request), sku=rail.sku
        )
        paid = paid_call(product=offer, payment=rail)
        assert isinstance(paid.receipt, SessionReceipt)
        return Response(
            paid.content, headers={"X-Session-Calls-Remaining": str(paid.receipt.calls_remaining)}
        )
