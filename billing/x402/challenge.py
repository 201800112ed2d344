"""What to pay: the x402 requirements of a SKU at its current price, in version 2 (the
PAYMENT-REQUIRED header) and version 1 (the JSON body) form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from x402.http.utils import encode_payment_required_header
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo
from x402.schemas.v1 import PaymentRequirementsV1

from a2a_service.core.money import usdc_from_atomic

MIME_JSON = "application/json"


@dataclass(frozen=True)
class Challenge:
    sku: str
    price_atomic: int
    resource: ResourceInfo
    v2: PaymentRequirements
    v1: PaymentRequirementsV1


def challenge_build(*, sku: str, description: str, price_atomic: int, resource_url: str) -> Challenge:
    extra = {"name": settings.USDC_EIP712_NAME, "version": settings.USDC_EIP712_VERSION}
    amount = str(price_atomic)
    return Challenge(
        sku=sku,
        price_atomic=price_atomic,
        resource=ResourceInfo(url=resource_url, description=description, mime_type=MIME_JSON),
        v2=PaymentRequirements(
            scheme="exact",
            network=settings.X402_NETWORK,
            asset=settings.USDC_ADDRESS,
            amount=amount,
            pay_to=settings.TREASURY_ADDRESS,
            max_timeout_seconds=settings.X402_MAX_TIMEOUT_SECONDS,
            extra=extra,
        ),
        v1=PaymentRequirementsV1(
            scheme="exact",
            network=settings.X402_NETWORK_V1_NAME,
            max_amount_required=amount,
            resource=resource_url,
            description=description,
            mime_type=MIME_JSON,
            pay_to=settings.TREASURY_ADDRESS,
            max_timeout_seconds=settings.X402_MAX_TIMEOUT_SECONDS,
            asset=settings.USDC_ADDRESS,
            extra=extra,
        ),
    )


def challenge_required(challenge: Challenge, error: str) -> PaymentRequired:
    """The x402 version 2 PaymentRequired: the REST 402's PAYMENT-REQUIRED header, and what the
    protocols without headers carry in their metadata (MCP tool error, A2A task status)."""
    return PaymentRequired(x402_version=2, error=error, resource=challenge.resource, accepts=[challenge.v2])


def challenge_required_json(challenge: Challenge, error: str) -> dict[str, Any]:
    return challenge_required(challenge, error).model_dump(by_alias=True, exclude_none=True, mode="json")


def challenge_header(challenge: Challenge, error: str) -> str:
    return encode_payment_required_header(challenge_required(challenge, error))


def challenge_body(challenge: Challenge, *, error: str, detail: str, base: str) -> dict[str, Any]:
    """The 402 JSON body: x402 version 1 requirements (so v1 clients pay too), a hint for
    people, and the other ways to buy the same thing."""
    price = usdc_from_atomic(challenge.price_atomic)
    return {
        "x402Version": 1,
        "error": error,
        "detail": detail,
        "accepts": [challenge.v1.model_dump(by_alias=True, exclude_none=True, mode="json")],
        "price_usdc": price,
        "hint": (
            f"Pay {price} USDC on {settings.X402_NETWORK} to {settings.TREASURY_ADDRESS}: sign an EIP-3009 "
            "transferWithAuthorization for the amount in the PAYMENT-REQUIRED header (x402 v2) or in accepts "
            "(x402 v1) and retry this request with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1)."
        ),
        "alternatives": {
            "credits": {
                "register": base + "/api/a2a/account/register",
                "topup_info": base + "/api/a2a/account/topup-info",
                "header": "X-API-Key",
                "how": "send your API key on this same request: the price is debited from your credits",
            },
            "session": {
                "buy": base + "/api/a2a/x402/session/desk-pack",
                "call": base + "/api/a2a/session/call/{sku}",
                "header": "X-Session-Token",
            },
        },
    }
