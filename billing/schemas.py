"""Billing's response bodies: credits (accounts, deposits, top-up guides), sales figures,
whale tiers and surge prices, the facilitator's and the x402 route's state."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from a2a_service.core.schemas import ErrorOut, Out
from catalog.api.schemas import PaymentAlternatives, SkuOut


class CreditBundleOut(Out):
    bundle_usdc: float
    bonus_pct: float
    bonus_usdc: float
    total_credits_usdc: float
    chain: str
    token: str
    register_endpoint: str
    topup_endpoint: str
    instructions: str


class CreditOnboardingOut(Out):
    register_endpoint: str
    topup_endpoint: str
    instructions: str


class TopupStepOut(Out):
    step: int
    title: str
    method: str | None = None
    url: str | None = None
    body_example: dict[str, Any] | None = None
    response_fields: list[str] | None = None
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    min_usdc: float | None = None
    note: str | None = None
    header: str | None = None
    examples: list[str] | None = None


class TopupExampleOut(Out):
    name: str
    method: str
    url: str
    price_usdc_hint: float
    header_required: str


class TopupInfoOut(Out):
    chain: str
    token: str
    contract: str
    treasury_address: str
    min_deposit_usdc: float
    credit_bundle: CreditBundleOut
    credit_prepay_guide_url: str
    payment_alternatives: PaymentAlternatives
    instructions: str
    steps: list[TopupStepOut]
    examples: list[TopupExampleOut]


class BundleInfoOut(Out):
    credit_bundle: CreditBundleOut
    min_deposit_usdc: float
    treasury_address: str
    contract: str
    credit_billing_enabled: bool


class CreditPrepayGuideOut(Out):
    title: str
    for_whom: str
    credit_billing_enabled: bool
    treasury_address: str
    contract: str
    chain: str
    min_deposit_usdc: float
    credit_bundle: CreditBundleOut
    steps: list[TopupStepOut]
    topup_info_url: str
    x402_alternative: str


class PaymentRouteState(Out):
    name: str
    available: bool = Field(description="whether this payment route is accepted by this deployment now")
    how: str


class SalesFigures(Out):
    window_days: int
    sales: int
    revenue_usdc: float
    paying_wallets: int
    top_skus: list[dict[str, Any]]


class ConversionOut(Out):
    window_days: int
    generated_at: str
    hits: dict[str, int] = Field(
        description="free endpoint hits, teaser views and 402 challenges in the window"
    )
    payment_attempts: int
    sales: int
    challenge_to_sale_pct: float | None
    skus_live: int
    skus_activated: int = Field(description="SKUs with at least one sale in the window")
    revenue_usdc: dict[str, float] = Field(description="revenue per window: 24h, 7d, 30d")


class MonetizationStatusOut(Out):
    credit_billing_enabled: bool
    payment_routes: list[PaymentRouteState]
    skus_live: int
    skus_disabled: int
    network: str
    treasury_address: str
    facilitator: str


class SurgeSkuOut(Out):
    sku: str
    price_usdc: float
    price_usdc_base: float
    surge_multiplier: float


class SurgeOut(Out):
    regime: str | None
    regime_as_of: str | None
    skus: list[SurgeSkuOut]


class WhaleTierOut(Out):
    name: str
    min_balance_usdc: float
    bonus_pct: float
    perks: list[str]


class WhaleCatalogOut(Out):
    tiers: list[WhaleTierOut]
    status_endpoint: str
    token_endpoint: str


class FacilitatorHealthOut(Out):
    facilitator: str
    reachable: bool
    latency_ms: float | None
    supported: list[dict[str, Any]]
    error: str | None
    checked_at: str


class PlatformStatsOut(Out):
    generated_at: str
    skus_live: int
    skus_total: int
    news_items: int
    news_items_24h: int
    catalog_agents: int
    partner_agents: int
    prediction_markets: int
    exchange_markets: int
    telemetry_nodes_online: int
    sales_all_time: int
    revenue_all_time_usdc: float
    paying_wallets: int


class X402StatusOut(Out):
    live_skus: int = Field(description="number of SKUs that answer 402 now (the skus list)")
    coming_soon: list[str] = Field(
        description="SKUs switched on but whose product is not built yet; not on sale, not counted"
    )
    network: str
    asset: str
    pay_to: str
    facilitator: str
    skus: list[SkuOut]
    performance_30d: SalesFigures


# --- credits --------------------------------------------------------------------------
class RegisterOut(Out):
    api_key: str = Field(description="shown once; only its hash is stored")
    wallet_address: str
    credit_balance_usdc: float
    treasury_address: str
    rotated: bool = Field(description="true when an existing wallet proved ownership and got a new key")


class OwnershipMessageOut(Out):
    wallet_address: str
    message: str = Field(
        description="sign with the wallet (EIP-191 personal_sign); POST it to /api/a2a/account/register "
        "as `signature` with this `nonce`"
    )
    nonce: str = Field(description="send back with the signature; each challenge proves ownership once")
    expires_at: str


class OwnershipProofRequiredOut(ErrorOut):
    """401 to a registration without a valid proof: a fresh challenge to sign and retry with."""

    wallet_address: str
    message: str | None = Field(None, description="a fresh challenge to sign (absent when none was issued)")
    nonce: str | None = None
    expires_at: str | None = None
    message_endpoint: str


class DepositOut(Out):
    tx_hash: str
    log_index: int
    block_number: int
    amount_usdc: float
    bonus_usdc: float
    state: str = Field(
        description="pending_confirmations, credited, below_minimum, unmatched (waits for the wallet to prove "
        "ownership) or reorged (orphaned by a chain reorganisation; its credit was reversed)"
    )
    seen_at: str
    credited_at: str | None


class LedgerRowOut(Out):
    id: int
    amount_usdc: float
    balance_after_usdc: float
    kind: str
    reference: str
    sku: str | None
    created_at: str


class AccountOut(Out):
    wallet_address: str
    credit_balance_usdc: float
    ownership_verified: bool = Field(
        description="false: the wallet has not signed a challenge yet, and its deposits wait (unmatched) until "
        "it does (POST /api/a2a/account/register with a signature)"
    )
    credit_billing_enabled: bool
    treasury_address: str
    deposits: list[DepositOut]
    ledger: list[LedgerRowOut]
