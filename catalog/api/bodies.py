"""Request bodies (named by the interface document; their fields are ours)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, RootModel, model_validator

EvmAddress = Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{40}$", description="EVM address, 0x + 40 hex")]
WebhookEvent = Literal[
    "copy_signal",
    "regime_attestation",
    "prediction_alert",
    "pair_arb_alert",
    "risk_exit_alert",
    "morning_brief",  # delivered only with the pro brief's entitlement (webhooks/events.py)
    "pool_signal",  # a desk's coordination pool (webhooks/pool/), to members only
    "test",
]
MarketplaceCapability = Literal[
    "telemetry_status",
    "sentiment",
    "signals",
    "news_catalog",
    "intel_latest",
    "exchange_market_discovery",
    "tokenized_watchlist",
    "tokenized_premium_digest",
    "market_agent_news",
]


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class A2aRegisterBody(Body):
    wallet_address: EvmAddress
    nonce: Annotated[
        str | None,
        Field(
            None,
            pattern=r"^[0-9a-fA-F]{32}$",
            description="the nonce of the challenge you signed (from GET /api/a2a/account/register/message, "
            "or from the 401 answer to a POST without a signature)",
        ),
    ] = None
    signature: Annotated[
        str | None,
        Field(
            None,
            pattern=r"^0x(?:[0-9a-fA-F]{2}){65,4096}$",
            description="the wallet's EIP-191 (personal_sign) signature of the challenge message; a contract "
            "wallet's signature is checked with EIP-1271 isValidSignature",
        ),
    ] = None


class A2aWebhookRegisterBody(Body):
    url: Annotated[
        str, Field(min_length=8, max_length=500, pattern=r"^https?://", description="receiver URL")
    ]
    events: Annotated[list[WebhookEvent], Field(min_length=1, max_length=6)]
    description: Annotated[str | None, Field(max_length=200)] = None


class A2aDelegationActivateBody(Body):
    """Execution delegation (webhooks/delegation/): the desk's new signals on `symbols` are pushed
    to `webhook_url` as orders sized within the limits until the delegation expires or is revoked."""

    desk: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description="a desk of the track record (/api/a2a/program/scorecard-30d)",
        ),
    ]
    symbols: Annotated[
        list[
            Annotated[str, Field(min_length=3, max_length=40, pattern=r"^[A-Za-z0-9.\-]+/[A-Za-z0-9.:\-]+$")]
        ],
        Field(min_length=1, max_length=50, description="symbols the desk trades, e.g. BTC/USDT"),
    ]
    max_notional_per_signal_usdc: Annotated[
        float, Field(gt=0, le=10_000_000, description="no order is larger than this")
    ]
    max_notional_total_usdc: Annotated[
        float, Field(gt=0, le=100_000_000, description="the orders of the delegation never add up to more")
    ]
    expires_in_hours: Annotated[int, Field(ge=1, le=720, description="the delegation ends then")] = 24
    webhook_url: Annotated[
        str,
        Field(
            min_length=8,
            max_length=500,
            pattern=r"^https?://",
            description="where orders are pushed (https, public address; the same checks as webhooks)",
        ),
    ]
    include_open: bool = Field(
        False,
        description="also push an order for each of the desk's signals open now on those symbols "
        "(otherwise only signals published from now on)",
    )


class A2aDelegationFillBody(Body):
    order_id: Annotated[str, Field(min_length=1, max_length=64, description="the delegated order's id")]
    venue: Annotated[str, Field(min_length=1, max_length=64)]
    fill_price: Annotated[float, Field(gt=0, le=1e12)]
    size: Annotated[float, Field(gt=0, le=1e15, description="in the base asset")]
    fee_usdc: Annotated[float, Field(ge=0, le=10_000_000)] = 0.0
    filled_at: datetime
    tx_hash: Annotated[
        str | None, Field(min_length=1, max_length=100, description="on-chain or venue trade id")
    ] = None
    client_fill_id: Annotated[
        str | None, Field(min_length=1, max_length=64, description="your id for this fill (idempotency)")
    ] = None

    @model_validator(mode="after")
    def _fits_the_ledger(self) -> A2aDelegationFillBody:
        # The fill's notional is stored in atomic USDC as a signed 64-bit integer.
        if self.fill_price * self.size > LEDGER_MAX_USDC:
            raise ValueError(f"size x fill_price is more than the ledger holds ({LEDGER_MAX_USDC:.0f} USDC)")
        return self


# The largest amount one ledger figure holds: a signed 64-bit integer of atomic USDC (6 decimals).
LEDGER_MAX_USDC = (2**63 - 1) / 10**6


class SpreadReading(Body):
    symbol: Annotated[str, Field(min_length=1, max_length=40)]
    venue_a: Annotated[str, Field(min_length=1, max_length=64)]
    venue_b: Annotated[str, Field(min_length=1, max_length=64)]
    spread_bps: Annotated[float, Field(ge=-100_000, le=100_000)]
    captured_at: datetime | None = None


class SpreadSnapshotIngest(Body):
    readings: Annotated[list[SpreadReading], Field(min_length=1, max_length=500)]


ReferralTag = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="affiliate tag that referred you; the first one an account sends stays its referral",
    ),
]


class BrianTransactionRequest(Body):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    prompt: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2000,
            description='what to do, e.g. "send 5 USDC to 0x...", "approve 100 USDC for 0x...", '
            '"wrap 0.1 ETH", "unwrap 0.1 WETH", "send 0.01 ETH to 0x..."',
        ),
    ]
    address: Annotated[
        str,
        Field(pattern=r"^0x[0-9a-fA-F]{40}$", description="the sender: the wallet that will sign and send"),
    ]
    chain_id: Annotated[
        int | None,
        Field(
            ge=1,
            validation_alias=AliasChoices("chain_id", "chainId"),
            description="the chain (also accepted as chainId); must be the service's chain (Base, 8453); "
            "default: the service's chain",
        ),
    ] = None
    referral: ReferralTag | None = None


# --- bounty submissions (POST /api/a2a/bounties/{id}/submit; the bounty's kind picks the shape) ---
class FillReportSubmission(Body):
    """A fill report: which order, where, and what filled."""

    order_id: Annotated[str, Field(min_length=1, max_length=128, description="the venue's order id")]
    venue: Annotated[str, Field(min_length=1, max_length=64)]
    symbol: Annotated[str, Field(min_length=1, max_length=40)]
    side: Literal["buy", "sell"]
    quantity: Annotated[float, Field(gt=0)]
    price: Annotated[float, Field(gt=0)]
    filled_at: datetime | None = None
    tx_hash: Annotated[str | None, Field(pattern=r"^0x[0-9a-fA-F]{64}$")] = None


class ResolutionMismatchSubmission(Body):
    """A cross-venue prediction match whose two venues resolved differently."""

    match_id: Annotated[int, Field(ge=1, description="id of the cross-venue match (prediction catalog)")]
    evidence: Annotated[
        str, Field(min_length=1, max_length=2000, description="links or text showing both resolutions")
    ]


class OtherSubmission(Body):
    text: Annotated[str, Field(min_length=1, max_length=4000)]
    url: Annotated[str | None, Field(max_length=500, pattern=r"^https?://")] = None


class BountySubmitBody(
    RootModel[SpreadSnapshotIngest | FillReportSubmission | ResolutionMismatchSubmission | OtherSubmission]
):
    """The submission, in the shape of the bounty's kind: spread_snapshot -> SpreadSnapshotIngest
    ({"readings": [...]}), fill_report -> FillReportSubmission, resolution_mismatch ->
    ResolutionMismatchSubmission, other -> OtherSubmission."""


class MarketplaceExecuteBody(Body):
    capability: MarketplaceCapability
    params: dict[str, Any] = Field(default_factory=dict)


class ChatBody(Body):
    message: Annotated[
        str,
        Field(
            min_length=1,
            max_length=4000,
            description="the question, e.g. 'BTC regime?', 'cheapest venue to DCA 500 USDC into ETH', "
            "'what closes on Kalshi this week'",
        ),
    ]
    agent: Annotated[str | None, Field(max_length=64, description="agent slug (agenthub only)")] = None
