"""Registering wallets the way the service requires: sign the challenge it issues."""

from __future__ import annotations

from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount

from billing.credits import Registration, account_register, credit_add, ownership_challenge_issue
from billing.models import Account, LedgerEntry


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


def funded_buyer(api, amount_atomic: int = 20_000_000) -> tuple[str, Account]:
    """A new wallet registered over HTTP whose account holds `amount_atomic` of credit (a staff
    adjustment, so the ledger stays balanced): (its API key, its account)."""
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(
        account_id=account.id, amount_atomic=amount_atomic, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    return key, account
