"""What the discovery documents say about paying (/.well-known/x402, the A2A card's x402
extension) is what the 402s themselves offer: the same version 2 requirements, scheme by
scheme, and the same extensions, for every resource whose product can be bought now."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from x402.http.utils import decode_payment_required_header

from billing.x402.challenge import x402_extensions, x402_schemes

pytestmark = pytest.mark.django_db


def test_every_available_resource_offers_in_its_402_what_the_well_known_document_lists(api):
    body = api.get("/.well-known/x402").json()
    assert body["schemes"] == x402_schemes() and body["schemes"][0] == "exact"
    assert body["extensions"] == x402_extensions()
    available = [r for r in body["resources"] if r["status"] == "available"]
    compared = 0
    for resource in available:
        assert resource["accepts"][0]["scheme"] == "exact"
        assert resource["accepts"][0]["amount"] == resource["amount"]
        assert {a["scheme"] for a in resource["accepts"]} <= set(body["schemes"])
        url = urlsplit(resource["resource"])
        answer = api.generic(resource["method"], url.path + (f"?{url.query}" if url.query else ""))
        if answer.status_code in (422, 503):  # needs its parameters; nothing fresh to deliver now
            continue
        assert answer.status_code == 402, (resource["sku"], answer.status_code)
        required = decode_payment_required_header(answer["PAYMENT-REQUIRED"])
        offered = [a.model_dump(by_alias=True, exclude_none=True, mode="json") for a in required.accepts]
        assert offered == resource["accepts"], resource["sku"]
        assert sorted(required.extensions or {}) == resource["extensions"], resource["sku"]
        compared += 1
    assert compared >= 5, compared


def test_the_agent_card_names_the_x402_schemes_and_extensions(api):
    card = api.get("/.well-known/agent-card.json").json()
    [x402] = [e for e in card["capabilities"]["extensions"] if "a2a-x402" in e["uri"]]
    assert x402["params"] == {"x402Version": 2, "schemes": x402_schemes(), "extensions": x402_extensions()}
    assert x402["required"] is False


def test_the_openapi_document_names_them_on_every_x402_path(api):
    document = api.get("/api/a2a/openapi.json").json()
    operations = [
        op
        for path, item in document["paths"].items()
        if path.startswith("/api/a2a/x402/")
        for op in item.values()
        if isinstance(op, dict) and op.get("operationId", "").startswith("x402_")
    ]
    assert operations
    for operation in operations:
        for name in (*x402_schemes(), *x402_extensions()):
            assert name in operation["description"], (operation["operationId"], name)


def test_the_well_known_document_links_the_facilitators_discovery_list(api):
    body = api.get("/.well-known/x402").json()
    assert body["discovery"].endswith("/api/a2a/facilitator/discovery/resources")
    listed = api.get("/api/a2a/facilitator/discovery/resources")
    assert listed.status_code == 200 and listed.json()["x402Version"] == 2
