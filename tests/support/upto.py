"""Paying metered calls with `upto` in tests: a payer of its own on the local chain (USDC minted,
gas for its one Permit2 approval) and the SDK's unmodified upto client (x402ClientSync +
UptoEvmClientScheme), as an agent pays."""

from __future__ import annotations

from dataclasses import dataclass

import requests
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from x402 import x402ClientSync
from x402.http import x402HTTPClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_required_header
from x402.mechanisms.evm.constants import PERMIT2_ADDRESS
from x402.mechanisms.evm.signers import EthAccountSignerWithRPC
from x402.mechanisms.evm.upto import UptoEvmClientScheme
from x402.schemas import PaymentPayload, PaymentRequired

from billing.chain.localchain import usdc_mint


@dataclass
class UptoPayer:
    account: LocalAccount
    client: x402ClientSync  # pays `upto` only: it picks the upto offer of a 402
    w3: Web3
    token: object  # the USDC contract

    @property
    def address(self) -> str:
        return str(self.account.address)

    def balance(self, address: str | None = None) -> int:
        return int(self.token.functions.balanceOf(Web3.to_checksum_address(address or self.address)).call())  # type: ignore[attr-defined]

    def session(self) -> requests.Session:
        """A requests session that pays a 402 by itself (the SDK's requests adapter)."""
        return wrapRequestsWithPayment(requests.Session(), self.client)

    def authorize(self, required: PaymentRequired) -> PaymentPayload:
        payload = self.client.create_payment_payload(required)
        assert isinstance(payload, PaymentPayload) and payload.accepted.scheme == "upto"
        return payload

    def header(self, payload: PaymentPayload) -> dict[str, str]:
        return x402HTTPClientSync(self.client).encode_payment_signature_header(payload)


def upto_payer(chain, *, usdc_atomic: int = 10**6) -> UptoPayer:
    """A fresh payer with `usdc_atomic` USDC that has approved Permit2 on the token (once)."""
    from django.conf import settings

    account: LocalAccount = Account.create()
    w3: Web3 = chain.w3
    usdc_mint(w3, usdc_address=settings.USDC_ADDRESS, to=account.address, amount_atomic=usdc_atomic)
    w3.provider.make_request("anvil_setBalance", [account.address, hex(10**18)])  # type: ignore[arg-type]
    approve = chain.token.functions.approve(PERMIT2_ADDRESS, 2**256 - 1).build_transaction(
        {"from": account.address, "nonce": w3.eth.get_transaction_count(account.address)}
    )
    sent = w3.eth.send_raw_transaction(account.sign_transaction(approve).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(sent)["status"] == 1
    client = x402ClientSync()
    client.register(settings.X402_NETWORK, UptoEvmClientScheme(EthAccountSignerWithRPC(account, chain.url)))
    return UptoPayer(account=account, client=client, w3=w3, token=chain.token)


def required_of(resp: requests.Response) -> PaymentRequired:
    assert resp.status_code == 402, resp.text
    return decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"])
