"""Bazaar discovery: every paid 402 declares how to call the resource and what it answers
(validated with the SDK's own facilitator functions), and our facilitator catalogs a resource
once a payment for it is settled, listing it to the SDK's bazaar facilitator client."""

from __future__ import annotations

import base64
import json
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest
from django.db import connections
from x402.extensions.bazaar import (
    BAZAAR,
    extract_discovery_info,
    validate_and_extract,
    validate_discovery_extension_spec,
)
from x402.http.utils import decode_payment_required_header, decode_payment_response_header
from x402.mcp import MCP_PAYMENT_META_KEY
from x402.schemas import PaymentPayload

from billing.credits import ledger_audit
from billing.facilitator.discovery import SEEN, discovered_resource_upsert, discovery_catalog
from billing.models import DiscoveredResource, Payment
from billing.x402.bazaar import bazaar_declaration
from billing.x402.challenge import challenge_build
from catalog.products.registry import specs_all
from catalog.services import catalog_seed
from tests.support.mcp_rpc import STATUS_SKU, call
from tests.support.payments import BRIEF, challenge, paying_session
from tests.support.x402_extensions import discovery_resources


def _declared(sku: str, url: str) -> dict:
    built = challenge_build(sku=sku, description="d", price_atomic=10_000, resource_url=url)
    return built.extensions[BAZAAR.key]


def test_every_product_declares_a_valid_bazaar_input_and_output():
    """For every SKU, on its paid path and as an MCP tool: the SDK validates the declaration
    (info against its schema, and the protocol's rules); the input schema is the spec's
    parameters, the output's example validates against the output model's schema."""
    specs = [s for s in specs_all() if s.built]
    assert len(specs) > 30
    for spec in specs:
        for url in ("https://shop.example" + spec.full_path, f"mcp://tool/{spec.sku}"):
            declared = _declared(spec.sku, url)
            checked = validate_and_extract(declared)
            assert checked.valid, (spec.sku, url, checked.errors)
            assert validate_discovery_extension_spec(declared).valid, (spec.sku, url)
            schema = declared["schema"]
            if url.startswith("mcp:"):
                assert declared["info"]["input"]["toolName"] == spec.sku
                inputs = declared["info"]["input"]["inputSchema"]
            else:
                assert declared["info"]["input"]["method"] == "GET"
                inputs = schema["properties"]["input"]["properties"]["queryParams"]
            params = spec.params.model_json_schema()["properties"] if spec.params else {}
            assert set(inputs["properties"]) == set(params), spec.sku
            if spec.output is not None:
                example = declared["info"]["output"]["example"]
                output = {
                    **schema["properties"]["output"]["properties"]["example"],
                    "$defs": schema.get("$defs", {}),
                }
                jsonschema.validate(example, output)
    # Built once per SKU and kind: the hot path reuses the same declaration.
    first = _declared("morning_brief", "https://shop.example/api/a2a/x402/morning-brief?x=1")
    assert _declared("morning_brief", "https://other.example/api/a2a/x402/morning-brief") is first


@pytest.mark.django_db
def test_the_402_carries_the_bazaar_and_payment_identifier_declarations(api):
    catalog_seed()
    from tests.support.payments import publish_brief

    publish_brief()
    resp = api.get(BRIEF)
    assert resp.status_code == 402
    required = decode_payment_required_header(resp["PAYMENT-REQUIRED"])
    assert set(required.extensions) >= {"bazaar", "payment-identifier"}
    declared = required.extensions["bazaar"]
    assert validate_and_extract(declared).valid
    assert declared["info"]["input"] == {"type": "http", "method": "GET"}
    assert declared["info"]["output"]["type"] == "json"
    assert required.extensions["payment-identifier"]["info"] == {"required": False}
    # The MCP tool's challenge declares the MCP tool.
    unpaid = call(api, STATUS_SKU)["structuredContent"]
    mcp = unpaid["extensions"]["bazaar"]
    assert mcp["info"]["input"]["type"] == "mcp" and mcp["info"]["input"]["toolName"] == STATUS_SKU
    assert validate_and_extract(mcp).valid


