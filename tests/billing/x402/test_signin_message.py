"""A sign-in message of our challenge's shape is formatted without the SIWE grammars
(billing/x402/signin_message.py): the text must be the one the SDK's format_siwe_message makes,
anything outside the shape must go the SDK's way, and the EIP-191 signer recovered with
coincurve must be eth_account's."""

from __future__ import annotations

import asyncio

import pytest
from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct
from x402.extensions.sign_in_with_x import SIWxPayload, create_siwx_payload
from x402.extensions.sign_in_with_x.evm import format_siwe_message

from billing.x402.signin import STATEMENT, siwx_nonce_issue
from billing.x402.signin_message import eoa_signer, plain_message

WALLET = EthAccount.create()
URI = "http://testserver/api/a2a/x402/payments/dual-rail-status"


def payload(**changes) -> SIWxPayload:
    info = {
        "domain": "testserver",
        "uri": URI,
        "statement": STATEMENT,
        "version": "1",
        "chainId": "eip155:8453",
        "type": "eip191",
        "nonce": siwx_nonce_issue(),
        "issuedAt": "2026-11-27T10:00:00Z",
        "expirationTime": "2026-11-27T10:05:00Z",
        "resources": [URI],
    }
    signed = asyncio.run(create_siwx_payload(info, WALLET, URI))  # the SDK client's own payload
    return signed.model_copy(update=changes)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"address": WALLET.address.lower()},
        {"statement": None, "resources": None, "expiration_time": None},
        {"not_before": "2026-11-27T10:00:00.123+02:00", "issued_at": "2026-11-27T09:59:59.5Z"},
        {
            "uri": "https://a.example:8443/p/a%20b?x=1&y=%2F",
            "resources": ["https://a.example/1", "http://b/2?q"],
        },
        {"domain": "a.example:8443", "chain_id": "eip155:84532"},
    ],
)
def test_a_plain_message_is_the_text_the_sdk_formats(changes):
    message = payload(**changes)
    assert plain_message(message) == format_siwe_message(message, message.address)


@pytest.mark.parametrize(
    "changes",
    [
        {"version": "2"},
        {"request_id": "r1"},
        {"issued_at": "2026-11-27t10:00:00z"},  # the grammar takes it; the SDK's way decides
        {"statement": "two\nlines"},
        {"uri": "http://testserver/a b"},
        {"resources": ["not a uri"]},
        {"domain": "[::1]:8000"},
        {"address": WALLET.address[:-1] + ("a" if WALLET.address[-1] != "a" else "b")},  # bad checksum
        {"address": WALLET.address.lower()[:-1] + "A"},  # mixed case, not the checksum
        {"chain_id": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"},
        {"nonce": "short"},
    ],
)
def test_anything_else_goes_the_sdks_way(changes):
    assert plain_message(payload(**changes)) is None


def test_the_signer_is_the_one_eth_account_recovers():
    message = payload()
    text = plain_message(message)
    assert text is not None
    assert eoa_signer(message=text, signature=message.signature) == WALLET.address.lower()
    other = EthAccount.recover_message(encode_defunct(text=text + " "), signature=message.signature)
    assert (
        eoa_signer(message=text + " ", signature=message.signature) == other.lower() != WALLET.address.lower()
    )
    assert eoa_signer(message=text, signature=message.signature[:-2]) is None  # not 65 bytes: eth_account's
    assert eoa_signer(message=text, signature=message.signature[:-2] + "05") is None  # v not 0/1/27/28
    assert eoa_signer(message=text, signature="0x" + "0" * 128 + "1b") == ""  # r = s = 0: nobody signed it
