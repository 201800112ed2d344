"""The self-hosted x402 facilitator: the `x402` package's EVM exact facilitator scheme,
settling transferWithAuthorization on CHAIN_RPC_URL with the gas key from
FACILITATOR_PRIVATE_KEY."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from django.conf import settings
from eth_typing import HexStr
from web3 import Web3
from web3.exceptions import TimeExhausted, TransactionNotFound
from x402 import x402FacilitatorSync
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.exact.register import register_exact_evm_facilitator
from x402.mechanisms.evm.types import TransactionReceipt
from x402.schemas import SettleResponse

logger = logging.getLogger(__name__)

# A replacement must pay at least 10% more gas than the transaction it replaces (the rule
# geth, reth and anvil's pools share); 12.5% leaves room for rounding.
REPLACEMENT_BUMP = 1.125


# How many replacements (old hash -> new hash) a signer remembers, for the settle answer that
# reports a replaced transaction (its caller is told the hash that may still be mined).
REPLACEMENTS_KEPT = 1024


class HealingWeb3Signer(FacilitatorWeb3Signer):
    """The x402 signer keeps its next nonce in memory and only ever moves it forward. One
    failed send (an RPC error after the nonce was reserved) then leaves a gap: every later
    settlement waits behind a nonce that will never be mined, and times out until the
    process restarts. Here the counter is dropped after a failed send or a receipt timeout,
    so the next transaction takes the chain's pending count (which fills the gap), and a
    transaction still waiting at the head of our queue after a timeout is replaced by the
    same call with a higher gas price (a stuck, underpriced one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._replacements: OrderedDict[str, str] = OrderedDict()
        self._replacements_lock = threading.Lock()

    def current_hash(self, tx_hash: str) -> str:
        """The hash that now carries what `tx_hash` carried: its replacement (and the
        replacement's, …) if this signer replaced it, else itself."""
        seen = {tx_hash}
        with self._replacements_lock:
            while tx_hash in self._replacements and self._replacements[tx_hash] not in seen:
                tx_hash = self._replacements[tx_hash]
                seen.add(tx_hash)
        return tx_hash

    def _resync_nonce(self) -> None:
        with self._nonce_lock:
            self._next_nonce = None

    def write_contract(self, *args: Any, **kwargs: Any) -> str:
        try:
            return super().write_contract(*args, **kwargs)
        except Exception:
            self._resync_nonce()
            raise

    def send_transaction(self, to: str, data: bytes) -> str:
        try:
            return super().send_transaction(to, data)
        except Exception:
            self._resync_nonce()
            raise

    def wait_for_transaction_receipt(self, tx_hash: str) -> TransactionReceipt:
        try:
            return super().wait_for_transaction_receipt(tx_hash)
        except (TimeExhausted, TransactionNotFound):
            self._resync_nonce()
            self.replace_if_stuck(tx_hash)
            raise

    def replace_if_stuck(self, tx_hash: str) -> str | None:
        """Re-send a still-pending transaction of ours that is next in line (its nonce is the
        account's confirmed count) with a higher gas price. Returns the new hash, or None.
        The replacement carries the same authorization, so whichever of the two is mined
        settles the payment once; the reconciler finds it by the token's event."""
        w3: Web3 = self._w3
        try:
            tx = w3.eth.get_transaction(HexStr(tx_hash))
        except TransactionNotFound:
            return None
        if tx.get("blockNumber") is not None:
            return None
        confirmed = w3.eth.get_transaction_count(self._account.address, "latest")
        if tx["nonce"] != confirmed:
            return None  # something earlier is in the way; resyncing the counter fills gaps
        replacement = {
            "from": self._account.address,
            "to": tx["to"],
            "data": tx["input"],
            "value": tx.get("value", 0),
            "nonce": tx["nonce"],
            "gas": tx["gas"],
            "gasPrice": max(int(tx["gasPrice"] * REPLACEMENT_BUMP) + 1, w3.eth.gas_price),
            "chainId": self.get_chain_id(),
        }
        try:
            signed = self._account.sign_transaction(replacement)
            new_hash = "0x" + bytes(w3.eth.send_raw_transaction(signed.raw_transaction)).hex()
        except Exception as exc:  # already mined meanwhile, or the pool refused: nothing to do
            logger.info("facilitator: replacing stuck %s failed: %s", tx_hash, exc)
            return None
        logger.warning(
            "facilitator: replaced stuck transaction %s (nonce %s) by %s", tx_hash, tx["nonce"], new_hash
        )
        with self._replacements_lock:
            self._replacements[tx_hash] = new_hash
            while len(self._replacements) > REPLACEMENTS_KEPT:
                self._replacements.popitem(last=False)
        return new_hash


@lru_cache(maxsize=4)
def _build(
    rpc_url: str, private_key: str, network: str, timeout: float
) -> tuple[x402FacilitatorSync, HealingWeb3Signer]:
    # One per process and configuration: the signer keeps its transaction nonce under a
    # lock, so one process sends its settlements in order.
    signer = HealingWeb3Signer(private_key=private_key, rpc_url=rpc_url, confirmation_timeout_seconds=timeout)
    facilitator = x402FacilitatorSync()
    # simulate_in_settle: the transfer is simulated again just before it is broadcast, so a
    # payer who emptied the wallet after verify costs a refused settle, not a reverted
    # transaction whose gas the facilitator pays.
    register_exact_evm_facilitator(facilitator, signer, networks=network, simulate_in_settle=True)
    return facilitator, signer


def _configured() -> tuple[x402FacilitatorSync, HealingWeb3Signer] | None:
    if not settings.FACILITATOR_PRIVATE_KEY:
        return None
    return _build(
        settings.CHAIN_RPC_URL,
        settings.FACILITATOR_PRIVATE_KEY,
        settings.X402_NETWORK,
        settings.FACILITATOR_SETTLE_TIMEOUT_SECONDS,
    )


def facilitator_get() -> x402FacilitatorSync | None:
    """The configured facilitator, or None where this deployment does not host one."""
    built = _configured()
    return None if built is None else built[0]


def facilitator_signer() -> HealingWeb3Signer | None:
    built = _configured()
    return None if built is None else built[1]


def settle_response_current(response: SettleResponse) -> SettleResponse:
    """A settle answer naming the transaction that may still be mined: the x402 scheme reports
    the hash it waited for, which this signer may have replaced since (a stuck, underpriced
    transaction re-sent with more gas)."""
    signer = facilitator_signer()
    if signer is None or not response.transaction:
        return response
    current = signer.current_hash(response.transaction)
    return response if current == response.transaction else response.model_copy(update={"transaction": current})
