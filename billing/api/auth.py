"""X-API-Key authentication for the credit route."""

from __future__ import annotations

from rest_framework.request import Request

from billing.front import key_account
from billing.front.schemes import REGISTER_HINT
from billing.models import Account

__all__ = ["REGISTER_HINT", "api_key_account"]


def api_key_account(request: Request) -> Account:
    """The account behind the request's X-API-Key, or 401 saying how to get one."""
    return key_account(str(request.headers.get("X-API-Key", "")))
