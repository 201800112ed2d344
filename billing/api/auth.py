"""X-API-Key authentication for the credit route."""

from __future__ import annotations

from rest_framework.request import Request

from a2a_service.core.errors import Unauthorized
from billing.credits import api_key_account as account_for_key
from billing.models import Account

REGISTER_HINT = {
    "register_endpoint": "/api/a2a/account/register",
    "header": "X-API-Key",
    "instructions": 'POST /api/a2a/account/register with {"wallet_address": "0x..."}: it answers 401 with a '
    "challenge; sign its message with the wallet and POST again with nonce and signature to get an API key. "
    "Deposit USDC to the treasury (see /api/a2a/account/topup-info), then send the key in the X-API-Key header.",
}


def api_key_account(request: Request) -> Account:
    """The account behind the request's X-API-Key, or 401 saying how to get one."""
    key = request.headers.get("X-API-Key", "").strip()
    if not key:
        raise Unauthorized("missing X-API-Key header", extra=REGISTER_HINT)
    account = account_for_key(key=key)
    if account is None:
        raise Unauthorized("unknown or revoked API key", extra=REGISTER_HINT)
    return account
