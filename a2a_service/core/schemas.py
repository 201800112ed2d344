"""Response models every app shares: the base model and the error bodies. Each is a pydantic
model: the view builds it, and drf-spectacular publishes the same model as the schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel


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
    retry_after: int | None = Field(
        None,
        description="when the product has nothing to deliver now: seconds to wait before asking again "
        "(the Retry-After header too); no payment is asked for until it has",
    )


class RateLimitedOut(ErrorOut):
    retry_after: int


# --- paid calls: the 402 and 503 bodies every paid surface (x402, credits, sessions) shares ---
class PaymentRequirementsV1Out(Out):
    scheme: str
    network: str
    maxAmountRequired: str
    resource: str
    description: str | None = None
    mimeType: str | None = None
    payTo: str
    maxTimeoutSeconds: int
    asset: str
    extra: dict[str, Any] | None = None


class PaymentRequiredOut(Out):
    """402 body: x402 version 1 requirements, plus hints. The PAYMENT-REQUIRED header holds
    the same requirements in version 2 form (base64 JSON)."""

    x402Version: int
    error: str = Field(description="payment_required, or the reason the proof was refused")
    detail: str
    accepts: list[PaymentRequirementsV1Out]
    price_usdc: float
    hint: str
    alternatives: dict[str, dict[str, str]]


class InsufficientCreditOut(ErrorOut):
    balance_usdc: float
    price_usdc: float
    topup: dict[str, Any]
    x402_alternative: str | None


class ChargeUnconfirmedOut(ErrorOut):
    reference: str = Field(
        description="the ledger reference this call's debit carries if it committed: look for it in "
        "GET /api/a2a/account before retrying"
    )


class PaidCallUnavailable(RootModel[ProductUnavailableOut | ChargeUnconfirmedOut]):
    """503 on a paid path: the product is not available (nothing charged), or (with X-API-Key)
    the database connection failed during the debit and whether it committed could not be
    read (code charge_unconfirmed)."""


class X402PathRefusal(RootModel[PaymentRequiredOut | InsufficientCreditOut]):
    """402 on an x402 path: the payment requirements, or (when paying with X-API-Key) not
    enough credit."""
