"""The self-hosted x402 facilitator: the `x402` package's EVM facilitator schemes, settling on
CHAIN_RPC_URL with the gas key from FACILITATOR_PRIVATE_KEY: `exact` (transferWithAuthorization),
`upto` (a Permit2 authorization through x402UptoPermit2Proxy) and, with
RECEIVER_AUTHORIZER_PRIVATE_KEY, `batch-settlement` (payment channels: deposits, claims,
settlement, refunds), advertising that key's address as `receiverAuthorizer` in /supported."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import requests
from django.conf import settings
from eth_typing import HexStr
from web3 import HTTPProvider, Web3
from web3.exceptions import TimeExhausted, TransactionNotFound
from web3.types import RPCEndpoint
from x402 import x402FacilitatorSync
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.batch_settlement.authorizer_signer import LocalAuthorizerSigner
from x402.mechanisms.evm.batch_settlement.facilitator import BatchSettlementEvmFacilitator
from x402.mechanisms.evm.constants import ERR_SETTLEMENT_PENDING
from x402.mechanisms.evm.exact.facilitator import ExactEvmSchemeConfig
from x402.mechanisms.evm.exact.v1.facilitator import ExactEvmSchemeV1, ExactEvmSchemeV1Config
from x402.mechanisms.evm.types import TransactionReceipt
from x402.mechanisms.evm.upto import UptoEvmFacilitatorScheme
from x402.mechanisms.evm.upto.facilitator import UptoEvmSchemeConfig
from x402.mechanisms.evm.v1.constants import V1_NETWORKS
from x402.schemas import SettleResponse, VerifyResponse

from a2a_service.core.redisconn import redis_client
from billing.facilitator.discovery import discovery_hooks_register
from billing.facilitator.exact_once import ExactVerifiedOnce
from billing.facilitator.nonces import FileNonces, NonceLockUnavailable, NonceSequence, RedisNonces
from billing.facilitator.pending import pending_settlements

logger = logging.getLogger(__name__)


class ChainUnreachable(Exception):
    """A verify or settle that could not reach the chain (its RPC did not answer, or the gas
    key's nonce lock was unavailable) and broadcast nothing: the payment is not at fault, and
    the same proof may be sent again."""


class RpcHealth:
    """The signer's RPC requests that got no answer (refused, timed out, an HTTP error from the
    node or its proxy), counted across threads. x402's verify turns such a failure into a
    refusal of the payment (`invalid_exact_evm_failed_to_verify_signature`, or a failed
    simulation); comparing the count before and after a call tells an unreachable chain from a
    bad payment."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.failures = 0
        self.last_error = ""

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = f"the chain's RPC did not answer: {exc}"[:300]


class WatchedHTTPProvider(HTTPProvider):
    def __init__(self, endpoint_uri: str, *, health: RpcHealth) -> None:
        # eth_chainId is answered from web3's own request cache after the first call: web3's
        # validation asks it before every eth_call and transaction it checks (four times in
        # one paid call, about 1.5 ms each on a local node), and a node's chain id does not change.
        super().__init__(
            endpoint_uri,
            session=_rpc_session(endpoint_uri),
            cache_allowed_requests=True,
            cacheable_requests={RPCEndpoint("eth_chainId")},
        )
        self._health = health

    def _make_request(self, method: RPCEndpoint, request_data: bytes) -> bytes:
        try:
            return super()._make_request(method, request_data)
        except (ConnectionError, requests.ConnectionError, requests.Timeout, requests.HTTPError) as exc:
            self._health.failed(exc)
            raise


def _rpc_session(endpoint_uri: str) -> requests.Session:
    """One session for every thread's RPC requests, its proxy and CA settings read from the
    environment once: with `trust_env`, requests scans and decodes all of os.environ for
    proxies on every request (a fifth of a paid call's CPU in the facilitator, eight
    requests a call)."""
    session = requests.Session()
    session.proxies.update(requests.utils.get_environ_proxies(endpoint_uri))
    session.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
    session.trust_env = False
    return session


# A replacement must pay at least 10% more gas than the transaction it replaces (the rule
# geth, reth and anvil's pools share); 12.5% leaves room for rounding.
REPLACEMENT_BUMP = 1.125


# How many replacements (old hash -> new hash) a signer remembers, for the settle answer that
# reports a replaced transaction (its caller is told the hash that may still be mined).
REPLACEMENTS_KEPT = 1024


