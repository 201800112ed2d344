"""The a2a-x402 extension's wire names, v0.2 (google-agentic-commerce/a2a-x402, spec/v0.2/spec.md):
its URI, the metadata keys its messages carry and the payment states. Plain constants with no
Django import, so a client (a2a_service/scripts/demos/a2a.py) reads them without the server's settings;
agents/a2a/extension.py adds the error codes and how our refusals map to them."""

from __future__ import annotations

X402_EXTENSION_URI = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2"
X402_EXTENSION_DESCRIPTION = (
    "Paid skills accept on-chain USDC payments with the x402 protocol (standalone flow): an unpaid "
    "call answers an input-required task carrying x402.payment.required; send the signed x402 "
    "PaymentPayload in x402.payment.payload on the same taskId. An X-API-Key header pays from "
    "prepaid credits instead."
)
# The extension is activated by this header (the spec's name; a2a-sdk 1.x sends A2A-Extensions).
ACTIVATION_HEADERS = ("X-A2A-Extensions", "A2A-Extensions")

# --- message metadata keys -------------------------------------------------------------------
STATUS = "x402.payment.status"
REQUIRED = "x402.payment.required"
PAYLOAD = "x402.payment.payload"
RECEIPTS = "x402.payment.receipts"
ERROR = "x402.payment.error"

# --- x402.payment.status values ---------------------------------------------------------------
PAYMENT_REQUIRED = "payment-required"
PAYMENT_SUBMITTED = "payment-submitted"
PAYMENT_REJECTED = "payment-rejected"
PAYMENT_VERIFIED = "payment-verified"
PAYMENT_COMPLETED = "payment-completed"
PAYMENT_FAILED = "payment-failed"
