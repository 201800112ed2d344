"""Billing's response bodies: credits (accounts, deposits, top-up guides), sales figures,
whale tiers and surge prices, the facilitator's and the x402 route's state."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from a2a_service.core.inputs import QueryModel
from a2a_service.core.schemas import ErrorOut, Out
from catalog.selectors.schemas import PaymentAlternatives, SkuOut


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


class RailSalesOut(Out):
    sales: int
    revenue_usdc: float = Field(
        description="money taken by this rail; a call a pack paid for adds none (the pack was the sale)"
    )


RAILS_DESCRIPTION = (
    "by the rail that paid (x402, credits, session, mcp_managed_pack; only rails that sold): every paid call is "
    "one sale, whatever paid it"
)


class SalesFigures(Out):
    window_days: int
    sales: int = Field(description="paid calls sold, every rail")
    revenue_usdc: float
    paying_wallets: int
    top_skus: list[dict[str, Any]]
    by_rail: dict[str, RailSalesOut] = Field(default_factory=dict, description=RAILS_DESCRIPTION)


class ConversionOut(Out):
    window_days: int
    generated_at: str
    hits: dict[str, int] = Field(
        description="free endpoint hits, teaser views and 402 challenges in the window"
    )
    payment_attempts: int = Field(description="paid attempts in the window: the sales, and x402 payments that failed")
    sales: int = Field(description="paid calls sold in the window, every rail")
    sales_by_rail: dict[str, RailSalesOut] = Field(default_factory=dict, description=RAILS_DESCRIPTION)
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


class RateLimitOut(Out):
    requests: int
    per_seconds: int
    applies_to: str = Field(description="what the budget is counted per")


class WhaleTierOut(Out):
    name: str
    min_deposit_atomic: int = Field(description="USDC (atomic, 6 decimals) deposited within the window")
    min_deposit_usdc: float
    min_balance_usdc: float = Field(description="deprecated: the same as min_deposit_usdc")
    bonus_pct: float = Field(description="added to each later deposit as its own whale_bonus ledger row")
    rate_limit_per_minute: int = Field(
        description="requests per minute per caller address with the account's X-API-Key or X-Whale-Token"
    )
    benefits: list[str] = Field(description="what the tier gives, from the figures above")
    perks: list[str] = Field(description="other perks staff deliver for this tier")


class WhaleCatalogOut(Out):
    tiers: list[WhaleTierOut]
    window_days: int = Field(description="tiers are earned by the credited deposits of this many days")
    base_rate_limit: RateLimitOut | None = Field(
        description="the limit without a tier; null: none configured"
    )
    token_header: str
    how_earned: str
    status_endpoint: str
    token_endpoint: str


class WhaleNextTierOut(Out):
    name: str
    min_deposit_atomic: int
    min_deposit_usdc: float
    needed_atomic: int = Field(description="still to deposit within the window")
    needed_usdc: float
    progress_pct: float = Field(description="deposited in the window as a percent of this tier's minimum")


class WhaleStatusOut(Out):
    wallet_address: str
    tier: WhaleTierOut | None = Field(description="the tier held now; null: none")
    rate_limit: RateLimitOut | None = Field(
        description="the limit calls with this account's key or whale tokens get now"
    )
    window_days: int
    window_start: str = Field(description="deposits credited after this instant count")
    window_end: str = Field(description="now")
    deposited_atomic: int = Field(description="credited deposits in the window (bonuses not counted)")
    deposited_usdc: float
    deposits_counted: int
    tier_holds_until: str | None = Field(
        description="when the tier lapses if nothing more is deposited (its oldest counted deposits leave the "
        "window)"
    )
    next_tier: WhaleNextTierOut | None = Field(description="null at the top tier")
    whale_bonus_earned_atomic: int = Field(description="whale_bonus ledger rows credited in the window")
    whale_bonus_earned_usdc: float
    active_tokens: int
    token_endpoint: str
    catalog_endpoint: str


class WhaleTokenBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ttl_seconds: int | None = Field(
        None,
        description="lifetime of the token in seconds: WHALE_TOKEN_DEFAULT_TTL_SECONDS (86400) when absent; "
        "between WHALE_TOKEN_MIN_TTL_SECONDS (60) and WHALE_TOKEN_MAX_TTL_SECONDS (2592000), else 422",
    )
    label: str = Field("", max_length=100, description="your name for it (a sub-agent's), shown in the admin")


class WhaleTokenOut(Out):
    token: str = Field(description="send it as the X-Whale-Token header; it is not stored, keep it")
    header: str
    jti: str = Field(description="the token's id (what staff revoke)")
    tier: str
    label: str
    issued_at: str
    expires_at: str
    ttl_seconds: int
    rate_limit: RateLimitOut
    pays: bool = Field(
        False, description="always false: a token raises the rate limit, it never spends credit"
    )
    usage: str


class WhaleTierRequiredOut(ErrorOut):
    deposited_usdc: float
    window_days: int
    next_tier: WhaleNextTierOut | None
    catalog_endpoint: str


class WhaleTokenLimitOut(ErrorOut):
    active_tokens: int
    next_expiry: str | None


class WhaleTokenPaysNothingOut(ErrorOut):
    price_usdc: float
    x402_alternative: str | None = Field(description="the product's x402 path: pay per call with a wallet")
    topup: dict[str, Any]


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
    sales_all_time: int = Field(description="paid calls sold, every rail")
    revenue_all_time_usdc: float
    paying_wallets: int
    sales_by_rail: dict[str, RailSalesOut] = Field(default_factory=dict, description=RAILS_DESCRIPTION)


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
    whale_bonus_usdc: float = Field(0.0, description="the whale tier's bonus credited with this deposit")
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


# --- one x402 payment, followed by its payer (GET /api/a2a/x402/settlement) ----------------------
class SettlementQuery(QueryModel):
    payer: str = Field(
        pattern=r"^0x[0-9a-fA-F]{40}$", description="the authorization's `from` (the paying wallet)"
    )
    nonce: str = Field(
        pattern=r"^0x[0-9a-fA-F]{64}$", description="the authorization's nonce (bytes32, 0x-prefixed hex)"
    )


class SettlementCollectHowOut(Out):
    method: str
    url: str
    header: str


class SettlementStatusOut(Out):
    payer: str
    nonce: str
    sku: str
    amount_atomic: int
    amount_usdc: float
    network: str
    state: str = Field(
        description="claimed (being settled), settlement_pending (broadcast, not confirmed yet), settled "
        "or failed; a released claim (nothing charged) is gone: 404"
    )
    final: bool = Field(description="settled or failed: the state no longer changes")
    transaction: str = Field(
        description="the current settlement transaction: the one mined once settled; while pending, the "
        "last one broadcast (a stuck one is replaced by one with more gas); empty when not known"
    )
    settled_at: str | None
    delivered: bool = Field(description="the content (or the effect) was delivered for this payment")
    error: str = Field(description="why it failed, or what the last settle attempt said")
    next: str = Field(description="what the payer does now")
    retry_after: int | None = Field(description="seconds before asking again, while not final")
    collect: SettlementCollectHowOut | None = Field(
        description="how to collect the content: while pending, or settled and not delivered yet"
    )
