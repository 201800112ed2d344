"""The payment proof an agent sends back: decoded, then checked here against what we
asked for before anything is claimed or sent to the facilitator."""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic import ValidationError
from x402.mechanisms.evm.constants import (
    ERR_AUTHORIZATION_VALUE_MISMATCH,
    ERR_INVALID_SIGNATURE,
    ERR_NETWORK_MISMATCH,
    ERR_RECIPIENT_MISMATCH,
    ERR_UNSUPPORTED_SCHEME,
    ERR_VALID_AFTER_FUTURE,
    ERR_VALID_BEFORE_EXPIRED,
)
from x402.mechanisms.evm.eip712 import hash_eip3009_authorization
from x402.mechanisms.evm.types import ExactEIP3009Payload
from x402.mechanisms.evm.verify import verify_eoa_signature
from x402.schemas import PaymentPayload, PaymentRequirements
from x402.schemas.v1 import PaymentPayloadV1, PaymentRequirementsV1

from a2a_service.core.observe import paid_call_observe
from a2a_service.core.parsers import JsonTooDeep, JsonTooLarge, json_loads_bounded
from billing.x402.challenge import Challenge

INVALID_PAYLOAD = "invalid_payload"
ASSET_MISMATCH = "invalid_exact_evm_payload_asset_mismatch"
PROOF_ALREADY_USED = "invalid_exact_evm_nonce_already_used"
INVALID_VALID_BEFORE = "invalid_exact_evm_payload_authorization_valid_before"
# Clients sign validBefore = now + maxTimeoutSeconds by their own clock: allow for clock skew.
VALID_BEFORE_SLACK_SECONDS = 300
# A proof must stay valid long enough to be settled after the product runs.
SETTLE_MARGIN_SECONDS = 6
ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
NONCE = re.compile(r"0x[0-9a-fA-F]{64}")


