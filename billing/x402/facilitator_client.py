"""Adapter to the facilitator at FACILITATOR_URL (self-hosted or third party), through the
x402 package's HTTP facilitator client."""

from __future__ import annotations

from functools import lru_cache

import httpx
from django.conf import settings
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync
from x402.schemas import SettleResponse, VerifyResponse

from billing.x402.proof import Proof


class FacilitatorUnavailable(Exception):
    """The facilitator could not be asked (down, timeout, unreadable answer). Nothing was
    settled, so the same proof may be sent again."""


@lru_cache(maxsize=4)
def _client(url: str, timeout: float) -> HTTPFacilitatorClientSync:
    return HTTPFacilitatorClientSync(FacilitatorConfig(url=url, timeout=timeout))


def facilitator_client() -> HTTPFacilitatorClientSync:
    return _client(settings.FACILITATOR_URL, settings.FACILITATOR_TIMEOUT_SECONDS)


def facilitator_verify(proof: Proof) -> VerifyResponse:
    try:
        return facilitator_client().verify(proof.payload, proof.requirements)
    except (httpx.HTTPError, ValueError) as exc:
        raise FacilitatorUnavailable(f"facilitator verify failed: {exc}"[:300]) from exc


def facilitator_settle(proof: Proof) -> SettleResponse:
    """A settle that raised may or may not have reached the chain: the caller records it
    as failed with the error, never as settled."""
    return facilitator_client().settle(proof.payload, proof.requirements)
