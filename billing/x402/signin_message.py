"""A sign-in message's EIP-4361 text and its EOA signer, in microseconds instead of milliseconds.

The SDK's verify_siwx_signature formats the message it checks with format_siwe_message, which
builds a `siwe.SiweMessage`: pydantic runs the EIP-4361 and RFC 3986 grammars (ABNF, 1-3 ms even
with abnf-rust) over the uri, each resource, the statement and every timestamp, and checks the
address's EIP-55 checksum through web3 (0.2 ms). Then eth_account recovers the signer (0.3 ms).
That was most of a sign-in call's CPU.

Here, a message of the shape our challenge asks for (`plain_message`: version 1, an http(s) uri
and resources made only of the characters RFC 3986 allows, no request id, RFC 3339 timestamps in
their plain form, the statement made of the characters EIP-4361 allows, a hex address with a
good checksum or none) is formatted by the SIWE package's own `prepare_message` on a model built
without re-running the grammars: each check below accepts only a subset of what the grammar
accepts, so the text is the one format_siwe_message would return (tests/billing/x402/
test_signin_message.py compares them). Anything else returns None and is checked the SDK's way,
grammars and all. `eoa_signer` recovers an EIP-191 signer with coincurve (libsecp256k1, which
eth_keys uses underneath) and one keccak.

Nothing is remembered between calls: each message is formatted and each signature recovered."""

from __future__ import annotations

import re
from typing import Any

from coincurve import PublicKey
from Crypto.Hash import keccak
from siwe import SiweMessage  # type: ignore[import-untyped]  # the SDK's EVM sign-in dependency
from x402.extensions.sign_in_with_x import SIWxPayload
from x402.extensions.sign_in_with_x.evm import extract_evm_chain_id

# RFC 3986, a subset: an http(s) URI with a registered name (no IPv6 literal, no user info), a
# port, and a path and query of unreserved / sub-delims / ":" / "@" / "/" / "?" characters and
# well-formed percent escapes (no fragment).
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})"
_URI = re.compile(rf"^https?://[A-Za-z0-9\-._~]+(?::[0-9]{{1,5}})?(?:/{_PCHAR}*)?(?:\?(?:{_PCHAR}|\?)*)?$")
# EIP-4361's statement = *( reserved / unreserved / " " ), no line break.
_STATEMENT = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;= ]*$")
# RFC 3339 date-time with upper-case T and Z (the grammar's "T" and "Z" also match lower case;
# those go the SDK's way). The ranges of month, day, hour... are checked by the SDK's validation
# (datetime.fromisoformat) before any message is formatted.
_DATE_TIME = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})$"
)
_DOMAIN = re.compile(r"^[A-Za-z0-9\-._~]+(?::[0-9]{1,5})?$")
_NONCE = re.compile(r"^[A-Za-z0-9]{8,}$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_SIGNATURE = re.compile(r"^0x[0-9a-fA-F]{130}$")
_EIP191 = b"\x19Ethereum Signed Message:\n"


def _keccak(data: bytes) -> bytes:
    return keccak.new(digest_bits=256, data=data).digest()


def _checksum_ok(address: str) -> bool:
    """As SiweMessage.validate_address: all lower or all upper case hex, or a good EIP-55 checksum."""
    hexpart = address[2:]
    if hexpart == hexpart.lower() or hexpart == hexpart.upper():
        return True
    digest = _keccak(hexpart.lower().encode()).hex()
    return all(
        (char.upper() if int(digest[i], 16) >= 8 else char.lower()) == char for i, char in enumerate(hexpart)
    )


def plain_message(payload: SIWxPayload) -> str | None:
    """The EIP-4361 text format_siwe_message would make of this payload, if its fields are of the
    plain shape above; else None."""
    if (
        payload.version != "1"
        or payload.request_id is not None
        or not _DOMAIN.match(payload.domain)
        or not _URI.match(payload.uri)
        or not _NONCE.match(payload.nonce)
        or not _ADDRESS.match(payload.address)
        or not _DATE_TIME.match(payload.issued_at)
        or (payload.expiration_time is not None and not _DATE_TIME.match(payload.expiration_time))
        or (payload.not_before is not None and not _DATE_TIME.match(payload.not_before))
        or (payload.statement is not None and not _STATEMENT.match(payload.statement))
        or (payload.resources is not None and not all(_URI.match(r) for r in payload.resources))
        or not _checksum_ok(payload.address)
    ):
        return None
    try:
        chain_id = extract_evm_chain_id(payload.chain_id)
    except ValueError:
        return None
    fields: dict[str, Any] = {
        "domain": payload.domain,
        "address": payload.address,
        "statement": payload.statement,
        "uri": payload.uri,
        "version": payload.version,
        "chain_id": chain_id,
        "nonce": payload.nonce,
        "issued_at": payload.issued_at,
        "expiration_time": payload.expiration_time,
        "not_before": payload.not_before,
        "request_id": None,
        "resources": payload.resources,
    }
    text: str = SiweMessage.model_construct(scheme=None, warnings=[], **fields).prepare_message()
    return text


def eoa_signer(*, message: str, signature: str) -> str | None:
    """The lower-case address whose key made this EIP-191 signature of the message, or None when
    the signature is not a 65-byte hex one with v in 0, 1, 27, 28 (for eth_account to judge)."""
    if not _SIGNATURE.match(signature):
        return None
    raw = bytes.fromhex(signature[2:])
    v = raw[64] - 27 if raw[64] >= 27 else raw[64]
    if v not in (0, 1):
        return None
    text = message.encode()
    return digest_signer(_keccak(_EIP191 + str(len(text)).encode() + text), raw[:64] + bytes([v]))


def digest_signer(digest: bytes, signature: bytes) -> str:
    """The lower-case address whose key signed this 32-byte digest (65 bytes: r, s, v in 0 or 1),
    or "" when no key could have (r or s out of range). Shared with the voucher fast path
    (billing/api/voucher_fastpath.py), which signs EIP-712 digests."""
    try:
        public = PublicKey.from_signature_and_message(signature, digest, hasher=None)
    except Exception:  # noqa: BLE001 - r or s out of range, no point: nobody signed it
        return ""
    return "0x" + _keccak(public.format(compressed=False)[1:])[-20:].hex()


def keccak256(data: bytes) -> bytes:
    return _keccak(data)
