"""Registering wallets the way the service requires: sign the challenge it issues."""

from __future__ import annotations

from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from billing.credits import Registration, account_register, ownership_challenge_issue


def sign(wallet: LocalAccount, message: str) -> str:
    return "0x" + wallet.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")


def register_wallet(wallet: LocalAccount | None = None) -> Registration:
    """Register `wallet` (a new random one by default) with a proof of ownership, through
    the services. reg.account.wallet_address is the wallet's lower-case address."""
    wallet = wallet or EthAccount.create()
    challenge = ownership_challenge_issue(wallet_address=wallet.address)
    return account_register(
        wallet_address=wallet.address, nonce=challenge.nonce, signature=sign(wallet, challenge.message)
    )


def register_over_http(api, wallet: LocalAccount):
    """The agent's round trip: POST without a signature, sign the challenge of the 401, POST again."""
    first = api.post("/api/a2a/account/register", {"wallet_address": wallet.address}, format="json")
    assert first.status_code == 401 and first.json()["code"] == "ownership_proof_required", first.json()
    challenge = first.json()
    return api.post(
        "/api/a2a/account/register",
        {
            "wallet_address": wallet.address,
            "nonce": challenge["nonce"],
            "signature": sign(wallet, challenge["message"]),
        },
        format="json",
    )
