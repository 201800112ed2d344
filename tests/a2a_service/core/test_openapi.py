from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate

from tests.support import ROOT
from tests.support.spec_operations import ADDED_OPERATIONS, SPEC_OPERATIONS

METHODS = {"get", "post", "put", "patch", "delete", "head"}
INTERFACE = ROOT.parent / "shared" / "spec" / "interface.md"


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        resp = APIClient().get("/api/a2a/openapi.json")
    assert resp.status_code == 200
    return resp.json()


def served_operations(schema: dict) -> set[tuple[str, str]]:
    return {(m.upper(), p) for p, item in schema["paths"].items() for m in item if m in METHODS}


def test_openapi_is_valid_3_1_with_version(schema):
    assert schema["openapi"] == "3.1.0"
    assert schema["info"]["version"] == "16.5.0"
    validate(schema)


def test_operations_are_exactly_the_documents(schema):
    served = served_operations(schema)
    expected = SPEC_OPERATIONS | ADDED_OPERATIONS
    assert served - expected == set(), "operations served but not in the interface document"
    assert expected - served == set(), "operations of the interface document not served"


def test_every_operation_is_tagged_and_has_a_real_success_schema(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method not in METHODS:
                continue
            assert op.get("tags"), f"{method} {path} has no tag"
            if method == "head":
                continue
            success = {k: v for k, v in op["responses"].items() if k.startswith("2")}
            assert success, f"{method} {path} documents no success response"
            for status, resp in success.items():
                for media in resp.get("content", {}).values():
                    assert media.get("schema"), f"{method} {path} {status} has no schema"


def test_free_gets_publish_named_component_schemas(schema):
    # A free endpoint's 200 is a named component with properties, not a bare object.
    comps = schema["components"]["schemas"]
    for path, item in schema["paths"].items():
        op = item.get("get")
        if not op or not op.get("operationId", "").startswith("free_"):
            continue
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        name = ref.rsplit("/", 1)[1]
        assert comps[name].get("properties"), f"{path}: {name} has no properties"


def test_validation_error_shape_is_documented(schema):
    comp = schema["components"]["schemas"]["HTTPValidationError"]
    assert comp["properties"]["detail"]["type"] == "array"
    item = schema["components"]["schemas"]["ValidationErrorItem"]
    assert set(item["required"]) == {"loc", "msg", "type"}


@pytest.mark.skipif(not INTERFACE.exists(), reason="shared/spec/interface.md is not beside this checkout")
def test_transcribed_operations_match_the_interface_file():
    doc = INTERFACE.read_text()
    documented: set[tuple[str, str]] = set()
    for methods, path in re.findall(
        r"^\|\s*((?:GET|POST|HEAD)(?:, (?:GET|POST|HEAD))*)\s*\|\s*(/\S+)", doc, re.M
    ):
        for method in methods.split(", "):
            documented.add((method, path))
    discovery = doc.split("### Discovery and status")[1].split("### Teasers")[0]
    for path in re.findall(r"^\|\s*(/\S+)\s*\|", discovery, re.M):
        documented.add(("GET", path))
    assert len(documented) > 90
    assert documented <= SPEC_OPERATIONS
    paid = re.findall(r"^\|[^|]+\|\s*(/[\w\-/]+)(?: \(query news_id\))?\s*\|\s*[\d.]+\s*\|", doc, re.M)
    further = re.findall(
        r"^\s+- (/[\w\-/]+)", doc.split("### Paid x402 endpoints")[1].split("## Authentication")[0], re.M
    )
    for p in paid + further:
        assert ("GET", "/api/a2a/x402" + p) in SPEC_OPERATIONS
    assert len(paid) == 23 and len(further) == 21
