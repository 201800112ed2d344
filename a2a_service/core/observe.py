"""The instrumentation points: each event the operators follow is told here once, and each
function both counts it (a2a_service/core/metrics.py) and, for money, logs it.

Money events (claim, settle, release and fail of an x402 payment; a credit debit; a refund; a
deposit credited; staff adjustments and reorg reversals) are logged once each, by logger
`a2a.money`, with their ids (payment id and nonce, ledger entry id, account id, amount in atomic
USDC) and the request id of the request (or task) that made them. A money event inside a
transaction is told when the transaction commits, never for a write that rolled back."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from a2a_service.core import metrics
from a2a_service.core.requestlog import request_id

money_logger = logging.getLogger("a2a.money")
# Labelled children, kept: prometheus_client's labels() takes a lock and validates the values
# on every call (a few microseconds of each credit call's).
_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def _child(metric: Any, *labels: str) -> Any:
    key = (id(metric), labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def money_event(event: str, *, amount_atomic: int, after_commit: bool = True, **ids: Any) -> None:
    """One money event. `ids` name what it moved (payment_id, nonce, ledger_entry_id, account_id,
    deposit_id, ...). after_commit=False: the write has committed already (a statement of its own)."""
    if event not in metrics.MONEY_EVENTS:
        raise ValueError(f"unknown money event {event!r}")
    rid = request_id()  # now: the callback may run after the request's context has ended

    def tell() -> None:
        _child(metrics.MONEY_EVENT_COUNT, event).inc()
        _child(metrics.MONEY_EVENT_ATOMIC, event).inc(abs(amount_atomic))
        fields: dict[str, Any] = {"money_event": event, "amount_atomic": amount_atomic, **ids}
        if rid is not None:
            fields["request_id"] = rid
        words = " ".join(f"{name}={value}" for name, value in fields.items() if name not in ("money_event", "request_id"))
        money_logger.info("money %s %s", event, words, extra=fields)

    if after_commit:
        transaction.on_commit(tell, robust=True)
    else:
        tell()


def paid_call_observe(*, rail: str, outcome: str) -> None:
    """What became of one paid call (metrics.PAID_OUTCOMES)."""
    _child(metrics.PAID_CALLS, rail, outcome).inc()


def settlement_observe(*, outcome: str, seconds: float) -> None:
    """One x402 settlement asked of the facilitator: settled, pending, failed or unreachable."""
    metrics.X402_SETTLEMENT_SECONDS.labels(outcome).observe(seconds)


def webhook_attempt_observe(*, result: str, seconds: float | None, delivered_after: float | None = None) -> None:
    """One webhook attempt settled: delivered, retry, dead (dead-lettered and refunded) or
    superseded (its claim had passed to another worker). `seconds`: its HTTP exchange (None
    when nothing was sent); `delivered_after`: seconds from the event to this delivery."""
    metrics.WEBHOOK_ATTEMPTS.labels(result).inc()
    if seconds is not None:
        metrics.WEBHOOK_ATTEMPT_SECONDS.observe(seconds)
    if result == "dead":
        metrics.WEBHOOK_DEAD_LETTERS.inc()
    if delivered_after is not None:
        metrics.WEBHOOK_DELIVERY_DELAY.observe(max(delivered_after, 0.0))


def feed_pass_observe(*, source: str, ok: bool, rows: int) -> None:
    metrics.FEED_PASSES.labels(source, "ok" if ok else "failed").inc()
    if ok and rows:
        metrics.FEED_ROWS.labels(source).inc(rows)


def deposit_scan_observe(*, ok: bool) -> None:
    metrics.DEPOSIT_SCANS.labels("ok" if ok else "failed").inc()


def task_failure_observe(*, task: str) -> None:
    metrics.CELERY_TASK_FAILURES.labels(task).inc()