def test_paid_call_is_listed_by_the_facilitator_discovery(paid_stack, brief):
    SEEN.clear()
    url = paid_stack.url + BRIEF
    assert discovery_resources(paid_stack.url).items == []
    declared = challenge(url).extensions["bazaar"]
    resp = paying_session().get(url, timeout=30)
    assert resp.status_code == 200, resp.text
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    listed = discovery_resources(paid_stack.url, type="http", limit=10)
    assert listed.x402_version == 2 and listed.pagination.total == 1
    (item,) = listed.items
    assert item.resource == url and item.type == "http" and item.x402_version == 2
    assert item.description and item.mime_type == "application/json"
    assert item.extensions == {"bazaar": declared}
    (accepted,) = item.accepts
    assert (accepted["scheme"], accepted["amount"], accepted["payTo"]) == (
        "exact",
        "80000",
        paid_stack.treasury,
    )
    assert item.last_updated
    # Filters: another scheme or network lists nothing.
    assert discovery_resources(paid_stack.url, scheme="upto").items == []
    assert discovery_resources(paid_stack.url, network="eip155:1").pagination.total == 0
    assert discovery_resources(paid_stack.url, type="mcp").items == []
    # One sale, one settlement: cataloguing changed nothing of the payment.
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.tx_hash == settled.transaction
    assert ledger_audit() == []


def test_an_mcp_paid_tool_is_catalogued_as_an_mcp_resource(paid_stack):
    SEEN.clear()
    import requests

    session = requests.Session()
    session.headers.update(
        {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    )

    class Http:
        def post(self, path, data, content_type, **_):
            return session.post(paid_stack.url + path, data=data, headers={"Content-Type": content_type})

    from x402.mcp.types import MCPToolResult
    from x402.mcp.utils import extract_payment_required_from_result

    from tests.support.payments import payer_client

    unpaid = call(Http(), STATUS_SKU)
    required = extract_payment_required_from_result(
        MCPToolResult(
            content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"]
        )
    )
    assert required is not None
    payload = payer_client().create_payment_payload(required)
    paid = call(Http(), STATUS_SKU, meta={MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)})
    assert paid["isError"] is False
    (item,) = discovery_resources(paid_stack.url, type="mcp").items
    assert item.resource == f"mcp://tool/{STATUS_SKU}"
    assert item.extensions["bazaar"]["info"]["input"]["toolName"] == STATUS_SKU
    session.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_catalogue_upserts_make_one_row_with_every_scheme():
    """The same resource seen by concurrent settlements of two schemes: one row, both kinds."""
    declared = bazaar_declaration_for_brief()

    def upsert(scheme: str) -> int:
        try:
            return discovered_resource_upsert(
                resource="https://shop.example/api/a2a/x402/morning-brief",
                kind="http",
                method="GET",
                tool_name="",
                x402_version=2,
                description="brief",
                mime_type="application/json",
                service_name="",
                tags=[],
                icon_url="",
                accepts={f"{scheme}|eip155:8453": {"scheme": scheme, "network": "eip155:8453"}},
                bazaar=declared,
            ).id
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = list(pool.map(upsert, ["exact", "upto", "batch-settlement"] * 4))
    assert len(set(ids)) == 1
    row = DiscoveredResource.objects.get()
    assert set(row.accepts) == {"exact|eip155:8453", "upto|eip155:8453", "batch-settlement|eip155:8453"}


def bazaar_declaration_for_brief() -> dict:
    from billing.x402.challenge import ChallengeContext

    context = ChallengeContext(
        sku="morning_brief",
        description="brief",
        price_atomic=80_000,
        resource_url="https://shop.example/api/a2a/x402/morning-brief",
        exact=None,  # type: ignore[arg-type]  # the bazaar builder does not read it
    )
    declared = bazaar_declaration(context)
    assert declared is not None
    return json.loads(json.dumps(declared))