class HealingWeb3Signer(FacilitatorWeb3Signer):
    """The x402 signer keeps its next nonce in the memory of one process and only ever moves it
    forward. Here the nonce is allocated and the transaction broadcast under one lock per gas
    key shared by every process (billing/facilitator/nonces.py), so two web workers or nodes
    never send two transactions with one nonce. The shared counter is dropped after a failed
    send or a receipt timeout, so the next transaction takes the chain's pending count (which
    fills a gap a lost transaction left), and a transaction still waiting at the head of our
    queue after a timeout is replaced by the same call with a higher gas price (a stuck,
    underpriced one)."""

    def __init__(
        self,
        *,
        private_key: str,
        rpc_url: str,
        confirmation_timeout_seconds: float,
        nonces: Callable[[str], NonceSequence],
    ) -> None:
        super().__init__(
            private_key=private_key,
            rpc_url=rpc_url,
            confirmation_timeout_seconds=confirmation_timeout_seconds,
        )
        self.rpc = RpcHealth()
        self._w3.provider = WatchedHTTPProvider(rpc_url, health=self.rpc)
        self._nonces_for = nonces
        self._nonces: NonceSequence | None = None
        self._nonces_lock = threading.Lock()
        # Per thread, for the verify or settle call it runs: the nonce it reserved (a broadcast
        # may have happened) and why the nonce lock was unavailable.
        self._call = threading.local()
        self._replacements: OrderedDict[str, str] = OrderedDict()
        self._replacements_lock = threading.Lock()

    # --- what one call could not reach ---------------------------------------------------------
    def call_begin(self) -> int:
        self._call.reserved = None
        self._call.unavailable = ""
        self._call.awaited = False
        return self.rpc.failures

    def call_unreachable(self, began: int) -> str | None:
        """Why this thread's verify or settle since call_begin() failed for want of the chain,
        if it did and involved no transaction; None otherwise (a refusal on the merits, a
        failure after a nonce was reserved, or while waiting for a transaction broadcast
        earlier: one may be out)."""
        if getattr(self._call, "reserved", None) is not None or getattr(self._call, "awaited", False):
            return None
        unavailable: str = getattr(self._call, "unavailable", "")
        if unavailable:
            return unavailable
        if self.rpc.failures != began:
            return self.rpc.last_error
        return None

    # --- one nonce sequence per key, across processes --------------------------------------------
    def _sequence(self) -> NonceSequence:
        with self._nonces_lock:  # one per signer: a file sequence remembers what it holds
            if self._nonces is None:
                # The chain's genesis in the key: a new local chain (same id, same key) starts afresh.
                genesis = bytes(self._w3.eth.get_block(0)["hash"]).hex()[:16]
                self._nonces = self._nonces_for(f"{self.get_chain_id()}:{genesis}:{self.address.lower()}")
            return self._nonces

    def _reserve_nonce(self) -> int:
        """Only under the sequence's lock (_broadcast): the chain's pending count, read after the
        previous holder's broadcast, or the counter that holder left if an RPC node behind a
        load balancer has not seen it yet."""
        pending = self._w3.eth.get_transaction_count(self._account.address, "pending")
        shared = self._sequence().next()
        nonce = pending if shared is None else max(pending, shared)
        self._call.reserved = nonce
        return nonce

    def _broadcast(self, send: Callable[[], str]) -> str:
        self._call.reserved = None
        sequence = self._sequence()
        try:
            with sequence.hold():
                try:
                    tx_hash = send()
                except Exception:
                    sequence.forget()
                    raise
                reserved = self._call.reserved
                if reserved is not None:
                    sequence.advance(reserved + 1)
                return tx_hash
        except NonceLockUnavailable as exc:
            self._call.unavailable = str(exc)
            raise

    def _resync_nonce(self) -> None:
        try:
            self._sequence().forget()
        except Exception as exc:  # the chain or the lock is unreachable: the counter expires anyway
            logger.info("facilitator: could not drop the nonce counter: %s", exc)

    def current_hash(self, tx_hash: str) -> str:
        """The hash that now carries what `tx_hash` carried: its replacement (and the
        replacement's, …) if this signer replaced it, else itself."""
        seen = {tx_hash}
        with self._replacements_lock:
            while tx_hash in self._replacements and self._replacements[tx_hash] not in seen:
                tx_hash = self._replacements[tx_hash]
                seen.add(tx_hash)
        return tx_hash

    def write_contract(self, *args: Any, **kwargs: Any) -> str:
        send = super().write_contract
        return self._broadcast(lambda: send(*args, **kwargs))

    def send_transaction(self, to: str, data: bytes) -> str:
        send = super().send_transaction
        return self._broadcast(lambda: send(to, data))

    def wait_for_transaction_receipt(self, tx_hash: str) -> TransactionReceipt:
        self._call.awaited = True  # a transaction exists: this call's failure is never "nothing sent"
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


def _nonces_factory(redis_url: str, run_dir: str, wait: float) -> Callable[[str], NonceSequence]:
    """Redis where the deployment has it (every production one: all nodes share it), else a
    locked file (the embedded local stack: one machine)."""
    client = redis_client() if redis_url else None

    def nonces(key: str) -> NonceSequence:
        if client is not None:
            return RedisNonces(client, f"a2a:facnonce:{key}", wait_seconds=wait)
        return FileNonces(Path(run_dir) / "facilitator-nonces" / key.replace(":", "-"), wait_seconds=wait)

    return nonces


