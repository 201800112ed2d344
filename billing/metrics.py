"""Billing's figures computed when /internal/metrics is scraped (a2a_service/core/metrics.py):
deposits seen on chain and not credited yet, and x402 payments not decided yet."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from billing.models import Deposit, Payment


def billing_metrics() -> Iterable[Metric]:
    now = timezone.now()
    deposits = GaugeMetricFamily("a2a_deposits", "Deposits recorded, by state", labels=["state"])
    counts = dict(Deposit.objects.order_by().values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    for state in Deposit.State.values:
        deposits.add_metric([state], counts.get(state, 0))
    yield deposits
    # A transfer waits for its confirmations (seconds to minutes); one waiting much longer means
    # the watcher is not crediting (RPC down, the scan failing, beat or the worker stopped).
    oldest = Deposit.objects.filter(state=Deposit.State.PENDING).aggregate(t=Min("seen_at"))["t"]
    yield GaugeMetricFamily(
        "a2a_deposits_pending_oldest_age_seconds",
        "Age of the oldest deposit still waiting for its confirmations (0: none waiting)",
        value=(now - oldest).total_seconds() if oldest is not None else 0.0,
    )
    payments = GaugeMetricFamily(
        "a2a_x402_payments_undecided", "x402 payments claimed or pending settlement, by state", labels=["state"]
    )
    undecided = (Payment.State.CLAIMED, Payment.State.PENDING)
    found = dict(
        Payment.objects.filter(state__in=undecided).order_by().values_list("state").annotate(n=Count("id")).values_list("state", "n")
    )
    for state in undecided:
        payments.add_metric([state], found.get(state, 0))
    yield payments
