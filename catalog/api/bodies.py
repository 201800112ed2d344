"""Request bodies (named by the interface document; their fields are ours)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class SpreadReading(Body):
    symbol: Annotated[str, Field(min_length=1, max_length=40)]
    venue_a: Annotated[str, Field(min_length=1, max_length=64)]
    venue_b: Annotated[str, Field(min_length=1, max_length=64)]
    spread_bps: Annotated[float, Field(ge=-100_000, le=100_000)]
    captured_at: datetime | None = None


class SpreadSnapshotIngest(Body):
    readings: Annotated[list[SpreadReading], Field(min_length=1, max_length=500)]


class BrianTransactionRequest(Body):
    prompt: Annotated[str, Field(min_length=1, max_length=2000, description="what to do, in plain language")]
    address: EvmAddress
    chain_id: Annotated[int, Field(ge=1)] = 8453


class MarketplaceExecuteBody(Body):
    capability: MarketplaceCapability
    params: dict[str, Any] = Field(default_factory=dict)


class ChatBody(Body):
    message: Annotated[str, Field(min_length=1, max_length=4000)]
    agent: Annotated[str | None, Field(max_length=64, description="agent slug (agenthub only)")] = None
