"""The chain's JSON-RPC connection (CHAIN_RPC_URL), one client per URL. Below both the credit
ledger (an EIP-1271 wallet's signature is asked of the chain) and the deposit watcher, so
neither imports the other for it."""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from web3 import Web3


@lru_cache(maxsize=4)
def _w3(url: str) -> Web3:
    return Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 10}))


def chain() -> Web3:
    return _w3(settings.CHAIN_RPC_URL)
