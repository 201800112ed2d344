"""Webhook subscriptions of a credit account (X-API-Key)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import BaseModel, Field
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core import schemas as s
from a2a_service.core.errors import NotFound, RequestValidationError
from a2a_service.core.formats import iso
from a2a_service.core.inputs import parse_body
from a2a_service.core.views import ApiView, ok
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from catalog.api.bodies import A2aWebhookRegisterBody
from webhooks.models import WebhookSubscription
from webhooks.services import (
    SubscriptionTestLimited,
    TargetRefused,
    subscription_create,
    subscription_delete,
    subscription_test_send,
)


class SubscriptionOut(BaseModel):
    id: int
    url: str
    events: list[str]
    description: str
    is_active: bool
    disabled_reason: str
    created_at: str


class SubscriptionCreatedOut(SubscriptionOut):
    secret: str = Field(
        description="whsec_… signing secret, shown once: verify deliveries with it (Standard Webhooks)"
    )


class SubscriptionsOut(BaseModel):
    subscriptions: list[SubscriptionOut]


class TestEventOut(BaseModel):
    event_id: str
    webhook_id: str
    deliveries: int


def _out(sub: WebhookSubscription) -> dict:
    return {
        "id": sub.id,
        "url": sub.url,
        "events": list(sub.events),
        "description": sub.description,
        "is_active": sub.is_active,
        "disabled_reason": sub.disabled_reason,
        "created_at": iso(sub.created_at) or "",
    }


AUTH = {401: s.UnauthorizedOut}


class WebhookRegisterView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Register a webhook subscription",
        description="Deliveries are signed with Standard Webhooks headers (webhook-id, webhook-timestamp, "
        "webhook-signature) using the returned secret, retried on the Standard Webhooks schedule, and "
        "disabled when the receiver answers 410. Targets must be https and resolve to public addresses, "
        "checked when registering and again at every delivery (the connection goes to the checked address). "
        "Each attempt must be answered within WEBHOOK_ATTEMPT_DEADLINE_SECONDS in total. An account has at most "
        "WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT active subscriptions (409 subscription_limit beyond); deliveries "
        "take turns between accounts.",
        operation_id="account_webhooks_register",
        request=A2aWebhookRegisterBody,
        parameters=[API_KEY_HEADER],
        responses={201: SubscriptionCreatedOut, **AUTH, 409: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, A2aWebhookRegisterBody)
        try:
            sub = subscription_create(
                account=account, url=body.url, events=list(body.events), description=body.description or ""
            )
        except TargetRefused as exc:
            raise RequestValidationError.single(["body", "url"], str(exc), "webhook_target") from None
        return ok(SubscriptionCreatedOut(**_out(sub), secret=sub.secret), status=201)


class WebhookListView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Your webhook subscriptions",
        operation_id="account_webhooks_list",
        parameters=[API_KEY_HEADER],
        responses={200: SubscriptionsOut, **AUTH},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        subs = WebhookSubscription.objects.filter(account=account)
        return ok(SubscriptionsOut(subscriptions=[SubscriptionOut(**_out(x)) for x in subs]))


def _own(request: Request, subscription_id: str) -> WebhookSubscription:
    account = api_key_account(request)
    sub = WebhookSubscription.objects.filter(
        # isascii: '²'.isdigit() is True, int('²') fails.
        pk=int(subscription_id)
        if subscription_id.isascii() and subscription_id.isdigit() and len(subscription_id) <= 18
        else -1,
        account=account,
    ).first()
    if sub is None:
        raise NotFound("no such webhook subscription of yours")
    return sub


class WebhookDeleteView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Delete one of your webhook subscriptions",
        description="Events already paid for and not yet delivered are refunded to your credits first.",
        operation_id="account_webhooks_delete",
        parameters=[API_KEY_HEADER],
        responses={204: OpenApiResponse(description="deleted"), **AUTH, 404: s.ErrorOut},
    )
    def delete(self, request: Request, subscription_id: str) -> Response:
        sub = _own(request, subscription_id)
        if not subscription_delete(account_id=sub.account_id, subscription_id=sub.id):
            raise NotFound("no such webhook subscription of yours")  # deleted meanwhile
        return Response(status=204)


class WebhookTestView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Send a test event to one of your webhook subscriptions",
        description="Free, and limited per subscription (WEBHOOK_TEST_EVENTS_PER_WINDOW) and per account "
        "(WEBHOOK_TEST_EVENTS_PER_ACCOUNT) per WEBHOOK_TEST_EVENTS_WINDOW_SECONDS; 429 with Retry-After beyond.",
        operation_id="account_webhooks_test",
        parameters=[API_KEY_HEADER],
        request=None,  # no body: without this the schema generator warns it cannot guess one
        responses={202: TestEventOut, **AUTH, 404: s.ErrorOut, 429: s.RateLimitedOut},
    )
    def post(self, request: Request, subscription_id: str) -> Response:
        sub = _own(request, subscription_id)
        try:
            event, n = subscription_test_send(subscription_id=sub.id)
        except SubscriptionTestLimited as exc:
            raise Throttled(wait=exc.wait_seconds) from None
        except WebhookSubscription.DoesNotExist:
            raise NotFound("no such webhook subscription of yours") from None
        return ok(TestEventOut(event_id=str(event.id), webhook_id=event.message_id, deliveries=n), status=202)


class EventKindOut(BaseModel):
    kind: str
    price_usdc: float | None = Field(description="per delivered event without a signal desk pack")
    payload_schema: dict = Field(description="JSON Schema of the event's `data`")


class EventsCatalogOut(BaseModel):
    envelope: dict = Field(description="every delivery body: {type, id, created_at, data}")
    attestation_signer: str
    signature_scheme: str
    kinds: list[EventKindOut]


class WebhookEventsView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Pushed event kinds: payload schemas, prices, signature scheme",
        operation_id="webhook_events_catalog",
        responses={200: EventsCatalogOut},
    )
    def get(self, request: Request) -> Response:
        from webhooks.events import EVENT_SCHEMAS, attestation_signer
        from webhooks.models import EventPrice

        prices = dict(EventPrice.objects.values_list("kind", "price_atomic"))
        return ok(
            EventsCatalogOut(
                envelope={
                    "type": "event kind",
                    "id": "webhook-id (msg_…)",
                    "created_at": "ISO 8601",
                    "data": "payload",
                },
                attestation_signer=attestation_signer(),
                signature_scheme="Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature (v1, HMAC-SHA256 "
                "with your whsec_ secret); regime_attestation data is also signed EIP-191 by attestation_signer",
                kinds=[
                    EventKindOut(
                        kind=kind,
                        price_usdc=(prices[kind] / 10**6) if kind in prices else None,
                        payload_schema=model.model_json_schema(),
                    )
                    for kind, model in EVENT_SCHEMAS.items()
                ],
            )
        )
