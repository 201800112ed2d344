"""`upto` in the 402 of a metered product (catalog ProductSpec.metered): the payer authorizes a
maximum (the price) with a Permit2 signature through x402UptoPermit2Proxy, and the service
settles what the call used (billing/rails/upto.py).

The requirements are the SDK's own: `UptoEvmServerScheme.enhance_payment_requirements` over a
copy of the `exact` requirements, with the facilitator's `/supported` kind, which gives
`assetTransferMethod: permit2` and `facilitatorAddress` (the only address the payer's witness
lets settle). A deployment with no facilitator that settles `upto` offers none.

The facilitator is asked for its kind once per process (in process: its gas key; at
FACILITATOR_URL: its /supported, kept FACILITATOR_KIND_TTL_SECONDS, a failure kept
FACILITATOR_KIND_RETRY_SECONDS, meanwhile `upto` is not offered). `upto_fingerprint` is part
of the cached 402's key (billing/x402/fastpath.py), so a stored challenge never names another
facilitator's address."""

from __future__ import annotations

import logging
import threading
import time
from functools import lru_cache

from django.conf import settings
from x402 import x402FacilitatorSync
from x402.mechanisms.evm.upto import UptoEvmServerScheme
from x402.schemas import PaymentRequirements, SupportedKind

from billing.facilitator.service import facilitator_get
from billing.x402.challenge import ChallengeContext, accepts_register
from billing.x402.facilitator_client import facilitator_client
from catalog.products.registry import spec_get

logger = logging.getLogger(__name__)

SCHEME = "upto"
FACILITATOR_KIND_TTL_SECONDS = 300
FACILITATOR_KIND_RETRY_SECONDS = 30

_SERVER = UptoEvmServerScheme()  # type: ignore[no-untyped-call]  # the SDK's, stateless
_remote_lock = threading.Lock()
# (FACILITATOR_URL, network) -> (the kind or None, until when it is kept)
_remote: dict[tuple[str, str], tuple[SupportedKind | None, float]] = {}


def _kind_of(kinds: list[SupportedKind], network: str) -> SupportedKind | None:
    for kind in kinds:
        if kind.scheme == SCHEME and kind.network == network and kind.x402_version == 2:
            return kind
    return None


@lru_cache(maxsize=8)
def _local_kind(facilitator: x402FacilitatorSync, network: str) -> SupportedKind | None:
    # One per facilitator (one per configuration, billing/facilitator/service.py): the cached
    # 402's key asks for it on every unpaid request.
    return _kind_of(facilitator.get_supported().kinds, network)


def upto_kind() -> SupportedKind | None:
    """Our facilitator's `upto` kind on our network (with facilitatorAddress), or None."""
    network = settings.X402_NETWORK
    if not settings.FACILITATOR_URL:
        facilitator = facilitator_get()
        return None if facilitator is None else _local_kind(facilitator, network)
    key = (settings.FACILITATOR_URL, network)
    with _remote_lock:
        kept = _remote.get(key)
        if kept is not None and kept[1] > time.monotonic():
            return kept[0]
    try:
        kind = _kind_of(facilitator_client().get_supported().kinds, network)
        life = FACILITATOR_KIND_TTL_SECONDS
    except Exception as exc:  # unreachable: `exact` is still offered, `upto` again once it answers
        logger.info("upto: the facilitator's /supported did not answer: %s", exc)
        kind, life = None, FACILITATOR_KIND_RETRY_SECONDS
    with _remote_lock:
        _remote[key] = (kind, time.monotonic() + life)
    return kind


def upto_fingerprint() -> str:
    """What of the facilitator the `upto` offer depends on: its settling address."""
    kind = upto_kind()
    return str((kind.extra or {}).get("facilitatorAddress", "")) if kind is not None else ""


def upto_offered(sku: str) -> bool:
    spec = spec_get(sku)
    return spec is not None and spec.metered is not None


def upto_requirements(context: ChallengeContext) -> PaymentRequirements | None:
    """The challenge builder (billing/x402/challenge.py accepts_register): a metered product's
    `upto` requirements, the authorized maximum being its price; None otherwise."""
    if not upto_offered(context.sku):
        return None
    kind = upto_kind()
    if kind is None:
        return None
    exact = context.exact
    base = exact.model_copy(update={"scheme": SCHEME, "extra": dict(exact.extra or {})})
    return _SERVER.enhance_payment_requirements(base, kind, [])


accepts_register(SCHEME, upto_requirements)
