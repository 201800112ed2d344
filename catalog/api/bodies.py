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
    strategy: Annotated[
        str, Field(min_length=1, max_length=64, description="trading module slug (mcp/strategies)")
    ]
    max_notional_usdc: Annotated[float, Field(gt=0, le=10_000_000)]
    venues: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=64)]], Field(min_length=1, max_length=10)
    ]
    expires_in_hours: Annotated[int, Field(ge=1, le=720)] = 24


class A2aDelegationFillBody(Body):
    delegation_id: Annotated[str, Field(min_length=1, max_length=64)]
    symbol: Annotated[str, Field(min_length=1, max_length=40)]
    side: Literal["buy", "sell"]
    quantity: Annotated[float, Field(gt=0)]
    price: Annotated[float, Field(gt=0)]
    venue: Annotated[str, Field(min_length=1, max_length=64)]
    filled_at: datetime | None = None
    tx_hash: Annotated[str | None, Field(pattern=r"^0x[0-9a-fA-F]{64}$")] = None


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
