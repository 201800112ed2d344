"""HTTP face of the self-hosted facilitator: /verify, /settle, /supported (x402 facilitator
protocol: JSON bodies {x402Version, paymentPayload, paymentRequirements})."""

from __future__ import annotations

import hmac
import logging
from typing import Any, Literal

from django.conf import settings
from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from x402 import x402FacilitatorSync
from x402.mechanisms.evm.types import UptoPermit2Payload
from x402.schemas import PaymentPayload, PaymentPayloadV1, PaymentRequirements, PaymentRequirementsV1
from x402.schemas.helpers import parse_payment_payload, parse_payment_requirements

from a2a_service.core import schemas as s
from a2a_service.core.errors import Forbidden, ProductUnavailable, RequestValidationError, Unauthorized
from a2a_service.core.inputs import parse_body
from a2a_service.core.views import ApiView
from billing.facilitator.service import ChainUnreachable, facilitator_get, hosted_settle, hosted_verify

logger = logging.getLogger(__name__)


class FacilitatorRequest(BaseModel):
    x402Version: Literal[1, 2]
    paymentPayload: dict[str, Any]
    paymentRequirements: dict[str, Any]


class VerifyOut(BaseModel):
    isValid: bool
    invalidReason: str | None = None
    invalidMessage: str | None = None
    payer: str | None = None


class SettleOut(BaseModel):
    success: bool
    errorReason: str | None = None
    errorMessage: str | None = None
    payer: str | None = None
    transaction: str = Field(description="transaction hash; empty when nothing was settled")
    network: str
    amount: str | None = Field(default=None, description="`upto`: the atomic amount settled")


class SupportedKindOut(BaseModel):
    x402Version: int
    scheme: str
    network: str
    extra: dict[str, Any] | None = None


class SupportedOut(BaseModel):
    kinds: list[SupportedKindOut]
    extensions: list[str]
    signers: dict[str, list[str]]


def _facilitator() -> x402FacilitatorSync:
    facilitator = facilitator_get()
    if facilitator is None:
        raise ProductUnavailable(
            "this deployment hosts no facilitator (FACILITATOR_PRIVATE_KEY is not set)",
            extra={"sku": None, "charged": False},
        )
    return facilitator


def _parse(
    request: Request,
) -> tuple[PaymentPayload | PaymentPayloadV1, PaymentRequirements | PaymentRequirementsV1]:
    body = parse_body(request, FacilitatorRequest)
    try:
        payload = parse_payment_payload({"x402Version": body.x402Version, **body.paymentPayload})
        requirements = parse_payment_requirements(body.x402Version, body.paymentRequirements)
    except (PydanticValidationError, ValueError, TypeError, KeyError) as exc:
        raise RequestValidationError.single(
            ["body"], f"not an x402 payment: {exc}"[:300], "x402_invalid"
        ) from exc
    return payload, requirements


NOT_SERVED = "invalid_exact_evm_payload_recipient_mismatch"


def _not_served(requirements: Any) -> str | None:
    """This facilitator pays gas only for payments to this service: its treasury, its token.
    Anyone else's authorization is refused, so the gas key cannot be spent by strangers."""
    pay_to = getattr(requirements, "pay_to", "") or ""
    asset = getattr(requirements, "asset", "") or ""
    if pay_to.lower() != settings.TREASURY_ADDRESS.lower():
        return "this facilitator settles only payments to this service's treasury"
    if asset.lower() != settings.USDC_ADDRESS.lower():
        return "this facilitator settles only this service's USDC"
    return None


def _settle_caller_check(request: Request) -> None:
    """/settle spends the gas key: only the service itself may call it (a shared secret),
    and with no secret configured nobody may over HTTP (settlement then runs in process)."""
    secret = settings.FACILITATOR_SHARED_SECRET
    sent = request.headers.get("Authorization", "")
    if not secret:
        raise Forbidden(
            "this facilitator settles only the service's own payments, in process; /settle is not public",
            extra={"verify": "/api/a2a/facilitator/verify"},
        )
    if not hmac.compare_digest(sent.encode(), f"Bearer {secret}".encode()):
        raise Unauthorized("settle needs the facilitator's shared secret (Authorization: Bearer …)")


def _not_claimed(payload: Any, requirements: Any) -> str | None:
    """Only a payment this service claimed (a Payment row waiting for settlement), for at
    least the cheapest price on sale: nobody can have the gas key pay for value-0 or
    unsolicited transfers to the treasury."""
    from billing.models import Payment
    from catalog.models import Sku

    if getattr(requirements, "scheme", "") == "upto":
        return _upto_not_claimed(payload, requirements)
    if getattr(requirements, "scheme", "") == "batch-settlement":
        # Payment channels settle no sale per call: a deposit into a channel to the treasury,
        # or the service's own claims, sweeps and refunds (signed by its receiver authorizer).
        # The caller holds the shared secret, and _not_served bound payTo and asset.
        return None
    auth = payload.payload.get("authorization") if isinstance(payload.payload, dict) else None
    if not isinstance(auth, dict):
        return "not an EIP-3009 authorization"
    try:
        value = int(auth.get("value", "0"))
    except (TypeError, ValueError):
        return "the authorization's value is not a number"
    cheapest = Sku.objects.live().order_by("price_atomic").values_list("price_atomic", flat=True).first()
    if value <= 0 or (cheapest is not None and value < cheapest):
        return "the amount is below the cheapest price on sale"
    claimed = Payment.objects.filter(
        payer=str(auth.get("from", "")).lower(),
        nonce=str(auth.get("nonce", "")).lower(),
        amount_atomic=value,
        state__in=(Payment.State.CLAIMED, Payment.State.PENDING),
    ).exists()
    return None if claimed else "this facilitator settles only payments the service has claimed for a sale"


