"""Request inputs are pydantic models: one class per query string or body. Parsing
errors become 422 HTTPValidationError with loc ["query"|"body"|"path", field]."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rest_framework.request import Request

from a2a_service.core.errors import RequestValidationError
from a2a_service.core.parsers import text_is_storable

M = TypeVar("M", bound=BaseModel)

LIMIT_MAX = settings.CATALOG_LIMIT_MAX


class QueryModel(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)


def Limit(default: int) -> Any:  # noqa: N802 - reads like a type in the models below
    return Field(default, ge=1, le=LIMIT_MAX, description=f"number of items, 1..{LIMIT_MAX}")


class Limit40Query(QueryModel):
    limit: int = Limit(40)


class Limit20Query(QueryModel):
    limit: int = Limit(20)


class Limit24Query(QueryModel):
    limit: int = Limit(24)


class NewsCatalogQuery(QueryModel):
    limit: int = Limit(40)
    category: Annotated[str, Field(max_length=32, description="general, equity or crypto; empty for all")] = (
        ""
    )


class PredictionCatalogQuery(QueryModel):
    limit: int = Limit(40)
    venue: Annotated[str | None, Field(max_length=64, description="only this venue")] = None


def query_values(request: Request) -> dict[str, str]:
    """The query as parse_query reads it (the last value of each name), for a model chosen later."""
    return {name: request.query_params.getlist(name)[-1] for name in request.query_params}


def parse_query(request: Request, model: type[M]) -> M:
    data: dict[str, Any] = {}
    for name in model.model_fields:
        if name in request.query_params:
            values = request.query_params.getlist(name)
            data[name] = values[-1]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError.from_pydantic(exc, "query") from exc


def parse_body(request: Request, model: type[M]) -> M:
    data = request.data  # DRF raises ParseError on broken JSON -> 422 json_invalid
    if not isinstance(data, dict):
        raise RequestValidationError.single(
            ["body"], "request body must be a JSON object", "model_attributes_type"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError.from_pydantic(exc, "body") from exc


_JSON_TYPES = {"integer": OpenApiTypes.INT, "number": OpenApiTypes.NUMBER, "boolean": OpenApiTypes.BOOL}


def query_parameters(model: type[BaseModel]) -> list[OpenApiParameter]:
    """OpenAPI query parameters of a QueryModel, from its JSON schema (one source)."""
    schema = model.model_json_schema()
    params = []
    required = set(schema.get("required", []))
    for name, prop in schema["properties"].items():
        if "anyOf" in prop:  # Optional[X]: document X, nullable
            inner = [p for p in prop["anyOf"] if p.get("type") != "null"][0]
            prop = {**inner, **{k: v for k, v in prop.items() if k != "anyOf"}}
        param_schema = {
            k: prop[k] for k in ("type", "minimum", "maximum", "maxLength", "minLength") if k in prop
        }
        if "default" in prop and prop["default"] is not None:
            param_schema["default"] = prop["default"]
        params.append(
            OpenApiParameter(
                name,
                type=param_schema,
                location=OpenApiParameter.QUERY,
                required=name in required,
                description=prop.get("description", ""),
            )
        )
    return params


# Headers the API reads as identifiers or payloads (they reach database lookups).
GUARDED_HEADERS = (
    "X-API-Key",
    "X-Session-Token",
    "Idempotency-Key",
    "X-Ingest-Token",
    "PAYMENT-SIGNATURE",
    "X-PAYMENT",
)


def _loc_name(name: str) -> str:
    return name if text_is_storable(name) else name.encode("unicode_escape", "backslashreplace").decode()


class InputGuardMiddleware:
    """One place, before any view runs, that refuses text no query can carry to PostgreSQL:
    a NUL character or a lone surrogate in a path segment (404: no resource has that name),
    a query parameter (422, loc ["query", name]) or a header the API reads (422, loc
    ["header", name]). Without it each lookup failed in the database driver as a 500.
    JSON bodies get the same check in a2a_service.core.parsers.BoundedJSONParser."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        segments = [*view_args, *view_kwargs.values()]
        if any(isinstance(v, str) and not text_is_storable(v) for v in segments):
            return JsonResponse({"detail": "Not found.", "code": "not_found"}, status=404)
        for name, values in request.GET.lists():
            if not text_is_storable(name) or not all(text_is_storable(v) for v in values):
                return _refuse(["query", _loc_name(name)])
        for header in GUARDED_HEADERS:
            value = request.headers.get(header)
            if value is not None and not text_is_storable(value):
                return _refuse(["header", header])
        return None


def _refuse(loc: list[str | int]) -> JsonResponse:
    error = RequestValidationError.single(
        loc, "text must not contain NUL characters or lone surrogates", "string_unstorable"
    )
    return JsonResponse(error.body(), status=422)