def test_a_forged_declaration_is_not_catalogued():
    """The facilitator trusts nothing in the payload it does not validate (the SDK's check)."""
    declared = bazaar_declaration_for_brief()
    declared["info"]["input"]["method"] = "BREW"
    payload = PaymentPayload.model_validate(
        {
            "x402Version": 2,
            "payload": {},
            "accepted": {
                "scheme": "exact",
                "network": "eip155:8453",
                "asset": "0x" + "1" * 40,
                "amount": "1",
                "payTo": "0x" + "2" * 40,
                "maxTimeoutSeconds": 60,
            },
            "resource": {"url": "https://shop.example/x", "description": "", "mimeType": "application/json"},
            "extensions": {"bazaar": declared},
        }
    )
    assert extract_discovery_info(payload, payload.accepted) is None


def test_the_marketplace_declares_its_post_body():
    """POST /api/a2a/marketplace/execute (registered by the agents app): a JSON body naming the
    capability and the product's parameters."""
    declared = bazaar_declaration_for("sentiment", "https://shop.example/api/a2a/marketplace/execute")
    assert declared is not None
    assert validate_and_extract(declared).valid and validate_discovery_extension_spec(declared).valid
    info = declared["info"]["input"]
    assert (info["method"], info["bodyType"], info["body"]["capability"]) == ("POST", "json", "sentiment")
    body = declared["schema"]["properties"]["input"]["properties"]["body"]
    assert body["properties"]["capability"]["enum"] == ["sentiment"]
    # A path that declares nothing of its own gets no declaration rather than a wrong one.
    assert bazaar_declaration_for("sentiment", "https://shop.example/api/a2a/elsewhere") is None


def bazaar_declaration_for(sku: str, url: str) -> dict | None:
    from billing.x402.challenge import ChallengeContext

    context = ChallengeContext(sku=sku, description="", price_atomic=1, resource_url=url, exact=None)  # type: ignore[arg-type]
    return bazaar_declaration(context)


def test_the_declarations_fit_in_the_payment_header_clients_echo_them_in(settings):
    """x402 clients copy the 402's extensions into their payment: with the largest product's
    declaration, the payment header stays under PAYMENT_HEADER_MAX_BYTES (with room for a
    signature and a few more extensions)."""
    largest = 0
    for spec in (s for s in specs_all() if s.built):
        built = challenge_build(
            sku=spec.sku,
            description=spec.headline,
            price_atomic=10_000,
            resource_url="https://a.example" + spec.full_path,
        )
        echoed = {
            "x402Version": 2,
            "payload": {
                "signature": "0x" + "a" * 130,
                "authorization": {"nonce": "0x" + "f" * 64, "x": "0" * 200},
            },
            "accepted": built.v2.model_dump(by_alias=True, mode="json"),
            "resource": built.resource.model_dump(by_alias=True, mode="json"),
            "extensions": built.extensions,
        }
        largest = max(largest, len(base64.b64encode(json.dumps(echoed).encode())))
    assert largest < settings.PAYMENT_HEADER_MAX_BYTES * 0.8, largest


@pytest.mark.django_db
def test_only_this_services_resources_are_catalogued(settings):
    settings.PUBLIC_BASE_URL = "https://shop.example"
    SEEN.clear()
    declared = bazaar_declaration_for_brief()

    def payload(url: str) -> PaymentPayload:
        return PaymentPayload.model_validate(
            {
                "x402Version": 2,
                "payload": {},
                "accepted": {
                    "scheme": "exact",
                    "network": "eip155:8453",
                    "asset": "0x" + "1" * 40,
                    "amount": "80000",
                    "payTo": "0x" + "2" * 40,
                    "maxTimeoutSeconds": 60,
                },
                "resource": {"url": url, "description": "brief", "mimeType": "application/json"},
                "extensions": {"bazaar": declared},
            }
        )

    elsewhere = payload("https://evil.example/api/a2a/x402/morning-brief")
    assert discovery_catalog(elsewhere, elsewhere.accepted) is None
    ours = payload("https://shop.example/api/a2a/x402/morning-brief?x=1")
    row = discovery_catalog(ours, ours.accepted)
    assert row is not None and row.resource == "https://shop.example/api/a2a/x402/morning-brief"
    assert DiscoveredResource.objects.count() == 1
