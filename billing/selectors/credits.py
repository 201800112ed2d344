"""Prepaid-credit guides: the credit bundle, top-up steps, bundle info and the onboarding guide
for agents without an x402 wallet."""

from __future__ import annotations

from django.conf import settings

from a2a_service.core.money import usdc_from_atomic
from billing import schemas as s
from billing.models import Account, BillingSettings
from catalog.models import (
    Sku,
)
from catalog.products.registry import ProductCall, ProductFailed
from catalog.selectors import schemas as cs
from catalog.selectors.payment import absolute, payment_alternatives


def credit_bundle(base: str, billing: BillingSettings | None = None) -> s.CreditBundleOut:
    billing = billing or BillingSettings.load()
    total = billing.bundle_atomic + billing.bonus_atomic
    return s.CreditBundleOut(
        bundle_usdc=billing.bundle_usdc,
        bonus_pct=float(billing.bonus_pct),
        bonus_usdc=billing.bonus_usdc,
        total_credits_usdc=usdc_from_atomic(total),
        chain=settings.CHAIN_NAME,
        token="USDC",
        register_endpoint=absolute(base, "/api/a2a/account/register"),
        topup_endpoint=absolute(base, "/api/a2a/account/topup-info"),
        instructions=(
            f"Register your wallet, then send USDC on {settings.CHAIN_NAME} ({settings.X402_NETWORK}) from it to "
            f"{settings.TREASURY_ADDRESS}. At least {billing.min_deposit_usdc} USDC is credited; a deposit of "
            f"{billing.bundle_usdc} USDC or more adds {float(billing.bonus_pct)}% bonus credits."
        ),
    )


def credit_onboarding(base: str) -> s.CreditOnboardingOut:
    b = credit_bundle(base)
    return s.CreditOnboardingOut(
        register_endpoint=b.register_endpoint, topup_endpoint=b.topup_endpoint, instructions=b.instructions
    )


def topup_steps(base: str, billing: BillingSettings) -> list[s.TopupStepOut]:
    return [
        s.TopupStepOut(
            step=1,
            title="Register your wallet",
            method="POST",
            url=absolute(base, "/api/a2a/account/register"),
            body_example={"wallet_address": "0xYourWalletAddress"},
            response_fields=["api_key", "wallet_address", "credit_balance_usdc", "treasury_address"],
            note=(
                "Every registration proves you own the wallet: this POST answers 401 ownership_proof_required "
                "with a challenge (message, nonce); sign message with the wallet (EIP-191 personal_sign; "
                "contract wallets: EIP-1271) and POST again with wallet_address, nonce and signature. "
                "The api_key is shown once; store it."
            ),
        ),
        s.TopupStepOut(
            step=2,
            title="Send USDC to the treasury",
            from_="your registered wallet",
            to=settings.TREASURY_ADDRESS,
            min_usdc=billing.min_deposit_usdc,
            note=(
                f"USDC contract {settings.USDC_ADDRESS} on {settings.CHAIN_NAME} ({settings.X402_NETWORK}). "
                f"Deposits of {billing.bundle_usdc} USDC or more earn {float(billing.bonus_pct)}% bonus."
            ),
        ),
        s.TopupStepOut(
            step=3,
            title="Watch the deposit arrive",
            method="GET",
            url=absolute(base, "/api/a2a/account"),
            header="X-API-Key",
            note="The deposit watcher credits confirmed deposits from your registered wallet.",
        ),
        s.TopupStepOut(
            step=4,
            title="Call credit endpoints",
            method="GET",
            header="X-API-Key",
            examples=[absolute(base, "/api/a2a/sentiment"), absolute(base, "/api/a2a/intel/latest")],
            note="Each call debits its price; answers carry X-Credit-Charged and X-Credit-Balance.",
        ),
    ]


def topup_examples(base: str) -> list[s.TopupExampleOut]:
    prices = {
        x.sku: x.price_usdc
        for x in Sku.objects.filter(sku__in=["news_unlock", "sentiment", "telemetry_detail"])
    }
    return [
        s.TopupExampleOut(
            name="news unlock",
            method="POST",
            url=absolute(base, "/api/a2a/news/{news_id}/unlock"),
            price_usdc_hint=prices.get("news_unlock", 0.0),
            header_required="X-API-Key",
        ),
        s.TopupExampleOut(
            name="sentiment",
            method="GET",
            url=absolute(base, "/api/a2a/sentiment"),
            price_usdc_hint=prices.get("sentiment", 0.0),
            header_required="X-API-Key",
        ),
        s.TopupExampleOut(
            name="telemetry detail",
            method="GET",
            url=absolute(base, "/api/a2a/telemetry/detail"),
            price_usdc_hint=prices.get("telemetry_detail", 0.0),
            header_required="X-API-Key",
        ),
    ]


def topup_info(base: str) -> s.TopupInfoOut:
    billing = BillingSettings.load()
    return s.TopupInfoOut(
        chain=settings.CHAIN_NAME,
        token="USDC",
        contract=settings.USDC_ADDRESS,
        treasury_address=settings.TREASURY_ADDRESS,
        min_deposit_usdc=billing.min_deposit_usdc,
        credit_bundle=credit_bundle(base, billing),
        credit_prepay_guide_url=absolute(base, "/api/a2a/account/credit-prepay-guide"),
        payment_alternatives=cs.PaymentAlternatives(**payment_alternatives(base)),
        instructions=credit_bundle(base, billing).instructions,
        steps=topup_steps(base, billing),
        examples=topup_examples(base),
    )


def bundle_info(base: str) -> s.BundleInfoOut:
    billing = BillingSettings.load()
    return s.BundleInfoOut(
        credit_bundle=credit_bundle(base, billing),
        min_deposit_usdc=billing.min_deposit_usdc,
        treasury_address=settings.TREASURY_ADDRESS,
        contract=settings.USDC_ADDRESS,
        credit_billing_enabled=billing.credit_billing_enabled,
    )


def credit_prepay_guide(base: str) -> s.CreditPrepayGuideOut:
    billing = BillingSettings.load()
    return s.CreditPrepayGuideOut(
        title="Prepaid credits for agents without an x402 wallet",
        for_whom="Agents that cannot sign an x402 payment per call: deposit once, then call with X-API-Key.",
        credit_billing_enabled=billing.credit_billing_enabled,
        treasury_address=settings.TREASURY_ADDRESS,
        contract=settings.USDC_ADDRESS,
        chain=settings.CHAIN_NAME,
        min_deposit_usdc=billing.min_deposit_usdc,
        credit_bundle=credit_bundle(base, billing),
        steps=topup_steps(base, billing),
        topup_info_url=absolute(base, "/api/a2a/account/topup-info"),
        x402_alternative=absolute(base, "/.well-known/x402"),
    )


def payer_account(call: ProductCall, *, needs: str) -> Account:
    """The credit account of whoever pays `call`: the X-API-Key's, else the account of the
    x402 payer's wallet. A product that lives on an account (a push pack, a managed MCP pack)
    refuses a wallet with none in its `run`, before anything is charged; `needs` says why."""
    if call.account is not None:
        account: Account = call.account
        return account
    found = Account.objects.filter(wallet_address=(call.payer or "").lower()).first()
    if found is None:
        raise ProductFailed(
            f"{needs}: register this wallet first at /api/a2a/account/register (nothing was charged)"
        )
    return found
