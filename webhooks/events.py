"""The pushed event kinds: their payload schemas (published at /api/a2a/webhooks/events and in
the OpenAPI document), default per-event prices, and the signed regime attestation."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from eth_account import Account
from eth_account.messages import encode_defunct
from pydantic import BaseModel, Field


class CopySignal(BaseModel):
    signal_id: int
    desk: str
    symbol: str
    side: str = Field(description="long or short")
    entry_price: float
    opened_at: str


class RegimeAttestation(BaseModel):
    regime: str
    confidence: float
    as_of: str
    message: str = Field(description="the canonical JSON that was signed")
    signature: str = Field(description="EIP-191 signature of `message` by `signer`")
    signer: str = Field(description="the service's attestation address, published in /api/a2a/ai-agent.json")


class PredictionAlert(BaseModel):
    venue: str
    market_id: str
    question: str
    yes_price: float | None
    change: float | None = Field(None, description="move in yes price since the previous reading")
    at: str
    # A cross-venue divergence opening (catalog/analytics/prediction_match.py) fills these; a
    # price move leaves them empty.
    reason: str = Field(
        "move", description="move: the yes price moved; divergence: a matched pair opened a gap"
    )
    other_venue: str | None = Field(None, description="divergence: the matched market's venue")
    other_market_id: str | None = None
    other_yes_price: float | None = None
    gap: float | None = Field(None, description="divergence: |yes - other_yes|")
    net_gap: float | None = Field(None, description="divergence: the gap net of both venues' fees")
    confidence: float | None = Field(None, description="divergence: the match confidence in [0, 1]")


class PairArbAlert(BaseModel):
    symbol: str
    venue_a: str = Field(description="buy here (at its ask), for the exchanges feed's readings")
    venue_b: str = Field(description="sell here (at its bid)")
    spread_bps: float = Field(description="the gross gap in bps of the buy price")
    net_bps: float | None = Field(
        None, description="the gap net of both venues' taker fees (None for ingested readings)"
    )
    at: str


class RiskExitAlert(BaseModel):
    desk: str
    symbol: str
    reason: str
    exit_price: float | None
    at: str


class MorningBriefLine(BaseModel):
    text: str
    source: str = Field(description="the line's source: the item's URL, else the API path that sells it")


class MorningBriefSection(BaseModel):
    name: str = Field(description="regime, movers, news, calendar or predictions")
    title: str
    lines: list[MorningBriefLine]


class MorningBrief(BaseModel):
    """The published morning brief, pushed to the buyers of /x402/morning-brief/pro for their
    period (MORNING_BRIEF_PRO_DAYS), once per brief."""

    brief_id: int
    brief_date: str | None = Field(description="the UTC day a composed brief is for (None: written by staff)")
    title: str
    summary: str
    sections: list[MorningBriefSection] = Field(
        description="the composed lines (empty for a staff-written brief)"
    )
    body: str = Field(description="the brief in full (markdown)")
    published_at: str | None
    as_of: str | None = Field(description="the composition time (a staff-written brief: its last edit)")
    replay: bool = Field(description="true: composed from the local replay's recorded data")


class DelegatedOrder(BaseModel):
    """A desk signal turned into an order of your execution delegation: place it on your venue,
    then report each fill at POST /api/a2a/account/delegation/report-fill with order_id."""

    order_id: str
    kind: str = Field(
        description="entry: the desk opened the signal; exit: the desk closed it, close what you filled"
    )
    closes_order_id: str | None = Field(description="exit: the entry order it closes")
    reason: str
    delegation_id: str
    desk: str
    signal_id: int
    symbol: str
    venue: str = Field(description="the venue whose prices the desk signalled on")
    side: str = Field(description="buy (a long signal) or sell (a short signal)")
    order_type: str = Field(description="market")
    reference_price: float = Field(description="entry: the signal's entry price; exit: its exit price")
    stop: float | None
    target: float | None
    size: float = Field(
        description="entry: notional_usdc / reference_price; exit: the size reported filled on the entry (base asset)"
    )
    notional_usdc: float = Field(
        description="entry: max_notional_per_signal x the signal's size fraction, within the delegation's remaining "
        "total; exit: size x reference_price"
    )
    size_fraction: float
    signal_expires_at: str | None
    delegation_expires_at: str
    report_fill: str


class PoolSignal(BaseModel):
    """A copy signal to a coordination pool member, in its slot, with its size allocation."""

    signal_id: int
    desk: str
    symbol: str
    side: str = Field(description="long or short")
    venue: str
    entry_price: float
    stop: float | None
    target: float | None
    opened_at: str
    size_fraction: float = Field(description="the desk's risk-based size for the signal")
    published_size_usdc: float = Field(description="the size the desk publishes to its pool for this signal")
    requested_usdc: float = Field(description="what your membership asks for (max_size_usdc or share x size)")
    allocation_usdc: float = Field(
        description="your part: the requests scaled down pro rata when they add up to more than the size"
    )
    slot: int = Field(description="0-based; slot i is delivered i x slot_seconds after the signal")
    slots: int
    slot_seconds: float
    deliver_at: str


class TestEvent(BaseModel):
    message: str
    subscription_id: int
    sent_at: str


EVENT_SCHEMAS: dict[str, type[BaseModel]] = {
    "copy_signal": CopySignal,
    "regime_attestation": RegimeAttestation,
    "prediction_alert": PredictionAlert,
    "pair_arb_alert": PairArbAlert,
    "risk_exit_alert": RiskExitAlert,
    "morning_brief": MorningBrief,
    "delegated_order": DelegatedOrder,
    "pool_signal": PoolSignal,
    "test": TestEvent,
}
# Per delivered event, in atomic USDC, when no signal desk pack covers the account (staff
# edit them as EventPrice rows; these seed them).
DEFAULT_EVENT_PRICES = {
    "copy_signal": 10_000,
    "regime_attestation": 5_000,
    "prediction_alert": 10_000,
    "pair_arb_alert": 10_000,
    "risk_exit_alert": 10_000,
    # A desk signal in real time, as an order of your delegation or in your pool slot: priced
    # as a copy_signal push (a signal desk pack covers them).
    "delegated_order": 10_000,
    "pool_signal": 10_000,
    # Never charged: only accounts entitled by the pro brief receive it (ENTITLED_ONLY_KINDS).
    "morning_brief": 0,
}
# Kinds delivered only to accounts whose push entitlement lists them by name; never sold per
# event nor covered by the signal desk pack (an entitlement for every kind). morning_brief is
# the pro brief's content (0.15 for MORNING_BRIEF_PRO_DAYS): a per-event price or the pack
# would give the product away to any subscriber.
ENTITLED_ONLY_KINDS = frozenset({"morning_brief"})


def attestation_signer() -> str:
    return (
        Account.from_key(settings.ATTESTATION_PRIVATE_KEY).address if settings.ATTESTATION_PRIVATE_KEY else ""
    )


def regime_attestation(*, regime: str, confidence: float, as_of: str) -> dict[str, Any]:
    """Sign the regime with the service's attestation key (EIP-191), so an agent can check
    that it came from this service: recover the signer of `message` and compare."""
    message = json.dumps(
        {"regime": regime, "confidence": confidence, "as_of": as_of}, sort_keys=True, separators=(",", ":")
    )
    signed = Account.from_key(settings.ATTESTATION_PRIVATE_KEY).sign_message(encode_defunct(text=message))
    return RegimeAttestation(
        regime=regime,
        confidence=confidence,
        as_of=as_of,
        message=message,
        signature="0x" + signed.signature.hex().removeprefix("0x"),
        signer=attestation_signer(),
    ).model_dump()
