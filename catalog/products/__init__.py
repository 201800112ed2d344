"""The product specs of the catalog app, one module per product family (a package of one module
per product family for the largest: execution/, risk/, digests/), with the registry they
register in (registry.py) and the watch on their availability (availability.py). Importing this
package registers them (catalog's AppConfig.ready does); the apps above catalog register
their own products (billing/products.py, sessions_app/products.py, webhooks/products.py)
from their AppConfig.ready."""

from __future__ import annotations

from . import (  # noqa: F401
    agent_services,
    briefs,
    copy_signals,
    digests,
    equity,
    execution,
    federation,
    gas,
    intel,
    news,
    prediction,
    prediction_graph,
    risk,
    signals,
    telemetry,
    tokenized,
    tokenized_desks,
    trading,
)
