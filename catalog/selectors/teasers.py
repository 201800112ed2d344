"""Free teasers: what a paid product would deliver now (an excerpt of its current content),
and why not when it would not."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from pydantic import BaseModel, ValidationError

from a2a_service.core.formats import iso
from catalog.models import (
    Sku,
    Teaser,
)
from catalog.products.registry import ProductCall, ProductFailed, product_get, product_has_content
from catalog.seed.content import teasers_all
from catalog.selectors import schemas as s
from catalog.selectors.skus import SKU_COMING_SOON, SKU_UNAVAILABLE, sku_status


def teaser_availability(sku: Sku | None) -> tuple[bool, str]:
    """Whether a teaser's paid product would deliver now, and why not: on sale, then the
    product's own cheap content check (a query, never a run of the product)."""
    if sku is None:
        return False, "this teaser has no paid product"
    status = sku_status(sku)
    if status == SKU_COMING_SOON:
        return False, f"{sku.sku} is not built yet (coming soon)"
    if status == Sku.Status.DISABLED:
        return False, f"{sku.sku} is switched off"
    if status == SKU_UNAVAILABLE:
        return False, "the x402 payment route is not available"
    return product_has_content(sku.sku)


logger = logging.getLogger(__name__)

# The generic cut of a product's content: enough to judge it, not enough to replace it.
EXCERPT_ITEMS = 3
EXCERPT_TEXT = 160
EXCERPT_DEPTH = 6
# The full text is what the product sells; the provenance list is noise in a teaser.
EXCERPT_DROP = frozenset({"body", "content", "sources"})


class _RolledBack(Exception):
    """Raised to undo whatever a product's run wrote while a teaser computed its excerpt."""


def teaser_excerpt(value: Any, depth: int = 0) -> Any:
    """The first EXCERPT_ITEMS items of each list, text cut to EXCERPT_TEXT characters,
    nesting cut at EXCERPT_DEPTH, the full-text keys dropped."""
    if isinstance(value, dict):
        if depth >= EXCERPT_DEPTH:
            return None
        return {
            k: v if k == "method" else teaser_excerpt(v, depth + 1)  # the one-line method stays whole
            for k, v in value.items()
            if k not in EXCERPT_DROP
        }
    if isinstance(value, list | tuple):
        if depth >= EXCERPT_DEPTH:
            return []
        return [teaser_excerpt(v, depth + 1) for v in list(value)[:EXCERPT_ITEMS]]
    if isinstance(value, str) and len(value) > EXCERPT_TEXT:
        return value[: EXCERPT_TEXT - 1].rstrip() + "…"
    return value


def _teaser_spec(name: str) -> Any:
    return next((t for t, _ in teasers_all() if t.name == name), None)


def product_excerpt(
    sku: Sku,
    *,
    teaser_name: str,
    base: str,
    params: BaseModel | None = None,
    focus: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """(excerpt, "") from a run of the product with its default parameters, or (None, why
    not) when the run has nothing fresh (ProductFailed). Never charges (no payment is
    involved) and never keeps a write: the run is rolled back. Products with effects or that
    need a caller (packs, entitlements) get no excerpt, nor do those whose parameters have
    no defaults (an item's unlock); an unexpected error is logged and gives no excerpt.
    `params` (validated by the product's model) replace the defaults and `focus` narrows the
    content before the cut: the agents' chat excerpts the answer to one question."""
    spec = product_get(sku.sku)
    if spec is None or spec.effects or spec.ready is not None:
        return None, ""
    try:
        if params is None:
            params = spec.params() if spec.params is not None else None
    except ValidationError:
        return None, ""
    content: dict[str, Any] = {}
    try:
        with transaction.atomic():
            content = spec.run(ProductCall(sku=sku, params=params, base_url=base))
            raise _RolledBack
    except _RolledBack:
        pass
    except ProductFailed as exc:
        return None, str(exc)
    except Exception:
        logger.warning("teaser %s: the excerpt of %s failed", teaser_name, sku.sku, exc_info=True)
        return None, ""
    if focus is not None:
        content = focus(content)
    teaser_spec = _teaser_spec(teaser_name)
    if teaser_spec is not None and teaser_spec.excerpt is not None:
        content = teaser_spec.excerpt(content)
    cut = teaser_excerpt(content)
    return (cut if isinstance(cut, dict) else None), ""


def _teaser_out(teaser: Teaser, base: str = "") -> s.TeaserOut:
    sku = teaser.sku
    available, reason = teaser_availability(sku)
    excerpt = None
    if available and sku is not None:
        excerpt, failed = product_excerpt(sku, teaser_name=teaser.name, base=base)
        if failed:  # the cheap check said yes, the run found nothing fresh: say so
            available, reason = False, failed
    return s.TeaserOut(
        name=teaser.name,
        title=teaser.title,
        summary=teaser.summary,
        highlights=[str(h) for h in teaser.highlights],
        sku=sku.sku if sku else None,
        paid_path=sku.path if sku else None,
        price_usdc=sku.price_usdc if sku else None,
        credit_path=teaser.credit_path or None,
        session_callable=bool(sku and sku.session_callable),
        available=available,
        unavailable_reason=reason or None,
        excerpt=excerpt,
        updated_at=iso(teaser.updated_at) or "",
    )


def teaser(base: str, name: str) -> s.TeaserOut | None:
    """None for an unknown name (the view answers 404)."""
    obj = Teaser.objects.select_related("sku").filter(name=name).first()
    return _teaser_out(obj, base) if obj is not None else None


def grants_readiness(base: str) -> s.TeaserOut | None:
    return teaser(base, "grant-scout")


def indexer_teaser(base: str) -> s.TeaserOut | None:
    return teaser(base, "feeds-indexer")


def partner_feed_teaser(base: str) -> s.TeaserOut | None:
    return teaser(base, "prediction-partner-feed")
