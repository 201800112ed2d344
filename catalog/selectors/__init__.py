"""The catalog's reads, by concern: skus (what is on sale and how a SKU is shown), payment
(links and payment hints), teasers, market (news, prediction, exchange and tokenized catalogs),
telemetry, desks (scorecards, performance, strategies, regime). Selectors return data (the
pydantic models of schemas.py, or rows), never HTTP answers: an unknown name is None, and the
view answers 404. They read the products' registry (what is on sale, a teaser's excerpt), so
they sit above the products. Billing's
reads are in billing/selectors/, the discovery documents that gather every app's in
agents/discovery/."""

from __future__ import annotations

# Read here by catalog/products/status.py (which moves to billing with its product).
from catalog.selectors.payment import payment_alternatives

__all__ = ["payment_alternatives"]
