"""Risk gates and alerts, computed from the feeds and the calendar (issues 12 and 13), one module
per family: the decision pack (decision.py; its checks are catalog/analytics/desks.py), the exit
alerts on the desks' open signals (exits.py; catalog/editorial/track_record.py writes them) and
the macro gate with the calendar risk (macro.py; catalog/analytics/macro.py)."""

from __future__ import annotations

# In the catalog's order: the specs register as the modules are imported (a listing keeps that
# order among equal ranks).
# isort: off
from . import decision, exits, macro  # noqa: F401
# isort: on
