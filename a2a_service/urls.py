from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from a2a_service.core.admin_base import admin_login
from a2a_service.core.openapi import OpenApiDocumentView
from agents.api import AgentChatView, AgentHubChatView, AgentHubView, AgentView
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

urlpatterns = [
    # Before the admin site: its login, throttled (the site's own links reverse to this path).
    path("admin/login/", admin_login),
    path("admin/", admin.site.urls),
    path("api/a2a/openapi.json", OpenApiDocumentView.as_view(), name="openapi"),
    path("", include("catalog.api.urls")),
    path("", include("billing.api.urls")),
    path("api/a2a/session/status", SessionStatusView.as_view()),
    path("api/a2a/session/call/<str:sku>", SessionCallView.as_view()),
    path("api/a2a/account/webhooks/register", WebhookRegisterView.as_view()),
    path("api/a2a/account/webhooks", WebhookListView.as_view()),
    path("api/a2a/webhooks/events", WebhookEventsView.as_view()),
    path("api/a2a/account/webhooks/<str:subscription_id>", WebhookDeleteView.as_view()),
    path("api/a2a/account/webhooks/<str:subscription_id>/test", WebhookTestView.as_view()),
    path("api/a2a/agents/<str:slug>", AgentView.as_view()),
    path("api/a2a/agents/<str:slug>/chat", AgentChatView.as_view()),
    path("api/a2a/agenthub", AgentHubView.as_view()),
    path("api/a2a/agenthub/", AgentHubChatView.as_view()),
    path("api/a2a/agenthub/chat", AgentHubChatView.as_view()),
]
