from __future__ import annotations

import pytest
from django.utils import timezone

from catalog.models import EditorialPiece


@pytest.fixture
def brief():
    """A published morning brief: the paid skill the A2A tests sell."""
    return EditorialPiece.objects.create(
        kind="morning_brief",
        title="Rates day",
        summary="CPI at 08:30",
        body="The full brief: rates, CPI, FX.",
        published_at=timezone.now(),
    )
