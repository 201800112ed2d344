from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings

from a2a_service.core.observe import deposit_scan_observe
from billing.deposits import deposits_scan

logger = logging.getLogger(__name__)

FAILURE_LOG_EVERY_SECONDS = 60.0
_last_failure: dict[str, float | str] = {}


@shared_task(ignore_result=True)
def scan_deposits() -> None:
    """Scheduled by beat every DEPOSIT_POLL_SECONDS. A failed scan is not retried here: the
    next beat is the retry (retries of our own would overlap with it, queue up while the RPC
    is down and flood the log), and the cursor never moves past blocks that were not read.
    A failure is logged when it first happens, when it changes, and at most once a minute."""
    try:
        result = deposits_scan()
    except Exception as exc:  # RPC down, timeout, bad answer
        deposit_scan_observe(ok=False)
        text = f"{type(exc).__name__}: {exc}"
        now = time.monotonic()
        if (
            text != _last_failure.get("text")
            or now - float(_last_failure.get("at", 0.0)) >= FAILURE_LOG_EVERY_SECONDS
        ):
            logger.warning(
                "deposit scan failed (the next runs in %ss): %s", settings.DEPOSIT_POLL_SECONDS, text
            )
            _last_failure.update(text=text, at=now)
        return
    deposit_scan_observe(ok=True)
    if _last_failure:
        logger.info("deposit scan works again")
        _last_failure.clear()
    if result.credited or result.reorg_detected or result.chain_reset:
        logger.info(
            "deposit scan %s..%s: %s credited, %s orphaned",
            result.from_block,
            result.to_block,
            result.credited,
            result.orphaned,
        )


@shared_task(ignore_result=True)
def reconcile_payments() -> None:
    """Scheduled by beat; a failure waits for the next beat (the rows stay as they are)."""
    from a2a_service.core.ratelog import log_throttled
    from billing.reconcile import payments_reconcile

    try:
        result = payments_reconcile()
    except Exception:  # RPC down, timeout, bad answer
        log_throttled(logger, "payment-reconcile", "payment reconcile failed; the next beat retries")
        return
    if result.settled or result.released or result.failed:
        logger.info(
            "payment reconcile: %s settled, %s released, %s failed, %s waiting",
            result.settled,
            result.released,
            result.failed,
            result.waiting,
        )


# --- payment channels (x402 batch-settlement; billing/x402/channel_claims.py) ----------------
# A failure waits for the next beat: the channels' rows are the truth and a claim not sent is
# sent next time (the withdrawal watcher runs well within the withdraw delay).
@shared_task(ignore_result=True)
def channels_claim() -> None:
    from a2a_service.core.ratelog import log_throttled
    from billing.x402.channel_claims import channels_claim as claim

    try:
        claim()
    except Exception:
        log_throttled(logger, "channels-claim", "channel claim failed; the next beat retries")


@shared_task(ignore_result=True)
def channels_settle() -> None:
    from a2a_service.core.ratelog import log_throttled
    from billing.x402.channel_claims import channels_settle as settle

    try:
        settle()
    except Exception:
        log_throttled(logger, "channels-settle", "channel settle failed; the next beat retries")


@shared_task(ignore_result=True)
def channels_refund_idle() -> None:
    from a2a_service.core.ratelog import log_throttled
    from billing.x402.channel_claims import channels_refund_idle as refund

    try:
        refund()
    except Exception:
        log_throttled(logger, "channels-refund", "idle channel refund failed; the next beat retries")


@shared_task(ignore_result=True)
def channels_watch_withdrawals() -> None:
    from a2a_service.core.ratelog import log_throttled
    from billing.x402.channel_claims import channels_watch_withdrawals as watch

    try:
        watch()
    except Exception:
        log_throttled(
            logger, "channels-withdrawals", "channel withdrawal watch failed; the next beat retries"
        )