@lru_cache(maxsize=4)
def _build(
    rpc_url: str,
    private_key: str,
    network: str,
    timeout: float,
    redis_url: str,
    run_dir: str,
    lock_wait: float,
    authorizer_key: str = "",
    verify_reuse_seconds: float = 0.0,
) -> tuple[x402FacilitatorSync, HealingWeb3Signer]:
    # One per process and configuration; its nonces are allocated under a lock shared with
    # every other process settling with the same key.
    signer = HealingWeb3Signer(
        private_key=private_key,
        rpc_url=rpc_url,
        confirmation_timeout_seconds=timeout,
        nonces=_nonces_factory(redis_url, run_dir, lock_wait),
    )
    facilitator = x402FacilitatorSync()
    # A settlement whose receipt did not come in time, for the retry to reconcile against,
    # whichever process it reaches (pending.py).
    pending = pending_settlements(redis_url, current=signer.current_hash)
    # simulate_in_settle: the transfer is simulated again just before it is broadcast, so a
    # payer who emptied the wallet after verify costs a refused settle, not a reverted
    # transaction whose gas the facilitator pays; except right after this process verified
    # the same payment, whose verification (simulation included) the settle takes
    # (exact_once.py: four of a paid call's eight requests to the chain).
    config = ExactEvmSchemeConfig(simulate_in_settle=True)
    facilitator.register(
        [network], ExactVerifiedOnce(signer, config, reuse_seconds=verify_reuse_seconds, pending_store=pending)
    )
    # x402 v1 payers, as the SDK's register_exact_evm_facilitator registers them.
    facilitator.register_v1(
        V1_NETWORKS, ExactEvmSchemeV1(signer, ExactEvmSchemeV1Config(simulate_in_settle=True))
    )
    # `upto` (metered calls, billing/rails/upto.py): a Permit2 authorization for a maximum,
    # settled through x402UptoPermit2Proxy for what the call used. Its witness names the
    # settling address (`facilitatorAddress` in /supported): this gas key, the only one here.
    upto = UptoEvmFacilitatorScheme(signer, UptoEvmSchemeConfig(simulate_in_settle=True), pending_store=pending)
    facilitator.register([network], upto)
    # Bazaar: the resources declared in the payments it verifies and settles are catalogued.
    discovery_hooks_register(facilitator)
    if authorizer_key:
        # Payment channels: the same gas key sends deposits, claims, settlements and refunds;
        # the authorizer key signs the claim batches and refunds the contract checks.
        channels = BatchSettlementEvmFacilitator(signer, LocalAuthorizerSigner(authorizer_key), pending_store=pending)
        facilitator.register([network], channels)
    return facilitator, signer


def _configured() -> tuple[x402FacilitatorSync, HealingWeb3Signer] | None:
    if not settings.FACILITATOR_PRIVATE_KEY:
        return None
    return _build(
        settings.CHAIN_RPC_URL,
        settings.FACILITATOR_PRIVATE_KEY,
        settings.X402_NETWORK,
        settings.FACILITATOR_SETTLE_TIMEOUT_SECONDS,
        settings.REDIS_URL,
        str(settings.RUN_DIR),
        settings.FACILITATOR_NONCE_LOCK_WAIT_SECONDS,
        settings.RECEIVER_AUTHORIZER_PRIVATE_KEY if settings.X402_CHANNELS_ENABLED else "",
        settings.FACILITATOR_VERIFY_REUSE_SECONDS,
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
    return (
        response if current == response.transaction else response.model_copy(update={"transaction": current})
    )


def _hosted() -> tuple[x402FacilitatorSync, HealingWeb3Signer]:
    built = _configured()
    if built is None:
        raise LookupError("this deployment hosts no facilitator (FACILITATOR_PRIVATE_KEY is not set)")
    return built


def hosted_verify(payload: Any, requirements: Any) -> VerifyResponse:
    """The hosted facilitator's verify; ChainUnreachable instead of a refusal that only the
    chain's RPC failing caused."""
    facilitator, signer = _hosted()
    began = signer.call_begin()
    response = facilitator.verify(payload, requirements)
    if not response.is_valid:
        why = signer.call_unreachable(began)
        if why is not None:
            raise ChainUnreachable(why)
    return response


def hosted_settle(payload: Any, requirements: Any) -> SettleResponse:
    """The hosted facilitator's settle, naming the transaction that may still be mined;
    ChainUnreachable when it failed for want of the chain (or of the nonce lock) before any
    nonce was reserved, so nothing was broadcast."""
    facilitator, signer = _hosted()
    began = signer.call_begin()
    try:
        response = facilitator.settle(payload, requirements)
    except Exception as exc:
        why = signer.call_unreachable(began)
        if why is not None:
            raise ChainUnreachable(why) from exc
        raise
    if not response.success and not response.transaction and response.error_reason != ERR_SETTLEMENT_PENDING:
        why = signer.call_unreachable(began)
        if why is not None:
            raise ChainUnreachable(why)
    return settle_response_current(response)
