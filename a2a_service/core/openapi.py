"""OpenAPI post-processing: HEAD operations the interface lists, the 413 of every body."""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.utils import OpenApiResponse, extend_schema
from drf_spectacular.views import SpectacularJSONAPIView

# Paths on which the interface document lists HEAD.
HEAD_PATHS = {
    "/api/a2a/agenthub/status",
    "/api/a2a/agenthub",
    "/api/a2a/agenthub/chat",
    "/api/a2a/agenthub/",
    "/api/a2a/agents/{slug}/status",
    "/api/a2a/agents/{slug}",
}


# Every operation with a body may answer 413 (a2a_service.core.views.ApiView); those that
# speak JSON-RPC document their own form of it.
BODY_TOO_LARGE = {
    "description": "the request body is larger than API_MAX_BODY_BYTES (type body_too_large); "
    "JSON-RPC requests get a JSON-RPC error -32600 instead",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}},
}


def postprocess_schema(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    for path, item in result.get("paths", {}).items():
        if path not in HEAD_PATHS:
            continue
        source = item.get("get") or item.get("post") or {}
        head = {
            "operationId": (source.get("operationId") or path.strip("/").replace("/", "_")) + "_head",
            "summary": (source.get("summary") or "") + " (headers only)",
            "tags": copy.deepcopy(source.get("tags", [])),
            "responses": {"200": {"description": "available; no body"}},
        }
        for status, resp in source.get("responses", {}).items():
            if not status.startswith("2"):  # a HEAD answer carries the GET's status, never a body
                head["responses"][status] = {"description": resp.get("description") or status}
        if "parameters" in source:
            head["parameters"] = [p for p in copy.deepcopy(source["parameters"]) if p.get("in") == "path"]
        item["head"] = head
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                operation.setdefault("responses", {}).setdefault("413", copy.deepcopy(BODY_TOO_LARGE))
    return result


class OpenApiJson(OpenApiJsonRenderer):
    # Integrators fetch it as plain JSON (the interface: every response is application/json).
    media_type = "application/json"


class OpenApiDocumentView(SpectacularJSONAPIView):
    renderer_classes = [OpenApiJson]

    @extend_schema(
        tags=["discovery"],
        summary="OpenAPI 3.1 description of this interface",
        operation_id="openapi_document",
        responses={200: OpenApiResponse({"type": "object"}, description="OpenAPI 3.1 document")},
    )
    def get(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return super().get(request, *args, **kwargs)
