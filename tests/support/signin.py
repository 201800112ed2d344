"""Signing in the way the x402 SDK's clients do (x402.extensions.sign_in_with_x, unmodified): the
client hook reads a 402's `sign-in-with-x` declaration, signs it with the wallet (EIP-191, an
eth_account key) and answers the SIGN-IN-WITH-X header to send the request again with."""

from __future__ import annotations

import asyncio
from typing import Any

from eth_account.signers.local import LocalAccount
from x402.extensions.sign_in_with_x import (
    SIGN_IN_WITH_X,
    create_siwx_client_hook,
    create_siwx_payload,
    encode_siwx_header,
)
from x402.http.utils import decode_payment_required_header
from x402.schemas import PaymentRequired
from x402.schemas.hooks import PaymentRequiredContext, PaymentRequiredHeadersResult

BASE = "http://testserver"


def required_of(response: Any) -> PaymentRequired:
    """The x402 version 2 PaymentRequired of a 402 (its PAYMENT-REQUIRED header)."""
    required = decode_payment_required_header(response["PAYMENT-REQUIRED"])
    assert isinstance(required, PaymentRequired)
    return required


def signin_headers(wallet: LocalAccount, required: PaymentRequired, url: str) -> dict[str, str]:
    """What the SDK's client hook sends after this 402 (url: the request's, as the client saw it)."""
    hook = create_siwx_client_hook(wallet)
    result = asyncio.run(hook(PaymentRequiredContext(payment_required=required, request_url=url)))
    assert isinstance(result, PaymentRequiredHeadersResult), "the SDK's hook declined to sign in"
    return {"HTTP_" + name.upper().replace("-", "_"): value for name, value in result.headers.items()}


def signin_value(wallet: LocalAccount, required: PaymentRequired, url: str) -> str:
    """The SIGN-IN-WITH-X value the SDK's client hook makes for this challenge, for a protocol
    that carries it elsewhere than in an HTTP header (MCP `_meta`, A2A message metadata)."""
    return signin_headers(wallet, required, url)["HTTP_SIGN_IN_WITH_X"]


def signin_info(required: PaymentRequired) -> dict[str, Any]:
    """The declaration's info with its chain chosen, as the client hook completes it."""
    declared = (required.extensions or {})[SIGN_IN_WITH_X]
    chain = declared["supportedChains"][0]
    return {**declared["info"], "chainId": chain["chainId"], "type": chain["type"]}


def signin_header_for(wallet: LocalAccount, info: dict[str, Any], url: str) -> dict[str, str]:
    """A message of our making (another domain, another path, an old one), signed by the SDK's
    client code: create_siwx_payload, encode_siwx_header."""
    payload = asyncio.run(create_siwx_payload(info, wallet, url))
    return {"HTTP_SIGN_IN_WITH_X": encode_siwx_header(payload)}


def required_but_nonce(header: str) -> tuple[dict[str, Any], str]:
    """A PAYMENT-REQUIRED header's content without its sign-in nonce, and the nonce: the unpaid
    402's fast path serves the stored challenge with a nonce of each response's own."""
    import base64
    import json

    required = json.loads(base64.b64decode(header))
    info = required.get("extensions", {}).get(SIGN_IN_WITH_X, {}).get("info", {})
    return required, str(info.pop("nonce", ""))


# The declaration's fields drawn for each 402 (the SDK's server extension names the same ones,
# SIWxResourceServerExtension.dynamic_info_fields).
DYNAMIC_INFO = ("nonce", "issuedAt", "expirationTime")


def required_static(required: PaymentRequired) -> dict[str, Any]:
    """A PaymentRequired without the sign-in fields drawn per response: two 402s for the same
    call compare equal."""
    dumped = required.model_dump(by_alias=True, exclude_none=True, mode="json")
    info = dumped.get("extensions", {}).get(SIGN_IN_WITH_X, {}).get("info", {})
    for name in DYNAMIC_INFO:
        info.pop(name, None)
    return dumped
