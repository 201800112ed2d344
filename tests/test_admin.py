"""Staff run the shop in the admin: a price edited there is what the next request shows."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from catalog.models import EditorialPiece, Sku

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(user)
    return client


def _form_data(client, url: str) -> dict:
    """The change form as a browser would submit it: every field with its current value."""
    resp = client.get(url)
    assert resp.status_code == 200
    form = resp.context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None:
            continue
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        if isinstance(value, list):
            data[name] = [str(v) for v in value]
            continue
        data[name] = str(value)
    return data


def test_admin_price_edit_shows_in_the_next_storefront_request(staff_client, api):
    sku = Sku.objects.get(sku="morning_brief")
    url = f"/admin/catalog/sku/{sku.pk}/change/"
    data = _form_data(staff_client, url)
    assert data["price_usdc"] in ("0.080000", "0.08")
    data["price_usdc"] = "0.09"
    resp = staff_client.post(url, data)
    assert resp.status_code == 302, resp.context["adminform"].form.errors if resp.context else resp
    sku.refresh_from_db()
    assert sku.price_atomic == 90_000
    store = {s["sku"]: s for s in api.get("/api/a2a/discovery/storefront").json()["storefront_skus"]}
    assert store["morning_brief"]["price_usdc"] == 0.09
    assert store["morning_brief"]["price_usdc_base"] == 0.08
    x402 = {r["sku"]: r for r in api.get("/.well-known/x402").json()["resources"]}
    assert x402["morning_brief"]["amount"] == "90000"


def test_admin_bulk_disable_and_enable(staff_client, api):
    ids = list(Sku.objects.filter(sku__in=["sentiment", "copy_signals"]).values_list("pk", flat=True))
    resp = staff_client.post("/admin/catalog/sku/", {"action": "disable_skus", "_selected_action": ids})
    assert resp.status_code == 302
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == 42
    staff_client.post("/admin/catalog/sku/", {"action": "enable_skus", "_selected_action": ids})
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == 44


def test_admin_lists_search_and_filter(staff_client):
    assert staff_client.get("/admin/catalog/sku/", {"q": "desk", "tier__exact": "D"}).status_code == 200
    for model in [
        "newsitem",
        "teaser",
        "catalogagent",
        "agentframeworkpack",
        "integration",
        "editorialpiece",
        "partneragent",
        "dailycounter",
        "workerheartbeat",
    ]:
        assert staff_client.get(f"/admin/catalog/{model}/").status_code == 200, model
    for model in [
        "payment",
        "billingsettings",
        "whaletier",
        "account",
        "apikey",
        "deposit",
        "ledgerentry",
        "creditadjustment",
        "chaincursor",
    ]:
        assert staff_client.get(f"/admin/billing/{model}/").status_code == 200, model
    for app, model in [
        ("sessions_app", "sessionpack"),
        ("sessions_app", "prepaidsession"),
        ("sessions_app", "sessioncall"),
        ("webhooks", "webhooksubscription"),
        ("webhooks", "webhookdelivery"),
        ("webhooks", "deliveryattempt"),
        ("webhooks", "eventprice"),
        ("webhooks", "pushentitlement"),
        ("webhooks", "webhookevent"),
    ]:
        assert staff_client.get(f"/admin/{app}/{model}/").status_code == 200, model
    assert staff_client.get("/admin/billing/creditadjustment/add/").status_code == 200


def test_admin_publishes_editorial_content(staff_client, api):
    piece = EditorialPiece.objects.create(kind="morning_brief", title="Today", summary="s", body="b")
    assert api.get("/api/a2a/morning-brief").json()["available"] is False
    staff_client.post(
        "/admin/catalog/editorialpiece/", {"action": "publish_now", "_selected_action": [piece.pk]}
    )
    assert api.get("/api/a2a/morning-brief").json()["title"] == "Today"
