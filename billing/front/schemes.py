"""The payment schemes the front knows: what in a call's material says it pays this way, and
the rail that material builds. A table: billing registers x402 and credits here; an app one
layer up registers its own (sessions_app: the session token; agents: the managed MCP pack),
so a new rail or scheme is one registration and no surface changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from x402.http.constants import PAYMENT_SIGNATURE_HEADER, X_PAYMENT_HEADER
from x402.schemas import PaymentPayload
from x402.schemas.v1 import PaymentPayloadV1

from a2a_service.core.errors import RequestValidationError, Unauthorized
from billing.credits import api_key_account
from billing.front.types import Brought, Sale
from billing.models import Account
from billing.rails.base import Rail
from billing.rails.channel import channel_payment
from billing.rails.credits import CreditRail, Idempotency
from billing.rails.upto import upto_payment
from billing.rails.x402 import x402_payment
from billing.x402.proof import proof_decode, proof_decode_object

API_KEY = "X-API-Key"
IDEMPOTENCY_KEY = "Idempotency-Key"
IDEMPOTENCY_KEY_MAX = 200
REGISTER_HINT = {
    "register_endpoint": "/api/a2a/account/register",
    "header": "X-API-Key",
    "instructions": 'POST /api/a2a/account/register with {"wallet_address": "0x..."}: it answers 401 with a '
    "challenge; sign its message with the wallet and POST again with nonce and signature to get an API key. "
    "Deposit USDC to the treasury (see /api/a2a/account/topup-info), then send the key in the X-API-Key header.",
}


class Scheme(Protocol):
    name: str

    def brought(self, brought: Brought) -> bool:
        """Whether the material carries a payment of this scheme."""
        ...

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        """Its rail for this sale; raises the refusal (ApiError, PaymentRejected) if it cannot pay."""
        ...


SCHEMES: dict[str, Scheme] = {}


def scheme_register(scheme: Scheme) -> None:
    SCHEMES[scheme.name] = scheme


def key_account(key: str) -> Account:
    """The account behind an API key, or 401 saying how to get one."""
    key = key.strip()
    if not key:
        raise Unauthorized("missing X-API-Key header", extra=REGISTER_HINT)
    account = api_key_account(key=key)
    if account is None:
        raise Unauthorized("unknown or revoked API key", extra=REGISTER_HINT)
    return account


def key_brought(brought: Brought) -> bool:
    return bool(brought.header(API_KEY).strip())


# An x402 version 2 proof's `accepted.scheme` -> the rail that checks and pays it. `exact` is
# billing/rails/x402.py's; batch-settlement and upto register theirs. Version 1 proofs are
# `exact` only (the other schemes are version 2).
X402Rail = Callable[[PaymentPayload, Sale], Rail]
X402_RAILS: dict[str, X402Rail] = {}


def x402_rail_register(scheme: str, rail: X402Rail) -> None:
    X402_RAILS[scheme] = rail


def _exact_rail(payload: PaymentPayload | PaymentPayloadV1, sale: Sale) -> Rail:
    return x402_payment(payload=payload, offer=sale.offer, resource_url=sale.resource_url)


def _channel_rail(payload: PaymentPayload, sale: Sale) -> Rail:
    return channel_payment(payload=payload, offer=sale.offer, resource_url=sale.resource_url)


x402_rail_register("batch-settlement", _channel_rail)


class X402Scheme:
    name = "x402"

    def _raw(self, brought: Brought) -> object | None:
        if brought.proof_in == "metadata":
            return brought.x402_payload
        return brought.header(PAYMENT_SIGNATURE_HEADER) or brought.header(X_PAYMENT_HEADER) or None

    def brought(self, brought: Brought) -> bool:
        return self._raw(brought) is not None

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        raw = self._raw(brought)
        payload = proof_decode(str(raw)) if brought.proof_in == "headers" else proof_decode_object(raw)
        if isinstance(payload, PaymentPayload):
            rail = X402_RAILS.get(payload.accepted.scheme)
            if rail is not None:
                return rail(payload, sale)
        # exact, and any scheme not offered (proof_check refuses it with the scheme's reason)
        return _exact_rail(payload, sale)


class CreditScheme:
    name = "credits"

    def brought(self, brought: Brought) -> bool:
        return key_brought(brought)

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        account = key_account(brought.header(API_KEY))
        return CreditRail(account=account, reference=sale.reference, idempotency=_idempotency(brought, sale))


def _idempotency(brought: Brought, sale: Sale) -> Idempotency | None:
    key = brought.header(IDEMPOTENCY_KEY).strip()
    if not key:
        return None
    if len(key) > IDEMPOTENCY_KEY_MAX:
        # Not truncated: two long keys sharing their first characters must not be one key.
        raise RequestValidationError.single(
            ["header", IDEMPOTENCY_KEY],
            f"String should have at most {IDEMPOTENCY_KEY_MAX} characters",
            "string_too_long",
        )
    return Idempotency(key=key, fingerprint=sale.fingerprint, path=sale.idempotency_path or sale.reference)


def _upto_rail(payload: PaymentPayload, sale: Sale) -> Rail:
    return upto_payment(payload=payload, offer=sale.offer, resource_url=sale.resource_url)


scheme_register(X402Scheme())
scheme_register(CreditScheme())
x402_rail_register("upto", _upto_rail)
