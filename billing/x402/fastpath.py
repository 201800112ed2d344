"""The unpaid 402 challenge, served in front of Django.

An agent's first call to a paid path is almost always unpaid, and its answer depends only on
the SKU's price and the shop's payment settings. The view stores each unpaid challenge it
renders (header and body) in Redis. This WSGI layer answers the next identical request:

1. from this process's copy, kept only while the process listens on the invalidation channel
   (a subscriber thread; while it is not subscribed, the copy is not used);
2. else from Redis, in one round trip: a Lua script that also counts the challenge;
3. else Django renders it (and stores it).

Saving a SKU or a news item deletes the stored challenges and publishes an invalidation
after commit, so every process forgets its copy and the next request is priced from the
database. A challenge is stored only while its product has something to deliver (Django
answers 503 otherwise, and that is not stored): a change of a product's availability seen
by catalog/products/availability.py drops them all the same way, and a product with an availability
check has its challenge stored for PRODUCT_AVAILABILITY_RECHECK_SECONDS only (in Redis and
in each process's copy), since its data may go stale with no write to announce it.
Challenges served from a process's copy are counted in memory and added to the Redis
counters every second (and at exit). Requests with a payment proof, a sign-in, an API key,
an Origin (CORS), or a query other than the product's own parameters always go to Django.
Every response served here gets a sign-in nonce of its own (billing/x402/signin.py)."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable
from typing import Any
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import timezone
from redis.commands.core import Script

from a2a_service.core.fastcache import PushInvalidatedCopy
from a2a_service.core.hotsettings import settings_cached
from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import channel, counter_hash, redis_client
from a2a_service.core.requestlog import ENVIRON_LAYER
from billing.x402.signin import SiwxRenonce
from billing.x402.upto import upto_fingerprint
from catalog.products.availability import AVAILABILITY_HASH, AVAILABLE

logger = logging.getLogger(__name__)

PREFIX = "a2a:x402ch:"
CHANNEL = "a2a:x402ch:invalidate"
# Bounds how long a challenge can outlive a price change made while Redis was unreachable.
TTL_SECONDS = 60
PAID_PREFIX = "/api/a2a/x402/"
# GET the stored challenge; if there is one, count it in today's counter hash.
SERVE_AND_COUNT = """
local v = redis.call('GET', KEYS[1])
if v then
  local sku = string.match(v, '^([^\\n]*)')
  redis.call('HINCRBY', KEYS[2], 'challenge|' .. sku, 1)
end
return v
"""
# Headers Django's middleware would add to the same response.
STATIC_HEADERS = [
    ("Content-Type", "application/json"),
    ("Vary", "Accept, origin"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
]


# How long a process reuses its fingerprint: the `upto` part follows the facilitator's
# /supported, which upto_kind itself re-reads only every few minutes.
FINGERPRINT_SECONDS = 1.0
_fingerprint_kept: tuple[str, float] = ("", 0.0)


def _fingerprint() -> str:
    """Part of every key: a deployment with other payment settings never reads these.
    Computed at most once a FINGERPRINT_SECONDS (and after a settings change): it asks the
    facilitator's configuration, tens of microseconds per unpaid request otherwise."""
    global _fingerprint_kept
    value, until = _fingerprint_kept
    now = time.monotonic()
    if until > now and value:
        return value
    value = hashlib.sha1(f"{_settings_part()}|{upto_fingerprint()}|v2".encode()).hexdigest()[:12]
    _fingerprint_kept = (value, now + FINGERPRINT_SECONDS)
    return value


@settings_cached
def _settings_part() -> str:
    parts = [
        settings.X402_NETWORK,
        settings.X402_NETWORK_V1_NAME,
        settings.USDC_ADDRESS,
        settings.TREASURY_ADDRESS,
        str(settings.X402_MAX_TIMEOUT_SECONDS),
        settings.USDC_EIP712_NAME,
        settings.USDC_EIP712_VERSION,
        settings.PUBLIC_BASE_URL,
        # The channel offer (billing/x402/channels.py): on or off, its authorizer (by its key),
        # withdraw delay and minimum deposit.
        str(bool(settings.X402_CHANNELS_ENABLED and settings.RECEIVER_AUTHORIZER_PRIVATE_KEY)),
        hashlib.sha1(settings.RECEIVER_AUTHORIZER_PRIVATE_KEY.encode()).hexdigest()[:8],
        str(settings.X402_CHANNEL_WITHDRAW_DELAY),
        settings.X402_CHANNEL_MIN_DEPOSIT,
    ]
    # then: upto_fingerprint() (a metered product's `upto` names the facilitator's settling
    # address) and "v2" (the stored format: sku, expiry, header, body)
    return "|".join(parts)


@receiver(setting_changed)
def _forget_fingerprint(**kwargs: Any) -> None:
    global _fingerprint_kept
    _fingerprint_kept = ("", 0.0)


def challenge_key(host: str, path: str, query: str) -> str:
    return f"{PREFIX}{_fingerprint()}:{host}{path}?{query}"


