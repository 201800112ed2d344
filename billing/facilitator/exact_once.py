"""The `exact` facilitator scheme, verifying a payment once per paid call.

A paid call asks the facilitator to verify (the signature, the payer's code, the asset, and
a simulated transferWithAuthorization) and, once the product has run, to settle. The SDK's
settle verifies again from the start, and with `simulate_in_settle` (which this service sets,
so that a payer who drained the wallet since costs a refused settle and not a reverted
transaction paid in our gas) simulates again: four of a call's eight requests to the chain.

This scheme keeps the SDK's verify and settle unchanged and remembers, for a short time, the
result of each successful verify (simulation included). A settle of the same payload and
requirements within `reuse_seconds` of that verify takes it instead of verifying again, once;
any other settle (later, a retry, another process's verify) verifies and simulates as before.
What the remembered result cannot know is what changed on chain in between: a payer who
spends the authorization's funds or nonce within that window (the product's run, milliseconds
for the products sold this way) costs one reverted transaction's gas, which is what the SDK's
own default (no simulation in settle) risks on every call."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from x402.mechanisms.evm.exact.facilitator import ExactEvmScheme, ExactEvmSchemeConfig
from x402.pending_settlement_store import PendingSettlementStore

# Verified payloads remembered per process; a settle follows its verify within one call.
REMEMBERED = 1024
# The SDK's verify refuses an authorization whose validBefore is less than this far away.
VALID_BEFORE_MARGIN = 6


class ExactVerifiedOnce(ExactEvmScheme):
    def __init__(
        self,
        signer: Any,
        config: ExactEvmSchemeConfig,
        *,
        reuse_seconds: float,
        pending_store: PendingSettlementStore | None = None,
    ) -> None:
        super().__init__(signer, config, pending_store)
        self.reuse_seconds = reuse_seconds
        self._verified: OrderedDict[tuple[str, str], tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._settling = threading.local()

    def settle(self, payload: Any, requirements: Any, context: Any = None) -> Any:
        self._settling.active = True
        try:
            return super().settle(payload, requirements, context)
        finally:
            self._settling.active = False

    def _verify(self, payload: Any, requirements: Any, simulate: bool) -> Any:
        key = _key(payload, requirements)
        if getattr(self._settling, "active", False):
            with self._lock:
                remembered = self._verified.pop(key, None) if key is not None else None
            if (
                remembered is not None
                and time.monotonic() - remembered[0] <= self.reuse_seconds
                and _valid_long_enough(payload)
            ):
                return remembered[1]
            return super()._verify(payload, requirements, simulate)
        result = super()._verify(payload, requirements, simulate)
        if key is not None and simulate and self.reuse_seconds > 0 and result[0].is_valid:
            with self._lock:
                self._verified[key] = (time.monotonic(), result)
                while len(self._verified) > REMEMBERED:
                    self._verified.popitem(last=False)
        return result


def _valid_long_enough(payload: Any) -> bool:
    """The authorization is still good for as long as the SDK's verify demands of it now
    (validBefore at least VALID_BEFORE_MARGIN seconds away): a remembered verify saw it
    with that margin up to `reuse_seconds` ago, and a transfer broadcast later may revert."""
    try:
        valid_before = int(payload.payload["authorization"]["validBefore"])
    except (KeyError, TypeError, ValueError):
        return False
    return valid_before >= time.time() + VALID_BEFORE_MARGIN


def _key(payload: Any, requirements: Any) -> tuple[str, str] | None:
    """The payload's signature and authorization with the requirements it was verified against
    (all of what the verification read from the request), or None for a payload that is not an
    EIP-3009 authorization (Permit2's go their own way in the SDK)."""
    body = getattr(payload, "payload", None)
    if not isinstance(body, dict) or not isinstance(body.get("signature"), str):
        return None
    authorization = body.get("authorization")
    if not isinstance(authorization, dict):
        return None
    signed = body["signature"] + repr(sorted(authorization.items())) + payload.accepted.model_dump_json()
    return signed, requirements.model_dump_json()
