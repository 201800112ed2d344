"""The project's route table: each app's own table, in an order where no pattern shadows another.
`manage.py show_routes` prints the result, one line per route (method, path, view, product)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from a2a_service.core.admin_base import admin_login
from a2a_service.core.openapi import OpenApiDocumentView
from agents import urls as agents_urls
from billing.api import free_urls as billing_free_urls
from catalog.api import urls as catalog_urls
from sessions_app.api import SessionCallView, SessionStatusView
from webhooks.api import (
    WebhookDeleteView,
    WebhookEventsView,
    WebhookListView,
    WebhookRegisterView,
    WebhookTestView,
)

handler404 = "a2a_service.core.errors.json_not_found"
handler500 = "a2a_service.core.errors.json_server_error"
handler400 = "a2a_service.core.errors.json_bad_request"

# Free documents the WSGI layer in front may store (a2a_service/core/fastcache.py): each app marks
# its own in its route table (FreeGet.cacheable).
CACHEABLE_ROUTES = (
    catalog_urls.CACHEABLE_ROUTES | billing_free_urls.CACHEABLE_ROUTES | agents_urls.CACHEABLE_ROUTES
)

urlpatterns = [
    # Before the admin site: its login, throttled (the site's own links reverse to this path).
    path("admin/login/", admin_login, name="admin_login"),
    path("admin/", admin.site.urls),
    path("api/a2a/openapi.json", OpenApiDocumentView.as_view(), name="openapi_document"),
    # Free reads: the catalog's, billing's, the discovery documents'.
    path("", include("catalog.api.urls")),
    path("", include("billing.api.free_urls")),
    path("", include("agents.urls")),
    # Paid routes (x402 and X-API-Key) and the accounts.
    path("", include("billing.api.urls")),
    path("api/a2a/session/status", SessionStatusView.as_view(), name="session_status"),
    path("api/a2a/session/call/<str:sku>", SessionCallView.as_view(), name="session_call"),
    path(
        "api/a2a/account/webhooks/register",
        WebhookRegisterView.as_view(),
        name="account_webhooks_register",
    ),
    path("api/a2a/account/webhooks", WebhookListView.as_view(), name="account_webhooks_list"),
    path("api/a2a/webhooks/events", WebhookEventsView.as_view(), name="webhook_events_catalog"),
    path(
        "api/a2a/account/webhooks/<str:subscription_id>",
        WebhookDeleteView.as_view(),
        name="account_webhooks_delete",
    ),
    path(
        "api/a2a/account/webhooks/<str:subscription_id>/test",
        WebhookTestView.as_view(),
        name="account_webhooks_test",
    ),
    # Execution delegation and the coordination pool (webhooks/urls.py).
    path("", include("webhooks.urls")),
    *agents_urls.agent_urlpatterns,
]
