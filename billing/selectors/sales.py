"""Reads of billing records: every sales and revenue figure the service publishes is computed
here, over every rail's own records of what it sold (a union, one source per rail):

- x402: a settled Payment (failed and pending ones are attempts that did not sell);
- x402_channel: a call paid by a payment-channel voucher (ChannelSale: written in the
  transaction that commits the voucher, so only committed vouchers count);
- credits: a SKU call's ledger debit (LedgerEntry kind sku_call);
- session: a call paid by a prepaid session (sessions_app SessionCall, registered by that app);
- mcp_managed_pack: a tool call paid by a managed MCP pack (agents McpAllowanceCall, registered
  by agents).

One sale per paid call whatever paid it. Revenue counts money once, when it is taken: an x402
payment, a credit debit (a deposit is a prepayment, not a sale). A pack (a session pack, the
managed MCP pack) is a sale of its own SKU at its price, by the rail that paid for it; the calls
it then covers are sales of their SKUs with no further revenue. Higher layers add their rail
with sales_source_register (billing does not import them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import BigIntegerField, Count, F, Q, QuerySet, Sum, Value
from django.utils import timezone

from a2a_service.core.money import usdc_from_atomic
from billing.models import ChannelSale, LedgerEntry, Payment

# The columns every source's rows carry (annotations, so no model field is shadowed).
SOLD_AT, AMOUNT, PAYER = "sale_at", "sale_atomic", "sale_payer"


@dataclass(frozen=True)
class SalesSource:
    """A rail's records of its sales: `sold()` one row per sale, with sku_id and the SOLD_AT,
    AMOUNT (atomic USDC, >= 0) and PAYER annotations; `unsold()` (optional) the attempts that
    did not sell, annotated the same way (SOLD_AT: when attempted)."""

    rail: str
    sold: Callable[[], QuerySet[Any]]
    unsold: Callable[[], QuerySet[Any]] | None = None


_SOURCES: dict[str, SalesSource] = {}


def sales_source_register(source: SalesSource) -> None:
    """Add a rail's sales (once per rail; registering it again replaces it)."""
    _SOURCES[source.rail] = source


def sales_sources() -> list[SalesSource]:
    return list(_SOURCES.values())


def no_revenue() -> Value:
    """AMOUNT of a call a pack already paid for."""
    return Value(0, output_field=BigIntegerField())


def _x402_sold() -> QuerySet[Any]:
    return Payment.objects.filter(state=Payment.State.SETTLED).annotate(
        **{SOLD_AT: F("settled_at"), AMOUNT: F("amount_atomic"), PAYER: F("payer")}
    )


def _x402_unsold() -> QuerySet[Any]:
    # A claim still in flight is neither a sale nor a failed attempt yet.
    return Payment.objects.filter(state__in=(Payment.State.FAILED, Payment.State.PENDING)).annotate(
        **{SOLD_AT: F("created_at"), AMOUNT: no_revenue(), PAYER: F("payer")}
    )


def _credits_sold() -> QuerySet[Any]:
    return LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL, sku__isnull=False).annotate(
        **{SOLD_AT: F("created_at"), AMOUNT: -F("amount_atomic"), PAYER: F("account__wallet_address")}
    )


def _channel_sold() -> QuerySet[Any]:
    return ChannelSale.objects.annotate(
        **{SOLD_AT: F("created_at"), AMOUNT: F("amount_atomic"), PAYER: F("payer")}
    )


sales_source_register(SalesSource(rail="x402", sold=_x402_sold, unsold=_x402_unsold))
sales_source_register(SalesSource(rail="x402_channel", sold=_channel_sold))
sales_source_register(SalesSource(rail="credits", sold=_credits_sold))


def _since(days: float | None) -> datetime | None:
    return None if days is None else timezone.now() - timedelta(days=days)


def _in(qs: QuerySet[Any], since: datetime | None) -> QuerySet[Any]:
    return qs if since is None else qs.filter(**{f"{SOLD_AT}__gte": since})


# --- per SKU ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SkuSales:
    sales_30d: int = 0
    revenue_30d_atomic: int = 0
    sales_all_time: int = 0
    revenue_all_time_atomic: int = 0
    attempts_30d: int = 0
    # The 30-day sales by the rail that paid for them (only rails that sold).
    sales_30d_by_rail: dict[str, int] = field(default_factory=dict)

    @property
    def trust_score(self) -> float:
        """Percent of paid attempts in 30 days that ended delivered; 0 when none."""
        if not self.attempts_30d:
            return 0.0
        return round(100.0 * self.sales_30d / self.attempts_30d, 1)


