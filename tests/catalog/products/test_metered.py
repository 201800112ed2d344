"""The meter of a metered product (ProductSpec.metered): what one call used, at most the
authorized maximum, from what it delivered."""

from __future__ import annotations

import pytest

from catalog.products.digests.grants import GrantParams
from catalog.products.registry import ProductCall, ProductSpec, metered_by_items, product_get


def used(limit: int, delivered: int, authorized: int = 80_000) -> int:
    call = ProductCall(sku=None, params=GrantParams(limit=limit), base_url="")
    return metered_by_items("items")(call, {"items": list(range(delivered))}, authorized)


def test_a_digest_pays_its_share_of_the_maximum_rounded_up():
    assert used(10, 3) == 24_000
    assert used(3, 1, authorized=100) == 34  # rounded up, never down to a free call
    assert used(10, 10) == used(10, 12) == 80_000  # a full digest: the maximum, never more
    assert used(10, 0) == 0


def test_the_metered_products_and_a_metered_product_has_no_effects():
    assert all(product_get(sku).metered is not None for sku in ("tech_regulatory_digest", "grant_scout_desk"))
    assert product_get("morning_brief").metered is None
    with pytest.raises(ValueError, match="cannot be metered"):
        ProductSpec(
            sku="p", path="/p", headline="p", price="1", family="p", effects=True, metered=metered_by_items("x")
        )
