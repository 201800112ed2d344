"""Whether each product has something to deliver now, watched so that no stored 402 challenge
outlives a product becoming unavailable.

Every paid surface checks a product's `available` (catalog/products/registry.py) before it
asks for a payment (billing/rails/base.py product_available): the check is exact, and it runs
only where Django answers. The 402 challenges stored in front of Django (billing/x402/fastpath.py)
are answered without it, so when a product's data goes away (a feed or analytics pass replaced
it, a prune deleted it, a brief was withdrawn) they must go too. `availability_refresh` runs
every product's check at those moments (the end of a feed pass, an analytics pass or a prune,
which send `data_pass_finished`, and the commit of a brief's write), keeps the outcome per SKU
in one Redis hash, and sends `product_availability_changed` with the SKUs whose outcome differs
from the last refresh (billing drops its stored challenges on it). Data that goes stale by time alone, with no write,
is bounded by the stored challenges' own lifetime (PRODUCT_AVAILABILITY_RECHECK_SECONDS)."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import redis_client
from catalog.products.registry import product_has_content, specs_all
from catalog.signals import data_pass_finished, product_availability_changed

logger = logging.getLogger(__name__)

AVAILABILITY_HASH = "a2a:avail"
AVAILABLE = "1"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def products_checked() -> list[str]:
    """The built products that declare an availability check."""
    return [spec.sku for spec in specs_all() if spec.built and spec.available is not None]


def availability_now() -> dict[str, str]:
    """Each checked product's outcome now: AVAILABLE, or the reason it is not ("0 <reason>")."""
    out: dict[str, str] = {}
    for sku in products_checked():
        ok, reason = product_has_content(sku)
        out[sku] = AVAILABLE if ok else f"0 {reason}"
    return out


def availability_refresh() -> list[str]:
    """Run every check, store the outcomes, and announce the SKUs whose availability changed
    since the last refresh (every SKU on the first one). Without Redis nothing is stored in
    front of Django, so there is nothing to watch."""
    client = redis_client()
    if client is None:
        return []
    now = availability_now()
    before = {_text(k): _text(v) for k, v in client.hgetall(AVAILABILITY_HASH).items()}
    changed = sorted(sku for sku in now.keys() | before.keys() if now.get(sku) != before.get(sku))
    if not changed:
        return []
    pipe = client.pipeline()
    gone = [sku for sku in before if sku not in now]
    if gone:
        pipe.hdel(AVAILABILITY_HASH, *gone)
    for sku, outcome in now.items():
        pipe.hset(AVAILABILITY_HASH, sku, outcome)
    pipe.execute()
    logger.info("product availability changed: %s", ", ".join(changed))
    product_availability_changed.send(sender=availability_refresh, skus=changed)
    return changed


def availability_watch() -> None:
    """availability_refresh for the end of a pass: a failure is logged, never raised into the
    pass it follows (the stored challenges then expire by their own lifetime)."""
    try:
        availability_refresh()
    except Exception:
        log_throttled(logger, "availability-refresh", "could not refresh product availability")


@receiver(data_pass_finished)
def watch_after_pass(sender: Any, **kwargs: Any) -> None:
    """A feed pass, a prune or the analytics pass may have changed what a product delivers."""
    availability_watch()


@receiver([post_save, post_delete], sender="catalog.EditorialPiece")
def watch_brief_availability(sender: type, **kwargs: Any) -> None:
    """A brief written, withdrawn or deleted may make the brief products (un)available."""
    transaction.on_commit(availability_watch)
