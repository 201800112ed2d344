"""Adapter to the facilitator: the self-hosted one in this process (FACILITATOR_URL empty,
the default), or one at FACILITATOR_URL (a separate process of this service, or a third
party) through the x402 package's HTTP facilitator client.

In process, because a paid call that asked its own server over HTTP would wait for a free
worker of that same server: with one worker it deadlocks, and under load with N it queues
behind the calls it is part of."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

import httpx
from django.conf import settings
from x402 import x402FacilitatorSync
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync
from x402.http.facilitator_client_base import AuthHeaders
from x402.mechanisms.evm.constants import ERR_SETTLEMENT_PENDING
from x402.schemas import SettleResponse, VerifyResponse

from billing.facilitator.service import ChainUnreachable, facilitator_get, hosted_settle, hosted_verify
from billing.x402.proof import Proof

logger = logging.getLogger(__name__)


class FacilitatorUnavailable(Exception):
    """The facilitator could not be asked (down, timeout, unreadable answer), or could not
    reach the chain to check the payment. Nothing was settled, so the same proof may be sent
    again."""


# The settle reason for "nothing was broadcast, the facilitator or the chain could not be reached":
# the claim is released and the agent told to send the same proof again.
FACILITATOR_UNREACHABLE = "facilitator_unreachable"


class Settlement(Enum):
    SETTLED = "settled"
    # Broadcast (or possibly broadcast) but not confirmed: the reconciler decides later.
    PENDING = "pending"
    # Refused: nothing moved on chain.
    FAILED = "failed"


@dataclass(frozen=True)
class SettleOutcome:
    state: Settlement
    response: SettleResponse

    @property
    def tx_hash(self) -> str:
        return self.response.transaction or ""

    @property
    def reason(self) -> str:
        return self.response.error_reason or ""

    @property
    def message(self) -> str:
        return self.response.error_message or ""


class _SharedSecret:
    """Authorization for a separately run self-hosted facilitator (FACILITATOR_SHARED_SECRET)."""

    def __init__(self, secret: str) -> None:
        self._headers = {"Authorization": f"Bearer {secret}"}

    def get_auth_headers(self) -> AuthHeaders:
        return AuthHeaders(verify=dict(self._headers), settle=dict(self._headers))


@lru_cache(maxsize=4)
def _client(url: str, timeout: float, secret: str = "") -> HTTPFacilitatorClientSync:
    return HTTPFacilitatorClientSync(
        FacilitatorConfig(url=url, timeout=timeout, auth_provider=_SharedSecret(secret) if secret else None)
    )


def facilitator_in_process() -> bool:
    return not settings.FACILITATOR_URL


def facilitator_client() -> HTTPFacilitatorClientSync:
    return _client(
        settings.FACILITATOR_URL, settings.FACILITATOR_TIMEOUT_SECONDS, settings.FACILITATOR_SHARED_SECRET
    )


def _local() -> x402FacilitatorSync:
    facilitator = facilitator_get()
    if facilitator is None:
        raise FacilitatorUnavailable(
            "this deployment has no facilitator: set FACILITATOR_PRIVATE_KEY (self-hosted) or FACILITATOR_URL"
        )
    return facilitator


def facilitator_verify(proof: Proof) -> VerifyResponse:
    try:
        if facilitator_in_process():
            _local()
            return hosted_verify(proof.payload, proof.requirements)
        return facilitator_client().verify(proof.payload, proof.requirements)
    except FacilitatorUnavailable:
        raise
    except ChainUnreachable as exc:
        # x402 would have refused the payment for it (failed_to_verify_signature): the payer
        # is not at fault, and the same proof goes through once the chain answers again.
        raise FacilitatorUnavailable(f"the payment could not be checked on chain: {exc}"[:300]) from exc
    except Exception as exc:  # transport, RPC, an unreadable answer: nothing was settled
        raise FacilitatorUnavailable(f"facilitator verify failed: {exc}"[:300]) from exc


def facilitator_settle(proof: Proof) -> SettleOutcome:
    """Settle, and say what is known of the result. Anything short of a clear answer is
    PENDING: the authorization may have been broadcast, so the claim is kept for the
    reconciler (billing.reconcile), never released and never served as paid."""
    try:
        if facilitator_in_process():
            _local()
            response = hosted_settle(proof.payload, proof.requirements)
        else:
            response = facilitator_client().settle(proof.payload, proof.requirements)
    except httpx.ConnectError as exc:
        # The request never reached the facilitator: nothing can have been broadcast.
        return SettleOutcome(Settlement.FAILED, _response(proof, FACILITATOR_UNREACHABLE, str(exc)))
    except ChainUnreachable as exc:
        # Failed before a nonce was reserved: nothing can have been broadcast.
        return SettleOutcome(Settlement.FAILED, _response(proof, FACILITATOR_UNREACHABLE, str(exc)))
    except FacilitatorUnavailable as exc:
        return SettleOutcome(Settlement.FAILED, _response(proof, FACILITATOR_UNREACHABLE, str(exc)))
    except Exception as exc:
        logger.warning("settle outcome unknown for %s: %s", proof.payer, exc)
        return SettleOutcome(Settlement.PENDING, _response(proof, ERR_SETTLEMENT_PENDING, str(exc)))
    if response.success:
        return SettleOutcome(Settlement.SETTLED, response)
    if response.error_reason == ERR_SETTLEMENT_PENDING:
        return SettleOutcome(Settlement.PENDING, response)
    return SettleOutcome(Settlement.FAILED, response)


def _response(proof: Proof, reason: str, message: str) -> SettleResponse:
    network = getattr(proof.requirements, "network", settings.X402_NETWORK)
    return SettleResponse(
        success=False,
        error_reason=reason,
        error_message=message[:300],
        transaction="",
        network=str(network),
        payer=proof.payer,
    )
