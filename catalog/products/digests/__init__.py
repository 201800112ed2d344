"""Digests computed from the data, one module per digest: news by market group with sentiment
and movers (groups.py), the regulators' and central banks' news ranked by impact
(regulatory.py), the week in review (weekly.py) and the open grant programs (grants.py); what
they share is in common.py. Staff may add a note to a digest (the newest published
EditorialPiece of its kind is appended); no digest needs one to exist."""

from __future__ import annotations

# In the catalog's order: the specs register as the modules are imported (a listing keeps that
# order among equal ranks).
# isort: off
from . import groups, regulatory, weekly, grants  # noqa: F401
# isort: on