def sales_by_sku() -> dict[int, SkuSales]:
    since = _since(30)
    recent = Q(**{f"{SOLD_AT}__gte": since})
    totals: dict[int, dict[str, Any]] = {}
    for source in sales_sources():
        rows = source.sold().values("sku_id").annotate(
            n30=Count("pk", filter=recent), r30=Sum(AMOUNT, filter=recent), n=Count("pk"), r=Sum(AMOUNT)
        )
        for r in rows:
            t = totals.setdefault(r["sku_id"], {"n30": 0, "r30": 0, "n": 0, "r": 0, "failed30": 0, "rails": {}})
            t["n30"] += r["n30"]
            t["r30"] += r["r30"] or 0
            t["n"] += r["n"]
            t["r"] += r["r"] or 0
            if r["n30"]:
                t["rails"][source.rail] = r["n30"]
        if source.unsold is not None:
            for r in _in(source.unsold(), since).values("sku_id").annotate(n=Count("pk")):
                t = totals.setdefault(r["sku_id"], {"n30": 0, "r30": 0, "n": 0, "r": 0, "failed30": 0, "rails": {}})
                t["failed30"] += r["n"]
    return {
        sku_id: SkuSales(
            sales_30d=t["n30"],
            revenue_30d_atomic=t["r30"],
            sales_all_time=t["n"],
            revenue_all_time_atomic=t["r"],
            # A sale by credits, a session or a pack is its own attempt (a failed one leaves no
            # record: it is rolled back); x402 also keeps the attempts that did not settle.
            attempts_30d=t["n30"] + t["failed30"],
            sales_30d_by_rail=t["rails"],
        )
        for sku_id, t in totals.items()
    }


# --- windows ---------------------------------------------------------------------------------
def sales_window(*, days: int | None) -> dict[str, Any]:
    """Sales, revenue, paying wallets and the top SKUs over the last `days` (None: all time),
    with the same figures by rail."""
    since = _since(days)
    sales = revenue = 0
    wallets: set[str] = set()
    by_sku: Counter[str] = Counter()
    revenue_by_sku: Counter[str] = Counter()
    by_rail: dict[str, dict[str, Any]] = {}
    for source in sales_sources():
        qs = _in(source.sold(), since)
        agg = qs.aggregate(n=Count("pk"), revenue=Sum(AMOUNT))
        n, rev = agg["n"], agg["revenue"] or 0
        sales, revenue = sales + n, revenue + rev
        if n:
            by_rail[source.rail] = {"sales": n, "revenue_usdc": usdc_from_atomic(rev)}
        wallets.update(w.lower() for w in qs.values_list(PAYER, flat=True).distinct() if w)
        for r in qs.values("sku__sku").annotate(n=Count("pk"), revenue=Sum(AMOUNT)):
            by_sku[r["sku__sku"]] += r["n"]
            revenue_by_sku[r["sku__sku"]] += r["revenue"] or 0
    top = sorted(by_sku, key=lambda sku: (-by_sku[sku], -revenue_by_sku[sku], sku))[:5]
    return {
        "window_days": days or 0,
        "sales": sales,
        "revenue_usdc": usdc_from_atomic(revenue),
        "paying_wallets": len(wallets),
        "top_skus": [
            {"sku": sku, "sales": by_sku[sku], "revenue_usdc": usdc_from_atomic(revenue_by_sku[sku])}
            for sku in top
        ],
        "by_rail": by_rail,
    }


def revenue_atomic_since(*, hours: int) -> int:
    since = timezone.now() - timedelta(hours=hours)
    return sum(_in(s.sold(), since).aggregate(r=Sum(AMOUNT))["r"] or 0 for s in sales_sources())


def payment_counts(*, days: int) -> dict[str, int]:
    """The funnel's paid attempts, sales and SKUs that sold, over every rail."""
    since = _since(days)
    sales = unsold = 0
    skus: set[int] = set()
    for source in sales_sources():
        qs = _in(source.sold(), since)
        sales += qs.count()
        skus.update(qs.values_list("sku_id", flat=True).distinct())
        if source.unsold is not None:
            unsold += _in(source.unsold(), since).count()
    return {"attempts": sales + unsold, "sales": sales, "skus_activated": len(skus)}
