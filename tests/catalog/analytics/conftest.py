from __future__ import annotations

import pytest


@pytest.fixture
def without_sentiment():
    """The analytics pass without its registered sentiment section (catalog/products/intel.py
    installs it), put back afterwards for the other modules' tests."""
    from catalog.editorial.intel import _SENTIMENT

    saved = list(_SENTIMENT)
    _SENTIMENT.clear()
    yield
    _SENTIMENT[:] = saved
