"""The x402 `bazaar` declaration of every paid 402 (x402.extensions.bazaar): how to call the
resource (its method and inputs) and what it answers, for discovery services. Facilitators
that see it in a payment catalog the resource (ours: billing/facilitator/discovery.py).

Built with the SDK's server helpers from the product spec (catalog/products/registry.py): the
input schema is the spec's `params` model (the paid path's query parameters, the MCP tool's
arguments), the output schema its `output` model, with an example answer generated from that
schema (the SDK declares an output only with an example). One declaration per SKU and kind,
built once per process: the 402 is on the hot path, and the unpaid one is stored and served
before Django (billing/x402/fastpath.py) under the path and query it answers, so a
declaration that depends only on the SKU and the URL it names stays right there.

Which declaration a challenge carries depends on the resource it names:
- the SKU's own paid path (REST, and the chat and A2A, which name that path): GET with the
  parameters as query parameters;
- `mcp://tool/<name>` (the MCP surface): the MCP tool declaration;
- another path registered with `bazaar_route_register` (e.g. the marketplace's POST): its
  builder's; any other: no declaration (nothing is declared that the route does not take)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jsonschema  # type: ignore[import-untyped]  # the SDK's dependency; no stubs
from pydantic import BaseModel
from x402.extensions.bazaar import (
    BAZAAR,
    DeclareMcpDiscoveryConfig,
    OutputConfig,
    bazaar_resource_server_extension,
    declare_discovery_extension,
    declare_mcp_discovery_extension,
    validate_and_extract,
)

from billing.x402.challenge import ChallengeContext, extension_register
from catalog.products.registry import ProductSpec, spec_get

logger = logging.getLogger(__name__)

MCP_TOOL_PREFIX = "mcp://tool/"
# Keys left out of the declared schemas: the 402 travels in one header, and the prose is the
# OpenAPI document's (titles repeat the field names).
DROPPED_KEYS = frozenset({"title", "description", "examples"})
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class _HttpContext:
    """What the SDK's bazaar server extension reads of a request (enrich_declaration): the
    method. No route pattern: our paid paths have no path parameters."""

    method: str


# A path (below the site, e.g. "/api/a2a/marketplace/execute") -> the declaration of the SKU
# sold there (a higher layer registers the routes whose input is not the SKU's own).
RouteDeclaration = Callable[[ProductSpec], dict[str, Any] | None]
ROUTES: dict[str, RouteDeclaration] = {}


def bazaar_route_register(path: str, builder: RouteDeclaration) -> None:
    ROUTES[path] = builder
    _CACHE.clear()


# (sku, kind, id(spec)) -> the declaration (None: none). The spec's identity is part of the
# key: tests register throwaway specs under a name for a while.
_CACHE: dict[tuple[str, str, int], dict[str, Any] | None] = {}


def bazaar_declaration(context: ChallengeContext) -> dict[str, Any] | None:
    """The `bazaar` member of the challenge's extensions (the extension_register builder)."""
    spec = spec_get(context.sku)
    if spec is None:
        return None
    url = context.resource_url
    if url.startswith(MCP_TOOL_PREFIX):
        kind = "mcp:" + url[len(MCP_TOOL_PREFIX) :]
    else:
        path = urlsplit(url).path
        kind = "get" if path == spec.full_path else "route:" + path
    key = (spec.sku, kind, id(spec))
    if key not in _CACHE:
        _CACHE[key] = _build(spec, kind)
    return _CACHE[key]


def _build(spec: ProductSpec, kind: str) -> dict[str, Any] | None:
    declaration: dict[str, Any] | None
    try:
        if kind == "get":
            declaration = bazaar_get_declaration(spec)
        elif kind.startswith("mcp:"):
            declaration = bazaar_mcp_declaration(spec, tool=kind[4:])
        else:
            builder = ROUTES.get(kind[len("route:") :])
            declaration = builder(spec) if builder is not None else None
    except Exception:  # a declaration is advertising: the 402 stands without it
        logger.exception("bazaar: no declaration for %s (%s)", spec.sku, kind)
        return None
    if declaration is None:
        return None
    checked = validate_and_extract(declaration)
    if not checked.valid:
        logger.error("bazaar: %s (%s) declaration does not validate: %s", spec.sku, kind, checked.errors)
        return None
    return declaration


def bazaar_get_declaration(spec: ProductSpec) -> dict[str, Any]:
    """A GET route taking the spec's parameters as its query (the example: the required ones)."""
    params = model_schema(spec.params) if spec.params else dict(EMPTY_OBJECT)
    declared = declare_discovery_extension(
        input=schema_example(params) or None, input_schema=params, output=output_config(spec)
    )[BAZAAR.key]
    return bazaar_finish(declared, method="GET")


def bazaar_body_declaration(
    spec: ProductSpec, *, body_schema: dict[str, Any], example: dict[str, Any], method: str = "POST"
) -> dict[str, Any]:
    """A route taking a JSON body (body_schema, which `example` satisfies)."""
    declared = declare_discovery_extension(
        input=example, input_schema=body_schema, body_type="json", output=output_config(spec)
    )[BAZAAR.key]
    return bazaar_finish(declared, method=method)


def bazaar_mcp_declaration(spec: ProductSpec, *, tool: str) -> dict[str, Any]:
    declared = declare_mcp_discovery_extension(
        DeclareMcpDiscoveryConfig(
            tool_name=tool,
            description=spec.headline,
            transport="streamable-http",
            input_schema=model_schema(spec.params) if spec.params else dict(EMPTY_OBJECT),
            output=output_config(spec),
        )
    )[BAZAAR.key]
    return _hoist_defs(declared)


