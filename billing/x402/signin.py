"""Sign-in-with-x (x402's `sign-in-with-x` extension, x402.extensions.sign_in_with_x): what every
version 2 402 declares, and the checks of a signed message that do not need the database.

The declaration is the SDK's (`declare_siwx_extension`), completed the way the SDK's resource
server extension completes it for each 402 (domain and uri from the origin, the resource's
path rebased on it, nonce, issuedAt, expirationTime): the SDK's own completion draws a random
nonce per response, which the unpaid 402's cache (billing/x402/fastpath.py) cannot hold.

The nonce, instead: `siwx` + issue time + random + HMAC of both under a key derived from
SECRET_KEY. Checking it needs no lookup (the MAC says we issued it, its time says it is at most
NONCE_SECONDS old); using it records a unique (wallet, nonce) row (billing.models.SignInNonce,
written by the payment front), so a signature is used once. A cached 402 keeps one nonce for up
to 60 s, and the SDK's clients sign whatever nonce they are given: a wallet calling the same
path twice in that minute would sign the same message twice, and its second call would be
refused as a replay (the SDK client then pays instead). So the fast path gives every response
it serves a nonce of its own, and the stored challenge stays one entry per path. The header is
prepared once per stored challenge (`SiwxRenonce`: the base64 before and after the nonce's
3-byte-aligned span, which base64 encodes independently), so a response encodes only the
nonce's few dozen bytes: a couple of microseconds, with the nonce's random bytes drawn from a
pool (a2a_service/core/randpool.py) and its MAC under a key derived once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X, DeclareSIWxOptions, declare_siwx_extension

from a2a_service.core.hotsettings import settings_cached
from a2a_service.core.randpool import token_hex
from billing.x402.challenge import ChallengeContext, extension_register

HEADER = "SIGN-IN-WITH-X"  # the request header the SDK's clients send (the extension's key, upper case)
# How long a challenge's nonce and message are good for: the SDK's own bound on a message's age
# (x402.extensions.sign_in_with_x.validate DEFAULT_MAX_AGE_MS) is the same five minutes.
NONCE_SECONDS = 300
STATEMENT = "Sign in to pay from your prepaid credits, or to get again what this wallet already bought."
# siwx + 8 hex (unix seconds) + 16 hex (random) + 24 hex (MAC): alphanumeric, as EIP-4361 requires.
_NONCE = re.compile(r"^siwx([0-9a-f]{8})([0-9a-f]{16})([0-9a-f]{24})$")
_NONCE_IN_JSON = re.compile(rb'"nonce":"(siwx[0-9a-f]{48})"')


def _key() -> bytes:
    return hashlib.sha256(b"x402 sign-in-with-x nonce|" + settings.SECRET_KEY.encode()).digest()


@settings_cached
def _keyed() -> hmac.HMAC:
    """HMAC-SHA256 with the key absorbed: each MAC copies it (a third cheaper than a new one)."""
    return hmac.new(_key(), digestmod=hashlib.sha256)


def _mac(issued: str, rand: str) -> str:
    mac = _keyed().copy()
    mac.update(f"{issued}|{rand}".encode())
    return mac.hexdigest()[:24]


def siwx_nonce_issue(now: float | None = None) -> str:
    issued = f"{int(time.time() if now is None else now):08x}"
    rand = token_hex(8)
    return f"siwx{issued}{rand}{_mac(issued, rand)}"


def siwx_nonce_valid(nonce: str, now: float | None = None) -> bool:
    """Issued by us (its MAC) at most NONCE_SECONDS ago (and not in the future, a minute of
    clock skew between processes allowed)."""
    found = _NONCE.match(nonce)
    if found is None:
        return False
    issued, rand, mac = found.groups()
    if not hmac.compare_digest(mac, _mac(issued, rand)):
        return False
    age = (time.time() if now is None else now) - int(issued, 16)
    return -60 <= age <= NONCE_SECONDS


class SiwxRenonce:
    """A stored PAYMENT-REQUIRED header, prepared to be given a nonce of its own per response
    (see the module doc). A header without a sign-in declaration stays as it is."""

    __slots__ = ("_head", "_before", "_after", "_tail", "_header")

    def __init__(self, header: str) -> None:
        self._header = header
        self._head = self._tail = ""
        self._before = self._after = b""
        try:
            raw = base64.b64decode(header)
        except ValueError:
            return
        found = _NONCE_IN_JSON.search(raw)
        if found is None:
            return
        start, end = found.span(1)
        # Base64 encodes each 3-byte group on its own: the parts before `lo` and from `hi` on
        # (both multiples of 3, or the end) keep their encoding whatever the nonce is.
        lo, hi = start - start % 3, min(len(raw), end + (-end) % 3)
        self._head = base64.b64encode(raw[:lo]).decode()
        self._tail = base64.b64encode(raw[hi:]).decode()
        self._before, self._after = raw[lo:start], raw[end:hi]
        self._header = ""

    def fresh(self) -> str:
        if self._header:
            return self._header
        span = self._before + siwx_nonce_issue().encode() + self._after
        return self._head + base64.b64encode(span).decode() + self._tail


def siwx_renonce(header: str) -> str:
    """A stored PAYMENT-REQUIRED header with a nonce of its own (see the module doc); a header
    without a sign-in declaration is returned as it is."""
    return SiwxRenonce(header).fresh()


def siwx_origin(resource_url: str) -> str | None:
    """Our origin: PUBLIC_BASE_URL, else the resource's own (http or https); None for a resource
    that is not on the web (an MCP tool's mcp://tool/<name>) when PUBLIC_BASE_URL is unset."""
    if settings.PUBLIC_BASE_URL:
        base = urlparse(settings.PUBLIC_BASE_URL)
        return f"{base.scheme}://{base.netloc}"
    parsed = urlparse(resource_url)
    if parsed.scheme in ("http", "https") and parsed.netloc:
        return f"{parsed.scheme}://{parsed.netloc}"
    return None


def siwx_uri(resource_url: str, origin: str) -> str:
    """The resource's path and query on our origin: what the message must be signed for, as the
    SDK's server extension rebases it (so mcp://tool/news_unlock is <origin>/news_unlock)."""
    parsed = urlparse(resource_url)
    return origin + (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def siwx_declaration(context: ChallengeContext) -> dict[str, Any] | None:
    origin = siwx_origin(context.resource_url)
    if origin is None:
        return None
    declared = declare_siwx_extension(
        DeclareSIWxOptions(
            statement=STATEMENT, network=settings.X402_NETWORK, expiration_seconds=NONCE_SECONDS
        )
    )[SIGN_IN_WITH_X]
    now = datetime.now(UTC)
    uri = siwx_uri(context.resource_url, origin)
    info = {
        **declared["info"],
        "domain": urlparse(origin).netloc,
        "uri": uri,
        "nonce": siwx_nonce_issue(now.timestamp()),
        "issuedAt": _iso(now),
        "expirationTime": _iso(now + timedelta(seconds=NONCE_SECONDS)),
        "resources": [uri],
    }
    # "_options" is the SDK's note to its own completion step, not part of the wire format.
    return {"info": info, "supportedChains": declared["supportedChains"], "schema": declared["schema"]}


extension_register(SIGN_IN_WITH_X, siwx_declaration)
