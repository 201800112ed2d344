"""The a2a-x402 extension, v0.2 (google-agentic-commerce/a2a-x402, spec/v0.2/spec.md): its URI,
the metadata keys its messages carry, the payment states and the error codes. Standalone flow
only: the requirements travel in the task's status message metadata, the signed payload in
the client's message metadata."""

from __future__ import annotations

from x402.mechanisms.evm.constants import (
    ERR_AUTHORIZATION_VALUE_MISMATCH,
    ERR_INSUFFICIENT_BALANCE,
    ERR_INVALID_SIGNATURE,
    ERR_NETWORK_MISMATCH,
    ERR_NONCE_ALREADY_USED,
    ERR_RECIPIENT_MISMATCH,
    ERR_UNSUPPORTED_SCHEME,
    ERR_VALID_AFTER_FUTURE,
    ERR_VALID_BEFORE_EXPIRED,
)

from agents.a2a.spec import (  # noqa: F401  (re-exported: the extension in one module)
    ACTIVATION_HEADERS,
    ERROR,
    PAYLOAD,
    PAYMENT_COMPLETED,
    PAYMENT_FAILED,
    PAYMENT_REJECTED,
    PAYMENT_REQUIRED,
    PAYMENT_SUBMITTED,
    PAYMENT_VERIFIED,
    RECEIPTS,
    REQUIRED,
    STATUS,
    X402_EXTENSION_DESCRIPTION,
    X402_EXTENSION_URI,
)
from billing.x402.proof import ASSET_MISMATCH, INVALID_PAYLOAD, INVALID_VALID_BEFORE

# --- x402.payment.error codes (spec section 9.1) ----------------------------------------------
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
INVALID_SIGNATURE = "INVALID_SIGNATURE"
EXPIRED_PAYMENT = "EXPIRED_PAYMENT"
DUPLICATE_NONCE = "DUPLICATE_NONCE"
NETWORK_MISMATCH = "NETWORK_MISMATCH"
INVALID_AMOUNT = "INVALID_AMOUNT"
SETTLEMENT_FAILED = "SETTLEMENT_FAILED"

# The facilitator-style reasons our x402 rail refuses with (billing/x402/proof.py and the
# facilitator's verify/settle), by the extension's code that names the same failure.
_REASON_CODES: dict[str, str] = {
    ERR_NONCE_ALREADY_USED: DUPLICATE_NONCE,
    ERR_INSUFFICIENT_BALANCE: INSUFFICIENT_FUNDS,
    ERR_INVALID_SIGNATURE: INVALID_SIGNATURE,
    # A payload that cannot be decoded cannot have its signature verified either.
    INVALID_PAYLOAD: INVALID_SIGNATURE,
    ERR_VALID_BEFORE_EXPIRED: EXPIRED_PAYMENT,
    ERR_VALID_AFTER_FUTURE: EXPIRED_PAYMENT,
    INVALID_VALID_BEFORE: EXPIRED_PAYMENT,
    ERR_NETWORK_MISMATCH: NETWORK_MISMATCH,
    ERR_UNSUPPORTED_SCHEME: NETWORK_MISMATCH,
    ERR_AUTHORIZATION_VALUE_MISMATCH: INVALID_AMOUNT,
    ERR_RECIPIENT_MISMATCH: INVALID_AMOUNT,
    ASSET_MISMATCH: INVALID_AMOUNT,
}


def error_code(reason: str) -> str:
    """The extension's error code for an x402 refusal reason; SETTLEMENT_FAILED for the rest
    (the spec's 'failed for a reason other than the above')."""
    code = _REASON_CODES.get(reason)
    if code is not None:
        return code
    if "insufficient" in reason:
        return INSUFFICIENT_FUNDS
    if "signature" in reason:
        return INVALID_SIGNATURE
    if "valid_before" in reason or "valid_after" in reason or "expired" in reason:
        return EXPIRED_PAYMENT
    if "network" in reason:
        return NETWORK_MISMATCH
    return SETTLEMENT_FAILED
