"""Reads of billing records: every sales and revenue figure the service publishes is
computed here from Payment rows (and, as routes are added, their own records)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import Count, Q, Sum
from django.utils import timezone

from a2a_service.core.money import usdc_from_atomic
from billing.models import Payment


@dataclass(frozen=True)
class SkuSales:
    sales_30d: int = 0
    revenue_30d_atomic: int = 0
    sales_all_time: int = 0
    revenue_all_time_atomic: int = 0
    attempts_30d: int = 0

    @property
    def trust_score(self) -> float:
        """Percent of paid attempts in 30 days that ended delivered; 0 when none."""
        if not self.attempts_30d:
            return 0.0
        return round(100.0 * self.sales_30d / self.attempts_30d, 1)


def sales_by_sku() -> dict[int, SkuSales]:
    since = timezone.now() - timedelta(days=30)
    settled = Q(state=Payment.State.SETTLED)
    recent = Q(created_at__gte=since)
    rows = Payment.objects.values("sku_id").annotate(
        sales_30d=Count("id", filter=settled & recent),
        revenue_30d=Sum("amount_atomic", filter=settled & recent),
        sales_all=Count("id", filter=settled),
        revenue_all=Sum("amount_atomic", filter=settled),
        attempts_30d=Count("id", filter=recent & ~Q(state=Payment.State.CLAIMED)),
    )
    return {
        r["sku_id"]: SkuSales(
            sales_30d=r["sales_30d"],
            revenue_30d_atomic=r["revenue_30d"] or 0,
            sales_all_time=r["sales_all"],
            revenue_all_time_atomic=r["revenue_all"] or 0,
            attempts_30d=r["attempts_30d"],
        )
        for r in rows
    }


def sales_window(*, days: int | None) -> dict[str, Any]:
    qs = Payment.objects.filter(state=Payment.State.SETTLED)
    if days is not None:
        qs = qs.filter(settled_at__gte=timezone.now() - timedelta(days=days))
    agg = qs.aggregate(n=Count("id"), revenue=Sum("amount_atomic"), wallets=Count("payer", distinct=True))
    top = list(
        qs.values("sku__sku").annotate(sales=Count("id"), revenue=Sum("amount_atomic")).order_by("-sales")[:5]
    )
    return {
        "window_days": days or 0,
        "sales": agg["n"],
        "revenue_usdc": usdc_from_atomic(agg["revenue"] or 0),
        "paying_wallets": agg["wallets"],
        "top_skus": [
            {"sku": t["sku__sku"], "sales": t["sales"], "revenue_usdc": usdc_from_atomic(t["revenue"] or 0)}
            for t in top
        ],
    }


def revenue_atomic_since(*, hours: int) -> int:
    since = timezone.now() - timedelta(hours=hours)
    agg = Payment.objects.filter(state=Payment.State.SETTLED, settled_at__gte=since).aggregate(
        s=Sum("amount_atomic")
    )
    return agg["s"] or 0


def payment_counts(*, days: int) -> dict[str, int]:
    since = timezone.now() - timedelta(days=days)
    qs = Payment.objects.filter(created_at__gte=since)
    return {
        "attempts": qs.count(),
        "sales": qs.filter(state=Payment.State.SETTLED).count(),
        "skus_activated": qs.filter(state=Payment.State.SETTLED).values("sku_id").distinct().count(),
    }
