"""Whale tokens and the tier rate limit.

A whale token is a tier pass an account hands its sub-agents: `wt1.<payload>.<signature>`,
the payload base64url JSON {acct, tier, jti, iat, exp}, the signature HMAC-SHA256 of
`wt1.<payload>` under a key derived from SECRET_KEY (salted_hmac). A WhaleToken row per jti
makes it revocable (admin). Sent in X-Whale-Token it gives the account's tier rate limit on
every route; it pays for nothing (a paid route with only a token answers 402 with how to pay).

The rate limit (a2a_service/core/throttling.py) asks whale_client_rate for each request: with
a whale token, or an API key of an account that holds a tier now, the tier's
rate_limit_per_minute applies instead of the base rate, counted per account and caller
address. A forged, expired or revoked token is refused (401) wherever it is sent. The tier is
the account's at the time of the call (billing/tiers.py), not the one the token names: a tier
lost since (its deposits left the window) stops the higher limit, a higher tier applies at once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from a2a_service.core.errors import Unauthorized
from a2a_service.core.throttling import ClientRate
from billing.credits import api_key_account
from billing.models import Account, WhaleTier, WhaleToken
from billing.tiers import Standing, account_tier, tier_standing

TOKEN_HEADER = "X-Whale-Token"
TOKEN_VERSION = "wt1"
TOKEN_MAX_CHARS = 512  # an issued token is about 200 characters
SIGNING_SALT = "billing.whale.token"
RATE_SCOPE = "whale"
TOKEN_ENDPOINT = "/api/a2a/account/whale/token"


# --- refusals ---------------------------------------------------------------------------------
class WhaleTokenRefused(Unauthorized):
    """401 for a whale token that cannot be honoured: raised by the rate limiter, before any view."""

    code = "whale_token_invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(
            detail,
            # The shape of every 401 (UnauthorizedOut), plus where tokens come from.
            extra={
                "register_endpoint": "/api/a2a/account/register",
                "header": TOKEN_HEADER,
                "token_endpoint": TOKEN_ENDPOINT,
                "instructions": "the account's owner issues a new token with POST "
                f"{TOKEN_ENDPOINT} (X-API-Key); or send the request without {TOKEN_HEADER}",
            },
        )


class WhaleTokenExpired(WhaleTokenRefused):
    code = "whale_token_expired"


class WhaleTokenRevoked(WhaleTokenRefused):
    code = "whale_token_revoked"


class NoWhaleTier(Exception):
    """The account holds no tier: no token is issued."""

    def __init__(self, standing: Standing) -> None:
        super().__init__("no whale tier")
        self.standing = standing


class TooManyWhaleTokens(Exception):
    def __init__(self, active: int, next_expiry: datetime | None) -> None:
        super().__init__(f"{active} active whale tokens")
        self.active = active
        self.next_expiry = next_expiry


# --- the signed token -------------------------------------------------------------------------
@dataclass(frozen=True)
class Claims:
    account_id: int
    tier: str
    jti: str
    issued_at: int
    expires_at: int


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(signed: str) -> str:
    return _b64(salted_hmac(SIGNING_SALT, signed, algorithm="sha256").digest())


def token_encode(claims: Claims) -> str:
    payload = {
        "acct": claims.account_id,
        "tier": claims.tier,
        "jti": claims.jti,
        "iat": claims.issued_at,
        "exp": claims.expires_at,
    }
    signed = f"{TOKEN_VERSION}.{_b64(json.dumps(payload, separators=(',', ':')).encode())}"
    return f"{signed}.{_signature(signed)}"


def token_decode(token: str, *, now: float | None = None) -> Claims:
    """The claims of a token this service signed and that has not expired. Raises
    WhaleTokenRefused (forged, altered, malformed) or WhaleTokenExpired. Nothing is read
    from the database."""
    forged = WhaleTokenRefused(
        f"the {TOKEN_HEADER} is not a whale token this service signed (forged, altered or truncated)"
    )
    if len(token) > TOKEN_MAX_CHARS or not token.isascii():
        raise forged
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != TOKEN_VERSION:
        raise forged
    signed = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(_signature(signed), parts[2]):
        raise forged
    try:
        payload = json.loads(_unb64(parts[1]))
        claims = Claims(
            account_id=int(payload["acct"]),
            tier=str(payload["tier"]),
            jti=str(payload["jti"]),
            issued_at=int(payload["iat"]),
            expires_at=int(payload["exp"]),
        )
    except (ValueError, KeyError, TypeError):
        raise forged from None  # signed by us, so never expected; refused all the same
    if claims.expires_at <= (time.time() if now is None else now):
        expired = datetime.fromtimestamp(claims.expires_at, tz=UTC).isoformat()
        raise WhaleTokenExpired(f"this whale token expired at {expired}")
    return claims


# --- issue and revoke ---------------------------------------------------------------------------
@dataclass(frozen=True)
class IssuedToken:
    token: str
    row: WhaleToken
    tier: WhaleTier
    ttl_seconds: int


def whale_token_issue(*, account: Account, ttl_seconds: int | None = None, label: str = "") -> IssuedToken:
    """A new token for an account that holds a tier now. Raises NoWhaleTier, or
    TooManyWhaleTokens beyond WHALE_TOKENS_MAX_ACTIVE unexpired, unrevoked tokens."""
    ttl = ttl_seconds or settings.WHALE_TOKEN_DEFAULT_TTL_SECONDS
    standing = tier_standing(account_id=account.id)
    tier = standing.tier
    if tier is None:
        raise NoWhaleTier(standing)
    with transaction.atomic():
        # The account's row lock: two concurrent requests cannot both see room for one more.
        Account.objects.select_for_update().filter(pk=account.pk).first()
        now = timezone.now()
        active = WhaleToken.objects.filter(account=account, revoked_at__isnull=True, expires_at__gt=now)
        count = active.count()
        if count >= settings.WHALE_TOKENS_MAX_ACTIVE:
            first = active.order_by("expires_at").values_list("expires_at", flat=True).first()
            raise TooManyWhaleTokens(count, first)
        issued_at = int(now.timestamp())
        expires_at = issued_at + ttl
        row = WhaleToken.objects.create(
            jti=secrets.token_hex(16),
            account=account,
            tier=tier.name,
            label=label[:100],
            expires_at=datetime.fromtimestamp(expires_at, tz=UTC),
        )
    token = token_encode(
        Claims(account_id=account.id, tier=tier.name, jti=row.jti, issued_at=issued_at, expires_at=expires_at)
    )
    return IssuedToken(token=token, row=row, tier=tier, ttl_seconds=ttl)


def whale_token_revoke(*, token_ids: list[int]) -> int:
    """Revoke tokens (the admin's action); returns how many were still active."""
    n = WhaleToken.objects.filter(pk__in=token_ids, revoked_at__isnull=True).update(revoked_at=timezone.now())
    _CACHE.clear()  # this process forgets at once; others within WHALE_RATE_CACHE_SECONDS
    return n


# --- verification and the rate ------------------------------------------------------------------
T = TypeVar("T")


class _TtlCache:
    """Per process: what the rate limiter read about a credential, for WHALE_RATE_CACHE_SECONDS."""

    MAX_ENTRIES = 20_000

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str], load: Callable[[], T]) -> T:
        ttl = float(settings.WHALE_RATE_CACHE_SECONDS)
        if ttl <= 0:
            return load()
        now = time.monotonic()
        hit = self._data.get(key)
        if hit is not None and hit[0] > now:
            value: T = hit[1]
            return value
        value = load()
        with self._lock:
            if len(self._data) >= self.MAX_ENTRIES:
                self._data.clear()
            self._data[key] = (now + ttl, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_CACHE = _TtlCache()


def _token_row_state(jti: str, account_id: int) -> str:
    """ "ok", "revoked" (or unknown), or "held" (the account is held)."""
    row = WhaleToken.objects.filter(jti=jti, account_id=account_id).values_list(
        "revoked_at", "account__is_active"
    )
    found = row.first()
    if found is None or found[0] is not None:
        return "revoked"
    return "ok" if found[1] else "held"


def whale_token_account(token: str) -> int:
    """The account id of a valid token. Raises WhaleTokenRefused (401)."""
    claims = token_decode(token)
    state = _CACHE.get(("jti", claims.jti), lambda: _token_row_state(claims.jti, claims.account_id))
    if state == "revoked":
        raise WhaleTokenRevoked("this whale token was revoked")
    if state == "held":
        raise WhaleTokenRefused("the account of this whale token is held; its tokens are not honoured")
    return claims.account_id


def _key_account_id(key: str) -> int | None:
    account = api_key_account(key=key)
    return account.id if account is not None else None


def _rate_of(tier: WhaleTier | None) -> tuple[str, int] | None:
    return (tier.name, tier.rate_limit_per_minute) if tier is not None else None


def whale_client_rate(meta: Mapping[str, Any]) -> ClientRate | None:
    """The rate resolver billing registers with the rate limiter: the tier's rate for a
    request with a whale token or the API key of an account that holds a tier; None for
    everything else (the base rate). Raises WhaleTokenRefused for a token it cannot honour."""
    token = str(meta.get("HTTP_X_WHALE_TOKEN", "")).strip()
    if token:
        account_id: int | None = whale_token_account(token)
    else:
        key = str(meta.get("HTTP_X_API_KEY", "")).strip()
        if not key:
            return None
        digest = hashlib.sha256(key.encode()).hexdigest()
        account_id = _CACHE.get(("key", digest), lambda: _key_account_id(key))
    if account_id is None:
        return None  # an unknown key: the base rate (the view answers 401)
    found = account_id
    rate = _CACHE.get(("tier", str(found)), lambda: _rate_of(account_tier(found)))
    if rate is None:
        return None
    return ClientRate(scope=f"{RATE_SCOPE}:{found}", num_requests=rate[1], duration=60)


def token_ttl_bounds() -> tuple[int, int]:
    return settings.WHALE_TOKEN_MIN_TTL_SECONDS, settings.WHALE_TOKEN_MAX_TTL_SECONDS