def bazaar_finish(declared: dict[str, Any], *, method: str) -> dict[str, Any]:
    """The SDK's server extension adds the method (to the info and to what the schema
    requires), as its framework middlewares do on each request; then the models' `$defs` go
    to the top of the schema, where their `#/$defs/...` references resolve."""
    enriched = bazaar_resource_server_extension.enrich_declaration(declared, _HttpContext(method=method))
    assert isinstance(enriched, dict)
    return _hoist_defs(enriched)


# How many levels of nested models the declared output schema spells out; deeper ones are
# declared as bare objects (arrays of them as arrays of objects). Clients echo the declaration
# in every payment header, and the 402 travels in one response header that proxies and HTTP
# clients bound (Node's default is 16 KB for all headers): the full output schema of the
# largest product (signals) took 7.5 KB of its 13 KB header. Every level is in the product's
# `outputSchema` in /.well-known/x402 and in the OpenAPI document.
OUTPUT_SCHEMA_DEPTH = 1


def output_config(spec: ProductSpec) -> OutputConfig | None:
    if spec.output is None:
        return None
    schema = model_schema(spec.output)
    example = schema_example(schema)
    if example is None:
        return None
    shallow = _shallow(schema, schema.get("$defs", {}), 0)
    shallow.pop("$defs", None)
    return OutputConfig(example=example, schema=shallow)


def _shallow(node: Any, defs: dict[str, Any], depth: int) -> Any:
    """The schema with sub-models inlined down to OUTPUT_SCHEMA_DEPTH and bare objects below
    (the example, drawn from the full schema, still satisfies it: it only says less)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = defs.get(ref.rsplit("/", 1)[-1])
            if target is None or depth >= OUTPUT_SCHEMA_DEPTH:
                return {"type": "object"}
            return _shallow(target, defs, depth + 1)
        return {key: _shallow(value, defs, depth) for key, value in node.items() if key != "$defs"}
    if isinstance(node, list):
        return [_shallow(value, defs, depth) for value in node]
    return node


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema without titles and prose, its `$defs` kept (inlining them would
    repeat every shared sub-model)."""
    stripped: dict[str, Any] = _strip(model.model_json_schema())
    return stripped


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in DROPPED_KEYS:
                continue
            # "properties" maps field names (a field may be named "description"): kept as is.
            out[key] = (
                {k: _strip(v) for k, v in value.items()} if key in ("properties", "$defs") else _strip(value)
            )
        return out
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _hoist_defs(declaration: dict[str, Any]) -> dict[str, Any]:
    """Move every `$defs` found inside the schema to the schema's top (names prefixed by
    where they came from, references rewritten), so `#/$defs/X` resolves in the document."""
    declaration = copy.deepcopy(declaration)
    schema = declaration["schema"]
    hoisted: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> Any:
        if isinstance(node, dict):
            defs = node.pop("$defs", None)
            if isinstance(defs, dict):
                prefix = f"d{len(hoisted)}_"
                for name, sub in defs.items():
                    hoisted[prefix + name] = walk_refs(sub, prefix)
                return walk_refs(node, prefix)
            return {k: walk(v, prefix) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, prefix) for v in node]
        return node

    def walk_refs(node: Any, prefix: str) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    out[key] = "#/$defs/" + prefix + value[len("#/$defs/") :]
                elif key == "$defs":
                    continue
                else:
                    out[key] = walk_refs(value, prefix)
            return out
        if isinstance(node, list):
            return [walk_refs(v, prefix) for v in node]
        return node

    schema = walk(schema, "")
    if hoisted:
        schema["$defs"] = hoisted
    declaration["schema"] = schema
    return declaration


def schema_example(schema: dict[str, Any]) -> Any:
    """The smallest value the schema accepts: required members only, the first enum value,
    bounds respected; None when that value does not validate (a pattern it cannot guess).
    (An output model's real answers are tested against it elsewhere; this is only the shape
    for discovery.)"""
    example = _example(schema, schema.get("$defs", {}), 0)
    # Not jsonschema.validate: it first checks the schema against its metaschema, most of the
    # cost of a 402's first declaration; pydantic's schemas are well-formed.
    validator = jsonschema.validators.validator_for(schema)(schema)
    return example if validator.is_valid(example) else None


def _example(node: dict[str, Any], defs: dict[str, Any], depth: int) -> Any:
    if depth > 12:
        return None
    if "$ref" in node:
        return _example(defs[node["$ref"].rsplit("/", 1)[-1]], defs, depth + 1)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    if "default" in node and node["default"] is not None:
        return node["default"]
    for union in ("anyOf", "oneOf"):
        if union in node:
            options = node[union]
            if any(o.get("type") == "null" for o in options):
                return None
            return _example(options[0], defs, depth + 1)
    if "allOf" in node:
        return _example(node["allOf"][0], defs, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return {
            name: _example(props[name], defs, depth + 1) for name in node.get("required", []) if name in props
        }
    if kind == "array":
        count = int(node.get("minItems", 0))
        items = node.get("items", {})
        return [_example(items, defs, depth + 1) for _ in range(count)]
    if kind == "string":
        fmt = node.get("format")
        if fmt == "date-time":
            return "2026-01-01T00:00:00Z"
        if fmt == "date":
            return "2026-01-01"
        if fmt in ("uri", "url"):
            return "https://example.com"
        return "x" * int(node.get("minLength", 0))
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", 0))
        value = max(0, low) if "exclusiveMinimum" not in node else low + 1
        high = node.get("maximum")
        return min(value, high) if high is not None else value
    if kind == "boolean":
        return False
    return None


extension_register(BAZAAR.key, bazaar_declaration)
