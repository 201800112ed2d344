"""The product specs of the catalog app, one module per product family. Importing this
package registers them (catalog's AppConfig.ready does); the apps above catalog register
their own products (billing/products.py, sessions_app/products.py, webhooks/products.py)
from their AppConfig.ready."""

from __future__ import annotations

from . import agent_services, briefs, intel, news, prediction, risk, telemetry, tokenized, trading  # noqa: F401
