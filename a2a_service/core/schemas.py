"""Response models every app shares: the base model and the error bodies. Each is a pydantic
model: the view builds it, and drf-spectacular publishes the same model as the schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# --- errors ---------------------------------------------------------------------------
class ValidationErrorItem(Out):
    loc: list[str | int]
    msg: str
    type: str


class HTTPValidationError(Out):
    detail: list[ValidationErrorItem]


class ErrorOut(Out):
    detail: str
    code: str = Field(description="machine-readable error code")


class UnauthorizedOut(ErrorOut):
    register_endpoint: str
    header: str
    instructions: str


class ProductUnavailableOut(ErrorOut):
    sku: str | None = None
    charged: bool = Field(False, description="always false: nothing is charged for an unavailable product")


class RateLimitedOut(ErrorOut):
    retry_after: int
