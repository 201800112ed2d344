"""The webhooks app's account features beyond subscriptions: execution delegation and the
coordination pool (X-API-Key, free to call). `status` before `<delegation_id>`: no shadowing."""

from __future__ import annotations

from django.urls import path

from webhooks.delegation.api import (
    DelegationActivateView,
    DelegationDetailView,
    DelegationFillView,
    DelegationRevokeView,
    DelegationStatusView,
)
from webhooks.pool.api import PoolJoinView, PoolLeaveView, PoolStatusView

urlpatterns = [
    path("api/a2a/account/delegation/activate", DelegationActivateView.as_view(), name="delegation_activate"),
    path(
        "api/a2a/account/delegation/report-fill", DelegationFillView.as_view(), name="delegation_report_fill"
    ),
    path("api/a2a/account/delegation/status", DelegationStatusView.as_view(), name="delegation_status"),
    path(
        "api/a2a/account/delegation/<str:delegation_id>",
        DelegationDetailView.as_view(),
        name="delegation_get",
    ),
    path(
        "api/a2a/account/delegation/<str:delegation_id>/revoke",
        DelegationRevokeView.as_view(),
        name="delegation_revoke",
    ),
    path("api/a2a/pool/join", PoolJoinView.as_view(), name="pool_join"),
    path("api/a2a/pool/leave", PoolLeaveView.as_view(), name="pool_leave"),
    path("api/a2a/pool/status", PoolStatusView.as_view(), name="pool_status"),
]
