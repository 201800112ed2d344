"""The session rail's sales, for every published sales figure (billing/selectors/sales.py):
one SessionCall per call a prepaid session paid. Its revenue was taken when the pack was bought
(the pack SKU's own sale), so the call adds none."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet

from billing.selectors.sales import AMOUNT, PAYER, SOLD_AT, SalesSource, no_revenue, sales_source_register
from sessions_app.models import SessionCall


def session_calls_sold() -> QuerySet[Any]:
    return SessionCall.objects.annotate(
        **{SOLD_AT: F("created_at"), AMOUNT: no_revenue(), PAYER: F("session__buyer")}
    )


def session_sales_register() -> None:
    sales_source_register(SalesSource(rail="session", sold=session_calls_sold))
