from __future__ import annotations

import logging

from celery import shared_task

from billing.deposits import deposits_scan

logger = logging.getLogger(__name__)


@shared_task(bind=True, ignore_result=True, max_retries=5)
def scan_deposits(self) -> None:
    """Scheduled by beat. An RPC failure retries with exponential backoff; the cursor never
    moves past blocks that were not read."""
    try:
        result = deposits_scan()
    except Exception as exc:  # RPC down, timeout, bad answer
        logger.warning("deposit scan failed: %s", exc)
        raise self.retry(exc=exc, countdown=min(60, 2**self.request.retries)) from exc
    if result.credited or result.reorg_detected:
        logger.info("deposit scan %s..%s: %s credited", result.from_block, result.to_block, result.credited)


@shared_task(ignore_result=True)
def reconcile_payments() -> None:
    """Scheduled by beat; an RPC failure waits for the next beat (the rows stay as they are)."""
    from billing.reconcile import payments_reconcile

    try:
        result = payments_reconcile()
    except Exception as exc:  # RPC down, timeout, bad answer
        logger.warning("payment reconcile failed: %s", exc)
        return
    if result.settled or result.released or result.failed:
        logger.info(
            "payment reconcile: %s settled, %s released, %s failed, %s waiting",
            result.settled,
            result.released,
            result.failed,
            result.waiting,
        )
