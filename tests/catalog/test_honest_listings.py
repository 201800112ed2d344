"""Issue 10 item 6, honest listings: a SKU is advertised as live_x402 (and counted as live)
only where it answers 402 unpaid. A SKU whose product is not built, or that staff switched
off, is shown as coming_soon/disabled or left out; a teaser of a built product with no data
says available: false with the reason."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.models import EditorialPiece, NewsItem, Sku
from catalog.products.registry import (
    ProductSpec,
    TeaserSpec,
    product_has_content,
    products_built,
    registered,
    specs_all,
)
from catalog.services import catalog_seed

pytestmark = pytest.mark.django_db

# Documents that list SKUs, and where each keeps its list.
SKU_LISTS = {
    "/api/a2a/ai-agent.json": "skus",
    "/api/a2a/marketplace/listing": "skus",
    "/api/a2a/x402/status": "skus",
    "/api/a2a/promotion/hero-pack": "hero_skus",
}
STOREFRONT_LISTS = ("storefront_skus", "growth_skus", "prediction_entry_skus")


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def news_item() -> NewsItem:
    return NewsItem.objects.create(title="t", teaser="teaser", body="body", category="general")


def _unpaid(api: APIClient, sku: Sku, news_item: NewsItem) -> int:
    """The unpaid answer's status; 402 also for a SKU on sale whose product has nothing to
    deliver right now (it answers 503 with when to ask again instead of a challenge to sign for
    nothing: issue 23 item 8), which its own availability check confirms."""
    query: dict[str, object] = {"news_id": news_item.id} if sku.sku == "news_unlock" else {}
    if sku.sku == "txgen_transaction":  # its request is required, as news_unlock's news_id
        query = {"prompt": "wrap 0.1 ETH", "address": "0x" + "ab" * 20}
    resp = api.get(sku.path, query)
    if resp.status_code == 503 and resp.json().get("retry_after"):
        assert resp["Retry-After"] and product_has_content(sku.sku)[0] is False, sku.sku
        assert "nothing to deliver now" in resp.json()["detail"]
        return 402
    return resp.status_code


def _advertised(api: APIClient) -> dict[str, set[str]]:
    """Every place that names a SKU as live/for sale -> the SKU names it names so."""
    out: dict[str, set[str]] = {}
    for path, key in SKU_LISTS.items():
        out[path] = {x["sku"] for x in api.get(path).json()[key] if x["status"] == "live_x402"}
    store = api.get("/api/a2a/discovery/storefront").json()
    for key in STOREFRONT_LISTS:
        out[f"storefront {key}"] = {x["sku"] for x in store[key] if x["status"] == "live_x402"}
    wk = api.get("/.well-known/x402").json()["resources"]
    out["/.well-known/x402"] = {x["sku"] for x in wk if x["status"] == "available"}
    return out


def test_every_sku_advertised_live_answers_402_and_the_rest_are_not_live(api, news_item):
    skus = {x.sku: x for x in Sku.objects.all()}
    built = products_built()
    answers_402 = {name for name, x in skus.items() if _unpaid(api, x, news_item) == 402}
    # Every spec's SKU switched on, the built ones answer 402; the others answer 503.
    assert len(skus) == len(specs_all()) and answers_402 == built and len(answers_402) >= 14
    unbuilt = set(skus) - built
    assert len(unbuilt) == len(specs_all()) - len(built)
    assert all(_unpaid(api, skus[name], news_item) == 503 for name in unbuilt)

    for where, names in _advertised(api).items():
        assert names <= answers_402, f"{where} advertises {names - answers_402} as live"

    # Lists that promise something for sale leave the unbuilt SKUs out altogether.
    wk = api.get("/.well-known/x402").json()["resources"]
    assert {x["sku"] for x in wk} == answers_402
    assert {urlsplit(x["resource"]).path for x in wk} == {skus[n].path for n in answers_402}
    status = api.get("/api/a2a/x402/status").json()
    assert {x["sku"] for x in status["skus"]} == answers_402
    assert set(status["coming_soon"]) == unbuilt
    store = api.get("/api/a2a/discovery/storefront").json()
    assert not {x["sku"] for key in STOREFRONT_LISTS for x in store[key]} & unbuilt

    # The manifest and the listing name them all, each with its honest status.
    for path in ("/api/a2a/ai-agent.json", "/api/a2a/marketplace/listing"):
        listed = {x["sku"]: x["status"] for x in api.get(path).json()["skus"]}
        assert set(listed) == set(skus)
        assert {n for n, st in listed.items() if st == "coming_soon"} == unbuilt
        assert {n for n, st in listed.items() if st == "live_x402"} == answers_402

    # Every live count is the number that answers 402.
    live = len(answers_402)
    assert status["live_skus"] == live
    assert api.get("/api/a2a/platform/stats").json()["skus_live"] == live
    assert api.get("/api/a2a/platform/stats").json()["skus_total"] == len(specs_all())
    assert api.get("/api/a2a/monetization/status").json()["skus_live"] == live
    assert api.get("/api/a2a/discovery/m2m").json()["paid_sku_count"] == live
    health = api.get("/api/a2a/program/health").json()["skus"]
    assert (health["live"], health["coming_soon"], health["products_built"]) == (
        live,
        len(specs_all()) - live,
        live,
    )
    mcp = api.get("/api/a2a/mcp/catalog").json()
    assert {t["name"] for t in mcp["tools"] if t["paid"]} == answers_402
    hero = {x["sku"] for x in api.get("/api/a2a/promotion/hero-pack").json()["hero_skus"]}
    assert hero == {n for n in answers_402 if skus[n].hero}
    caps = api.get("/api/a2a/marketplace/health").json()["capabilities"]
    assert all(c["sku"] in answers_402 for c in caps if c["paid"] and c["available"])


def test_a_sku_switched_off_by_staff_is_not_advertised_live_anywhere(api, news_item):
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="b", published_at=timezone.now()
    )
    assert api.get("/api/a2a/morning-brief").json()["available"] is True
    Sku.objects.filter(sku__in=["morning_brief", "news_unlock"]).update(status=Sku.Status.DISABLED)
    for name in ("morning_brief", "news_unlock"):
        assert _unpaid(api, Sku.objects.get(sku=name), news_item) == 404
    for where, names in _advertised(api).items():
        assert not names & {"morning_brief", "news_unlock"}, where
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == len(products_built()) - 2
    assert api.get("/api/a2a/platform/stats").json()["skus_live"] == len(products_built()) - 2
    teaser = api.get("/api/a2a/teaser/morning-brief").json()
    assert teaser["available"] is False and "switched off" in teaser["unavailable_reason"]
    assert api.get("/api/a2a/morning-brief").json()["available"] is False


def test_teaser_says_unavailable_until_the_product_has_data(api):
    # morning_brief is built but raises ProductFailed (503) until a brief is published.
    teaser = api.get("/api/a2a/teaser/morning-brief").json()
    assert teaser["available"] is False
    assert teaser["unavailable_reason"] == "no morning brief has been published yet"
    # A draft is not published: still unavailable.
    EditorialPiece.objects.create(kind="morning_brief", title="Draft", summary="d", body="d")
    assert api.get("/api/a2a/teaser/morning-brief").json()["available"] is False
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="b", published_at=timezone.now()
    )
    teaser = api.get("/api/a2a/teaser/morning-brief").json()
    assert teaser["available"] is True and teaser["unavailable_reason"] is None


def test_teaser_of_an_unbuilt_product_says_coming_soon(api):
    # Every product with a teaser is built now: a throwaway spec stands for the next one.
    spec = ProductSpec(
        sku="teaser_probe_unbuilt",
        path="/probe/unbuilt",
        headline="A product not built yet",
        price="0.01",
        family="probe",
        teaser="probe-unbuilt",
        teasers=(TeaserSpec(name="probe-unbuilt", title="Probe", summary="Not built yet."),),
    )
    with registered(spec):
        catalog_seed()
        teaser = api.get("/api/a2a/teaser/probe-unbuilt").json()
    assert teaser["available"] is False and "not built yet" in teaser["unavailable_reason"]


def test_digest_teaser_follows_ingested_news(api):
    assert api.get("/api/a2a/teaser/daily-digest").json()["available"] is False
    NewsItem.objects.create(title="t", teaser="teaser", body="body", category="general")
    assert api.get("/api/a2a/teaser/daily-digest").json()["available"] is True
