"""Request inputs are pydantic models: one class per query string or body. Parsing
errors become 422 HTTPValidationError with loc ["query"|"body"|"path", field]."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rest_framework.request import Request

from catalog.api.errors import RequestValidationError

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
