"""Webhook subscriptions."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from catalog.api import schemas as s
from catalog.api.bodies import A2aWebhookRegisterBody
from catalog.api.errors import ProductUnavailable
from catalog.api.inputs import parse_body
from catalog.api.views import ApiView


class WebhookRegisterView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Register a webhook subscription",
        operation_id="account_webhooks_register",
        request=A2aWebhookRegisterBody,
        parameters=[API_KEY_HEADER],
        responses={
            201: OpenApiResponse({"type": "object"}),
            401: s.UnauthorizedOut,
            422: s.HTTPValidationError,
            503: s.ProductUnavailableOut,
        },
    )
    def post(self, request: Request) -> Response:
        api_key_account(request)
        parse_body(request, A2aWebhookRegisterBody)
        raise ProductUnavailable("webhook push is not available yet", extra={"sku": "signal_desk_pack"})