def _upto_not_claimed(payload: Any, requirements: Any) -> str | None:
    """An `upto` settle: the service metered its claim (payer, Permit2 nonce) to exactly the
    amount asked (billing/rails/upto.py), and a zero is never sent."""
    from billing.models import Payment

    try:
        auth = UptoPermit2Payload.from_dict(payload.payload).permit2_authorization
        payer, nonce = auth.from_address.lower(), f"0x{int(auth.nonce):064x}"
        amount = int(requirements.amount)
    except (KeyError, TypeError, ValueError, AttributeError):
        return "not a Permit2 upto authorization"
    claimed = Payment.objects.filter(
        scheme="upto",
        payer=payer,
        nonce=nonce,
        amount_atomic=amount,
        state__in=(Payment.State.CLAIMED, Payment.State.PENDING),
    ).exists()
    if amount > 0 and claimed:
        return None
    return "this facilitator settles only payments the service has claimed for a sale"


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


UNAVAILABLE = {503: s.ProductUnavailableOut}
# Retry-After when the chain's RPC did not answer a verify.
CHAIN_RETRY_SECONDS = 5


class FacilitatorSupportedView(ApiView):
    @extend_schema(
        tags=["x402"],
        summary="Facilitator: supported payment kinds",
        operation_id="facilitator_supported",
        responses={200: SupportedOut, **UNAVAILABLE},
    )
    def get(self, request: Request) -> Response:
        return Response(_dump(_facilitator().get_supported()))


class FacilitatorVerifyView(ApiView):
    @extend_schema(
        tags=["x402"],
        summary="Facilitator: verify a payment",
        operation_id="facilitator_verify",
        request=FacilitatorRequest,
        responses={200: VerifyOut, 422: s.HTTPValidationError, **UNAVAILABLE},
    )
    def post(self, request: Request) -> Response:
        _facilitator()  # 503 where this deployment hosts none
        payload, requirements = _parse(request)
        refused = _not_served(requirements)
        if refused:
            return Response(_dump(VerifyOut(isValid=False, invalidReason=NOT_SERVED, invalidMessage=refused)))
        try:
            result = hosted_verify(payload, requirements)
        except ChainUnreachable as exc:
            # Not the payment's fault: the caller asks again (the service's own client answers
            # its agent 503 with Retry-After and claims nothing).
            raise ProductUnavailable(
                f"the payment could not be checked on chain: {exc}"[:300],
                extra={"sku": None, "charged": False, "retry_after": CHAIN_RETRY_SECONDS},
                headers={"Retry-After": str(CHAIN_RETRY_SECONDS)},
            ) from exc
        except Exception as exc:  # unsupported scheme/network, malformed scheme payload
            logger.info("facilitator verify refused: %s", exc)
            return Response(
                _dump(VerifyOut(isValid=False, invalidReason=_reason(exc), invalidMessage=str(exc)[:300]))
            )
        return Response(_dump(result))


class FacilitatorSettleView(ApiView):
    @extend_schema(
        tags=["x402"],
        summary="Facilitator: settle a payment on chain (internal: the service's own claimed payments)",
        description="Spends the facilitator's gas key, so it answers only the service itself: "
        "`Authorization: Bearer <FACILITATOR_SHARED_SECRET>` (403 when no secret is configured, 401 when it "
        "does not match), and settles only a payment the service has claimed, for at least the cheapest "
        "price on sale. Agents check a payment with /verify.",
        operation_id="facilitator_settle",
        request=FacilitatorRequest,
        responses={
            200: SettleOut,
            401: s.ErrorOut,
            403: s.ErrorOut,
            422: s.HTTPValidationError,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request) -> Response:
        _settle_caller_check(request)
        _facilitator()
        payload, requirements = _parse(request)
        refused = _not_served(requirements) or _not_claimed(payload, requirements)
        if refused:
            return Response(
                _dump(
                    SettleOut(
                        success=False,
                        errorReason=NOT_SERVED,
                        errorMessage=refused,
                        transaction="",
                        network=str(getattr(requirements, "network", "")),
                    )
                )
            )
        try:
            result = hosted_settle(payload, requirements)
        except ChainUnreachable as exc:
            # Nothing was broadcast: the service's client releases its claim on this reason.
            return Response(
                _dump(
                    SettleOut(
                        success=False,
                        errorReason="facilitator_unreachable",
                        errorMessage=str(exc)[:300],
                        transaction="",
                        network=str(getattr(requirements, "network", "")),
                    )
                )
            )
        except Exception as exc:
            logger.warning("facilitator settle failed: %s", exc)
            network = getattr(requirements, "network", "")
            return Response(
                _dump(
                    SettleOut(
                        success=False,
                        errorReason=_reason(exc),
                        errorMessage=str(exc)[:300],
                        transaction="",
                        network=str(network),
                    )
                )
            )
        # hosted_settle names a transaction this facilitator replaced while waiting: the caller
        # records the new one.
        return Response(_dump(result))


def _reason(exc: Exception) -> str:
    name = type(exc).__name__
    if name == "SchemeNotFoundError":
        return "unsupported_scheme"
    return "invalid_payload" if isinstance(exc, ValueError | KeyError | TypeError) else "unexpected_error"