def challenge_store(
    *,
    host: str,
    path: str,
    query: str,
    sku: str,
    header: str,
    body: dict[str, Any],
    availability_checked: bool = False,
) -> None:
    """Store the challenge for TTL_SECONDS. Its expiry (unix ms) is stored with it, so a
    process's copy taken from Redis does not outlive it either. availability_checked: the
    product has an availability check, which it has just passed; its data may go stale with no
    write to tell, so the challenge is kept PRODUCT_AVAILABILITY_RECHECK_SECONDS at most, and
    its availability is recorded as seen (a refresh that finds it gone drops the challenge)."""
    client = redis_client()
    if client is None:
        return
    life = TTL_SECONDS
    if availability_checked:
        life = max(1, min(int(settings.PRODUCT_AVAILABILITY_RECHECK_SECONDS), TTL_SECONDS))
    until_ms = int((time.time() + life) * 1000)
    payload = f"{sku}\n{until_ms}\n{header}\n".encode() + json.dumps(body, separators=(",", ":")).encode()
    try:
        pipe = client.pipeline(transaction=False)
        if availability_checked:
            pipe.hset(AVAILABILITY_HASH, sku, AVAILABLE)
        pipe.set(challenge_key(host, path, query), payload, ex=life)
        pipe.execute()
    except Exception:  # storing is an optimisation: the answer stands without it
        log_throttled(logger, "x402-challenge-store", "could not store the 402 challenge in Redis")


def challenges_forget() -> None:
    """Drop every stored challenge (a price, a SKU or a news item changed) in Redis and, by
    the invalidation channel, in every process's copy."""
    LOCAL.clear()
    client = redis_client()
    if client is None:
        return
    try:
        keys = list(client.scan_iter(match=f"{PREFIX}*:*", count=500))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
        client.publish(channel(CHANNEL), b"forget")
    except Exception:
        # Redis is unreachable: so is every process's copy (the subscribers lost their
        # channel and stopped using it), and stored keys expire within TTL_SECONDS.
        log_throttled(
            logger, "x402-challenge-forget", "could not drop stored 402 challenges", level=logging.ERROR
        )


class Challenge:
    """A stored challenge, prepared to be served: its counter field, body, and headers but the
    PAYMENT-REQUIRED one, which gets a sign-in nonce of each response's own."""

    __slots__ = ("field", "body", "_renonce", "_length")

    def __init__(self, *, sku: str, header: str, body: bytes) -> None:
        self.field = f"challenge|{sku}"
        self.body = body
        self._renonce = SiwxRenonce(header)
        self._length = str(len(body))  # the body's: a new nonce has the same length

    def headers(self) -> list[tuple[str, str]]:
        return [
            *STATIC_HEADERS,
            ("PAYMENT-REQUIRED", self._renonce.fresh()),
            ("Content-Length", self._length),
        ]


# This process's copy and buffered challenge counts (the machinery is shared with the free
# documents' layer: a2a_service/core/fastcache.py).
LOCAL: PushInvalidatedCopy[Challenge] = PushInvalidatedCopy(channel=CHANNEL, name="x402-challenge")


def _decode(stored: bytes) -> tuple[Challenge, float]:
    """The answer, and how many seconds it may still be served."""
    sku, until_ms, header, body = stored.split(b"\n", 3)
    challenge = Challenge(sku=sku.decode(), header=header.decode(), body=body)
    return challenge, int(until_ms) / 1000 - time.time()


class ChallengeFastPath:
    """WSGI middleware around Django's application."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app
        self._script: Script | None = None

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if (
            not path.startswith(PAID_PREFIX)
            or environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_PAYMENT_SIGNATURE" in environ
            or "HTTP_X_PAYMENT" in environ
            or "HTTP_SIGN_IN_WITH_X" in environ
            or "HTTP_X_API_KEY" in environ
            or "HTTP_X_WHALE_TOKEN" in environ  # checked (401) and rate-limited by Django
            or "HTTP_ORIGIN" in environ
        ):
            return self.app(environ, start_response)
        client = redis_client()
        if client is None:
            return self.app(environ, start_response)
        LOCAL.ensure_started()
        host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
        key = challenge_key(host, path, environ.get("QUERY_STRING", ""))
        local = LOCAL.get(key)
        if local is not None:
            LOCAL.count(local.field)
            environ[ENVIRON_LAYER] = "challenge_cache"
            start_response("402 Payment Required", local.headers())
            return [local.body]
        generation = LOCAL.generation()
        try:
            if self._script is None:
                self._script = client.register_script(SERVE_AND_COUNT)
            stored = self._script(keys=[key, counter_hash(timezone.now().date())])
        except Exception:  # Redis trouble: Django answers, as it would without this layer
            return self.app(environ, start_response)
        if not stored:
            return self.app(environ, start_response)
        decoded, remaining = _decode(stored)
        if remaining <= 0:  # past its expiry by our clock (Redis's lags): Django answers it
            return self.app(environ, start_response)
        LOCAL.put(key, decoded, generation, ttl=remaining)
        environ[ENVIRON_LAYER] = "challenge_cache"
        start_response("402 Payment Required", decoded.headers())
        return [decoded.body]
