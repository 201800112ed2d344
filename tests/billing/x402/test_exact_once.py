"""ExactVerifiedOnce (billing/facilitator/exact_once.py) with the SDK's verify counted: a settle
takes the same process's verify of the same payment once, within the window, while the
authorization is still good long enough; anything else verifies again."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from x402.mechanisms.evm.exact.facilitator import ExactEvmScheme, ExactEvmSchemeConfig

from billing.facilitator.exact_once import ExactVerifiedOnce


class Verified(SimpleNamespace):
    is_valid: bool


@pytest.fixture
def sdk_verifies(monkeypatch) -> list[bool]:
    """The SDK's _verify, answering valid and recording its `simulate`; its settle only verifies."""
    calls: list[bool] = []

    def verify(self: Any, payload: Any, requirements: Any, simulate: bool) -> Any:
        calls.append(simulate)
        return Verified(is_valid=payload.payload["signature"] != "0xbad"), object()

    def settle(self: Any, payload: Any, requirements: Any, context: Any = None) -> Any:
        return self._verify(payload, requirements, True)

    monkeypatch.setattr(ExactEvmScheme, "_verify", verify)
    monkeypatch.setattr(ExactEvmScheme, "settle", settle)
    return calls


def payment(signature: str = "0xaa", valid_for: float = 300, amount: str = "10000") -> tuple[Any, Any]:
    payload = SimpleNamespace(
        payload={
            "signature": signature,
            "authorization": {"from": "0x1", "nonce": "0x2", "validBefore": str(int(time.time() + valid_for))},
        },
        accepted=SimpleNamespace(model_dump_json=lambda: '{"scheme":"exact"}'),
    )
    requirements = SimpleNamespace(model_dump_json=lambda: f'{{"amount":"{amount}"}}')
    return payload, requirements


def scheme(reuse: float = 2.0) -> ExactVerifiedOnce:
    return ExactVerifiedOnce(signer=None, config=ExactEvmSchemeConfig(simulate_in_settle=True), reuse_seconds=reuse)


def test_a_settle_takes_the_verify_of_the_same_payment_once(sdk_verifies):
    s = scheme()
    payload, requirements = payment()
    verified = s._verify(payload, requirements, True)
    assert s.settle(payload, requirements) == verified and sdk_verifies == [True]
    # A second settle of the same payment (a retry) verifies and simulates again.
    s.settle(payload, requirements)
    assert sdk_verifies == [True, True]


def test_anything_else_verifies_again(sdk_verifies, monkeypatch):
    payload, requirements = payment()
    # Other requirements than those verified (another amount).
    s = scheme()
    s._verify(payload, requirements, True)
    s.settle(payload, payment(amount="20000")[1])
    assert len(sdk_verifies) == 2
    # The window is over.
    s._verify(payload, requirements, True)
    now = time.monotonic()
    monkeypatch.setattr("billing.facilitator.exact_once.time.monotonic", lambda: now + 3)
    s.settle(payload, requirements)
    assert len(sdk_verifies) == 4


def test_a_short_lived_or_refused_authorization_is_verified_again(sdk_verifies):
    s = scheme(reuse=60)
    # Good for 7 s at verify, for less than the SDK's 6 s margin after 2 s: verified again.
    payload, requirements = payment(valid_for=7)
    s._verify(payload, requirements, True)
    payload.payload["authorization"]["validBefore"] = str(int(time.time() + 5))
    s.settle(payload, requirements)
    assert sdk_verifies == [True, True]
    # A refused verify is not remembered; with the window at 0 nothing is.
    bad, bad_requirements = payment(signature="0xbad")
    s._verify(bad, bad_requirements, True)
    s.settle(bad, bad_requirements)
    assert len(sdk_verifies) == 4
    strict = scheme(reuse=0)
    good, good_requirements = payment()
    strict._verify(good, good_requirements, True)
    strict.settle(good, good_requirements)
    assert len(sdk_verifies) == 6
