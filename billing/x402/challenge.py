"""What to pay: the x402 requirements of a SKU at its current price, in version 2 (the
PAYMENT-REQUIRED header) and version 1 (the JSON body) form.

Two tables grow the version 2 challenge without touching this module: `accepts_register`
adds a payment scheme's requirements next to `exact` (batch-settlement, upto), and
`extension_register` adds an x402 extension's declaration (bazaar, sign-in-with-x,
payment-identifier). Each builder sees the `ChallengeContext` and may answer None (not
offered for this SKU). Version 1 stays `exact` only: the other schemes are version 2."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from x402.http.utils import encode_payment_required_header
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo
from x402.schemas.v1 import PaymentRequirementsV1

from a2a_service.core.money import usdc_from_atomic

MIME_JSON = "application/json"


@dataclass(frozen=True)
class ChallengeContext:
    """What a scheme's or an extension's builder knows about the call being priced."""

    sku: str
    description: str
    price_atomic: int
    resource_url: str
    exact: PaymentRequirements  # the `exact` requirements: network, asset, payTo, timeout to copy


AcceptBuilder = Callable[[ChallengeContext], PaymentRequirements | None]
ExtensionBuilder = Callable[[ChallengeContext], dict[str, Any] | None]
# scheme name -> its requirements builder, in the order offered after `exact`.
ACCEPTS: dict[str, AcceptBuilder] = {}
# extension key (the x402 `extensions` member) -> its declaration builder.
EXTENSIONS: dict[str, ExtensionBuilder] = {}


def accepts_register(scheme: str, builder: AcceptBuilder) -> None:
    ACCEPTS[scheme] = builder


def extension_register(name: str, builder: ExtensionBuilder) -> None:
    EXTENSIONS[name] = builder


def x402_schemes() -> list[str]:
    """Every x402 scheme this service can offer (a given SKU's 402 may offer fewer)."""
    return ["exact", *ACCEPTS]


def x402_extensions() -> list[str]:
    """Every x402 extension a 402 of this service may declare."""
    return list(EXTENSIONS)


@dataclass(frozen=True)
class Challenge:
    sku: str
    price_atomic: int
    resource: ResourceInfo
    v2: PaymentRequirements  # the `exact` requirements (what v2 `exact` proofs are checked against)
    v1: PaymentRequirementsV1
    # Every version 2 scheme offered, `exact` first; and the extensions declared.
    accepts: tuple[PaymentRequirements, ...] = ()
    extensions: dict[str, Any] = field(default_factory=dict)

    def offered(self, scheme: str) -> PaymentRequirements | None:
        """The requirements offered for this scheme, if it is offered."""
        for requirements in self.accepts or (self.v2,):
            if requirements.scheme == scheme:
                return requirements
        return None


def exact_requirements(price_atomic: int) -> PaymentRequirements:
    """The `exact` offer at this price, which the other schemes' offers are built from (the
    voucher fast path builds its channel offer from it too)."""
    return PaymentRequirements(
        scheme="exact",
        network=settings.X402_NETWORK,
        asset=settings.USDC_ADDRESS,
        amount=str(price_atomic),
        pay_to=settings.TREASURY_ADDRESS,
        max_timeout_seconds=settings.X402_MAX_TIMEOUT_SECONDS,
        extra={"name": settings.USDC_EIP712_NAME, "version": settings.USDC_EIP712_VERSION},
    )


def challenge_build(*, sku: str, description: str, price_atomic: int, resource_url: str) -> Challenge:
    exact = exact_requirements(price_atomic)
    extra = dict(exact.extra or {})
    amount = exact.amount
    context = ChallengeContext(
        sku=sku, description=description, price_atomic=price_atomic, resource_url=resource_url, exact=exact
    )
    accepts = [exact]
    for builder in ACCEPTS.values():
        offered = builder(context)
        if offered is not None:
            accepts.append(offered)
    extensions: dict[str, Any] = {}
    for name, declare in EXTENSIONS.items():
        declaration = declare(context)
        if declaration is not None:
            extensions[name] = declaration
    return Challenge(
        sku=sku,
        price_atomic=price_atomic,
        resource=ResourceInfo(url=resource_url, description=description, mime_type=MIME_JSON),
        v2=exact,
        accepts=tuple(accepts),
        extensions=extensions,
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
    return PaymentRequired(
        x402_version=2,
        error=error,
        resource=challenge.resource,
        accepts=list(challenge.accepts or (challenge.v2,)),
        extensions=challenge.extensions or None,
    )


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