class PaymentRejected(Exception):
    """An x402 payment refused with a facilitator-style reason. The x402 route answers it
    with 402 and its payment requirements: `challenge` when the refusal was checked against
    one other than the route's (a proof that already paid, checked against what it paid)."""

    # What the paid call came to (billing/paid_call.py counts it by this).
    paid_call_outcome = "refused"

    def __init__(self, reason: str, message: str, *, challenge: Challenge | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.challenge = challenge


@dataclass(frozen=True)
class Proof:
    payload: PaymentPayload | PaymentPayloadV1
    requirements: PaymentRequirements | PaymentRequirementsV1
    payer: str
    nonce: str
    version: int
    # The EIP-712 signature was checked here (an EOA's 65 bytes). Other signatures (smart
    # wallets) are checked by the facilitator, before anything is claimed in the payer's name.
    signature_checked: bool = True
    valid_before: int | None = None


def proof_decode(raw: str) -> PaymentPayload | PaymentPayloadV1:
    """The payload of a payment header. Bounded before any decoding: a header longer than
    PAYMENT_HEADER_MAX_BYTES, or JSON nested deeper than API_JSON_MAX_DEPTH, is refused as
    invalid_payload (a deep one would otherwise recurse in the JSON decoder). A refusal is a
    refused x402 call (counted here: it never reaches paid_call)."""
    try:
        return _decode(raw)
    except PaymentRejected:
        paid_call_observe(rail="x402", outcome="refused")
        raise


def proof_peek(raw: object, *, in_metadata: bool) -> PaymentPayload | PaymentPayloadV1 | None:
    """The payload, or None where proof_decode would refuse it: for a look at the payment
    before its rail decodes it (the front's payment identifier). Not counted: the rail's own
    decoding counts the refusal once."""
    try:
        return _decode_object(raw) if in_metadata else _decode(str(raw))
    except PaymentRejected:
        return None


def _decode(raw: str) -> PaymentPayload | PaymentPayloadV1:
    limit = settings.PAYMENT_HEADER_MAX_BYTES
    if len(raw) > limit:
        raise PaymentRejected(INVALID_PAYLOAD, f"the payment header is longer than {limit} bytes")
    try:
        text = base64.b64decode(raw.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise PaymentRejected(INVALID_PAYLOAD, "the payment header is not valid base64") from None
    try:
        data = json_loads_bounded(text, max_bytes=limit)
    except JsonTooDeep as exc:
        raise PaymentRejected(INVALID_PAYLOAD, f"the payment header's {exc}") from None
    except ValueError:  # JSONDecodeError
        raise PaymentRejected(INVALID_PAYLOAD, "the payment header does not hold valid JSON") from None
    if not isinstance(data, dict):
        raise PaymentRejected(INVALID_PAYLOAD, "the payment header must hold a JSON object")
    return _payload(data)


def proof_decode_object(raw: object) -> PaymentPayload | PaymentPayloadV1:
    """The payload a protocol carries in its metadata (MCP `_meta["x402/payment"]`, A2A
    `x402.payment.payload`): an object (as x402's clients send it) or its JSON text, bounded
    like the payment header (longer than PAYMENT_HEADER_MAX_BYTES or nested deeper than
    API_JSON_MAX_DEPTH is invalid_payload, refused before decoding). Counted like proof_decode."""
    try:
        return _decode_object(raw)
    except PaymentRejected:
        paid_call_observe(rail="x402", outcome="refused")
        raise


def _decode_object(raw: object) -> PaymentPayload | PaymentPayloadV1:
    limit = settings.PAYMENT_HEADER_MAX_BYTES
    # The object form was decoded by the transport (its own depth limit); as text it is measured
    # and bounded the same way as the text form.
    text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
    try:
        data = json_loads_bounded(text, max_bytes=limit)
    except JsonTooLarge:
        raise PaymentRejected(INVALID_PAYLOAD, f"the payment is longer than {limit} bytes") from None
    except JsonTooDeep as exc:
        raise PaymentRejected(INVALID_PAYLOAD, f"the payment is {exc}") from None
    except ValueError:
        raise PaymentRejected(INVALID_PAYLOAD, "the payment is not valid JSON") from None
    if not isinstance(data, dict):
        raise PaymentRejected(INVALID_PAYLOAD, "the payment must be an x402 PaymentPayload object")
    return _payload(data)


def _payload(data: dict[str, Any]) -> PaymentPayload | PaymentPayloadV1:
    try:
        if data.get("x402Version") == 1:
            return PaymentPayloadV1.model_validate(data)
        return PaymentPayload.model_validate(data)
    except ValidationError as exc:
        raise PaymentRejected(
            INVALID_PAYLOAD, f"not an x402 payment payload: {exc.errors()[0]['msg']}"
        ) from None


def _same_address(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def proof_payer_nonce(payload: PaymentPayload | PaymentPayloadV1) -> tuple[str, str] | None:
    """The (payer, nonce) a payload claims, if it has that shape; nothing is checked."""
    auth = payload.payload.get("authorization") if isinstance(payload.payload, dict) else None
    if not isinstance(auth, dict):
        return None
    payer, nonce = auth.get("from"), auth.get("nonce")
    if (
        isinstance(payer, str)
        and isinstance(nonce, str)
        and ADDRESS.fullmatch(payer)
        and NONCE.fullmatch(nonce)
    ):
        return payer.lower(), nonce.lower()
    return None


def proof_check(
    payload: PaymentPayload | PaymentPayloadV1,
    challenge: Challenge,
    *,
    now: int | None = None,
    check_window: bool = True,
) -> Proof:
    """Scheme, network, asset, payTo, amount, validity window and the EIP-712 signature on
    the USDC domain. Raises PaymentRejected with a facilitator-style reason.

    check_window=False is for collecting a payment that was already settled: its
    authorization has done its work, and may have expired since."""
    if isinstance(payload, PaymentPayloadV1):
        requirements: PaymentRequirements | PaymentRequirementsV1 = challenge.v1
        scheme, network = payload.scheme, payload.network
        expected_network = settings.X402_NETWORK_V1_NAME
        if scheme != "exact":
            raise PaymentRejected(ERR_UNSUPPORTED_SCHEME, f"scheme {scheme!r} is not accepted; use 'exact'")
        if network != expected_network:
            raise PaymentRejected(
                ERR_NETWORK_MISMATCH, f"network {network!r} is not accepted; use {expected_network!r}"
            )
    else:
        requirements = challenge.v2
        accepted = payload.accepted
        if accepted.scheme != "exact":
            raise PaymentRejected(
                ERR_UNSUPPORTED_SCHEME, f"scheme {accepted.scheme!r} is not accepted; use 'exact'"
            )
        if accepted.network != settings.X402_NETWORK:
            raise PaymentRejected(
                ERR_NETWORK_MISMATCH,
                f"network {accepted.network!r} is not accepted; use {settings.X402_NETWORK!r}",
            )
        if not _same_address(accepted.asset, settings.USDC_ADDRESS):
            raise PaymentRejected(ASSET_MISMATCH, "the payment is not in the requested asset")
        if not _same_address(accepted.pay_to, settings.TREASURY_ADDRESS):
            raise PaymentRejected(ERR_RECIPIENT_MISMATCH, "the payment is not to this service's treasury")
        if accepted.amount != str(challenge.price_atomic):
            raise PaymentRejected(
                ERR_AUTHORIZATION_VALUE_MISMATCH,
                f"the price is {challenge.price_atomic} atomic USDC, the payment accepted {accepted.amount}",
            )

    try:
        evm = ExactEIP3009Payload.from_dict(payload.payload)
        auth = evm.authorization
        value, valid_after, valid_before = int(auth.value), int(auth.valid_after), int(auth.valid_before)
        signature = bytes.fromhex((evm.signature or "").removeprefix("0x"))
        # The payer and nonce become the claim's key: they must have the shapes EIP-3009 gives them.
        if not (
            ADDRESS.fullmatch(auth.from_address)
            and ADDRESS.fullmatch(auth.to)
            and NONCE.fullmatch(auth.nonce)
        ):
            raise ValueError("from/to must be 0x addresses and nonce 32 bytes of hex")
        if not (0 <= value < 2**256 and 0 <= valid_after < 2**256 and 0 <= valid_before < 2**256):
            raise ValueError("value and validity window must be uint256")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PaymentRejected(INVALID_PAYLOAD, f"not an EIP-3009 authorization: {exc}") from None

    if not _same_address(auth.to, settings.TREASURY_ADDRESS):
        raise PaymentRejected(
            ERR_RECIPIENT_MISMATCH, "the authorization does not pay this service's treasury"
        )
    if value != challenge.price_atomic:
        raise PaymentRejected(
            ERR_AUTHORIZATION_VALUE_MISMATCH,
            f"the price is {challenge.price_atomic} atomic USDC, the authorization moves {value}",
        )
    now = int(time.time()) if now is None else now
    if check_window and valid_before < now + SETTLE_MARGIN_SECONDS:
        raise PaymentRejected(ERR_VALID_BEFORE_EXPIRED, "the authorization has expired (validBefore)")
    if check_window and valid_after > now:
        raise PaymentRejected(ERR_VALID_AFTER_FUTURE, "the authorization is not valid yet (validAfter)")
    if check_window and valid_before > now + settings.X402_MAX_TIMEOUT_SECONDS + VALID_BEFORE_SLACK_SECONDS:
        # The challenge's maxTimeoutSeconds bounds how long a claim can stay undecided: an
        # authorization that stays valid longer could keep a pending payment open for ever.
        raise PaymentRejected(
            INVALID_VALID_BEFORE,
            f"validBefore is more than maxTimeoutSeconds ({settings.X402_MAX_TIMEOUT_SECONDS} s) away; "
            "sign an authorization that expires sooner",
        )
    if len(signature) == 65:
        digest = hash_eip3009_authorization(
            auth,
            settings.CHAIN_ID,
            settings.USDC_ADDRESS,
            settings.USDC_EIP712_NAME,
            settings.USDC_EIP712_VERSION,
        )
        try:
            valid = verify_eoa_signature(digest, signature, auth.from_address)
        except ValueError:
            valid = False
        if not valid:
            raise PaymentRejected(ERR_INVALID_SIGNATURE, "the EIP-712 signature does not match the payer")
    elif not signature:
        raise PaymentRejected(ERR_INVALID_SIGNATURE, "the authorization is not signed")
    # Other lengths are smart-wallet signatures (EIP-1271 / ERC-6492): the facilitator checks them on chain.
    return Proof(
        payload=payload,
        requirements=requirements,
        payer=auth.from_address.lower(),
        nonce=auth.nonce.lower(),
        version=payload.x402_version,
        signature_checked=len(signature) == 65,
        valid_before=valid_before,
    )
