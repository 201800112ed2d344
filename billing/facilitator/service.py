"""The self-hosted x402 facilitator: the `x402` package's EVM exact facilitator scheme,
settling transferWithAuthorization on CHAIN_RPC_URL with the gas key from
FACILITATOR_PRIVATE_KEY."""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from x402 import x402FacilitatorSync
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.exact.register import register_exact_evm_facilitator


@lru_cache(maxsize=4)
def _build(rpc_url: str, private_key: str, network: str, timeout: float) -> x402FacilitatorSync:
    # One per process and configuration: the signer keeps its transaction nonce under a
    # lock, so one process sends its settlements in order.
    signer = FacilitatorWeb3Signer(
        private_key=private_key, rpc_url=rpc_url, confirmation_timeout_seconds=timeout
    )
    facilitator = x402FacilitatorSync()
    register_exact_evm_facilitator(facilitator, signer, networks=network)
    return facilitator


def facilitator_get() -> x402FacilitatorSync | None:
    """The configured facilitator, or None where this deployment does not host one."""
    if not settings.FACILITATOR_PRIVATE_KEY:
        return None
    return _build(
        settings.CHAIN_RPC_URL,
        settings.FACILITATOR_PRIVATE_KEY,
        settings.X402_NETWORK,
        settings.FACILITATOR_SETTLE_TIMEOUT_SECONDS,
    )
