from __future__ import annotations

import pytest
from django.utils import timezone

from catalog.models import EditorialPiece


@pytest.fixture
def brief(paid_stack):
    """A published morning brief on the live paid stack: the product the x402 tests pay for."""
    return EditorialPiece.objects.create(
        kind="morning_brief",
        title="Rates day",
        summary="CPI at 08:30",
        body="The full brief: rates, CPI, FX.",
        published_at=timezone.now(),
    )
