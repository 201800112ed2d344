"""What a surface hands the payment front, and what it gets back: neutral of every protocol.

A surface describes what it received (`Brought`) and what it sells (`Sale`); the front
answers with a rail to pay by (`Chosen`), and in the end with what the call came to: `Sold`
(the content and its `Charge`) or `Refused` (status, code, message, and the x402 challenge
to pay instead). Each surface translates those into its own wire format only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from django.utils.datastructures import CaseInsensitiveMapping
from x402.schemas import SettleResponse

from a2a_service.core.errors import ApiError
from billing.rails.base import Content, Offer, Rail, Receipt
from billing.x402.challenge import Challenge

# Where an x402 proof rides: an HTTP payment header (PAYMENT-SIGNATURE / X-PAYMENT), or a
# protocol's metadata (MCP `_meta["x402/payment"]`, A2A `x402.payment.payload`).
ProofIn = Literal["headers", "metadata"]
# The schemes a surface takes unless it says otherwise, in the order they are looked for: a
# scheme added here is taken by every such surface (the REST paid paths, the marketplace, A2A)
# without a change to any of them. A payment proof first: it is an explicit, single-use order to
# pay this call (left unused, a signed authorization would stay open). Then sign-in (`siwx`,
# billing/front/signin.py) before the API key: it is the one scheme that looks at everything the
# wallet already owns (a pack, an entitlement, an unlocked item) before charging, and when it owns
# nothing it charges the same credits the key would. The SDK's clients prefer it to paying too.
DEFAULT_ACCEPTS: tuple[str, ...] = ("x402", "siwx", "credits")


@dataclass(frozen=True)
class Brought:
    """The payment material of one incoming call. `headers`: HTTP headers, or a protocol's
    equivalents under the same names (X-API-Key, Idempotency-Key, X-Session-Token,
    PAYMENT-SIGNATURE / X-PAYMENT), looked up without regard to case."""

    headers: Mapping[str, str] = field(default_factory=dict)
    x402_payload: object | None = None  # the PaymentPayload from metadata: an object or its JSON text
    proof_in: ProofIn = "headers"

    def header(self, name: str) -> str:
        found = self.headers if isinstance(self.headers, CaseInsensitiveMapping) else CaseInsensitiveMapping(self.headers)
        return str(found.get(name) or "")


@dataclass(frozen=True)
class Sale:
    """One call on sale, as the surface prepared it (billing.paid_call.paid_offer)."""

    offer: Offer
    resource_url: str  # the x402 resource its challenge names
    reference: str = ""  # a debit's ledger reference (the route's path, the task, the tool)
    # What makes two calls the same call, for an Idempotency-Key (REST: method, path, query and
    # body), and the path its stored answer is kept under (default: reference).
    fingerprint: str = ""
    idempotency_path: str = ""
    asking: str = ""  # the detail of the challenge to an unpaid call (default: the price)
    # The payment schemes this surface takes (billing/front/schemes.py), in the order they are
    # looked for: an x402 proof first, the most specific.
    accepts: tuple[str, ...] = DEFAULT_ACCEPTS


@dataclass(frozen=True)
class Chosen:
    scheme: str
    rail: Rail


@dataclass(frozen=True)
class Charge:
    """What the call was charged, by which rail: the receipt every surface shows."""

    rail: str  # x402, credits, session, mcp_managed_pack, free
    charged_atomic: int | None  # atomic USDC; None for a prepaid call (it used one of its calls)
    receipt: Receipt  # the rail's own receipt, for wire details (x402 version, a replay's stored answer)
    transaction: str = ""  # the x402 settlement's transaction
    payer: str = ""
    settlement: SettleResponse | None = None
    balance_atomic: int | None = None  # credits left
    calls_remaining: int | None = None  # prepaid calls left
    replay: bool = False  # an Idempotency-Key's first answer again: nothing charged now


@dataclass(frozen=True)
class Sold:
    content: Content
    charge: Charge


RefusalKind = Literal[
    "unpaid",  # nothing that pays was brought: the challenge
    "rejected",  # an x402 proof refused (facilitator-style reason in code)
    "refused",  # any other refusal: unknown key (401), not enough credit (402), not covered (403)...
    "pending",  # paid, settlement not confirmed: the same proof collects it later (202)
    "unreachable",  # the facilitator or the chain did not answer: the same proof again (503)
    "unavailable",  # the product has nothing to deliver (503; charged: kept for the payer)
]


@dataclass(frozen=True)
class Refused:
    kind: RefusalKind
    status: int  # the HTTP-equivalent status
    code: str
    message: str
    # The x402 requirements to pay instead, for every 402 of a surface that takes x402.
    challenge: Challenge | None = None
    scheme: str | None = None  # the scheme that was brought and refused (None: nothing was)
    charged: bool = False
    retry_after: int | None = None
    # The domain error, for surfaces that answer with its REST body (None for x402 refusals).
    error: ApiError | None = None

    @property
    def asks_x402(self) -> bool:
        """Answered with the x402 challenge itself (an unpaid call, a refused proof)."""
        return self.kind in ("unpaid", "rejected") and self.challenge is not None


PayResult = Sold | Refused
