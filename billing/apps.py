from __future__ import annotations

from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self) -> None:
        from billing import (
            products,  # noqa: F401  (billing's product specs)
            signals,  # noqa: F401  (drops stored 402 challenges on SKU writes)
        )
        from billing.bounties import products as bounty_products  # noqa: F401  (the `bounties` product)
        from billing.front import schemes  # noqa: F401  (the rails of the x402 schemes: exact, upto)
        from billing.models import BillingSettings
        from billing.services import billing_seed
        from billing.txgen import products as txgen_products  # noqa: F401  (the `txgen_transaction` product)
        from billing.x402 import (
            channels,  # noqa: F401  (the channel offer in every v2 402)
            upto,  # noqa: F401  (`upto` offered in a metered product's 402)
        )
        from catalog.selectors.payment import credit_billing_reader_register
        from catalog.services import seeder_register

        seeder_register(billing_seed)
        from a2a_service.core.throttling import client_rate_register
        from billing.whale import whale_client_rate

        # Whale tiers: a tier account's key, or its whale token, carries the tier's rate limit.
        client_rate_register(whale_client_rate)
        # The catalog's pages say whether X-API-Key credits are on: billing's setting.
        credit_billing_reader_register(lambda: BillingSettings.load().credit_billing_enabled)
        from a2a_service.core.payment_routes import route_mark_available

        # The x402 mechanism (billing/api/views.py X402PaidView) is wired in this build.
        route_mark_available("x402")
        # Prepaid credits (billing/api/views.py CreditRouteView, billing/deposits.py watcher).
        route_mark_available("credits")
        # Prepaid sessions (sessions_app: packs are products, calls debit the session).
        route_mark_available("sessions")
        from a2a_service.core.metrics import scrape_collector_register
        from billing.metrics import billing_metrics

        # Deposits waiting and payments undecided, read from the database when scraped.
        scrape_collector_register("billing", billing_metrics)
        from billing.models import OwnershipChallenge, SignInNonce
        from catalog.feeds.retention import retention_register

        # Challenges are limited per requester, not per wallet alone: many requesters can add
        # rows, which the feeds' pruning pass deletes some days after they expired.
        retention_register(
            model=OwnershipChallenge, time_field="expires_at", days_setting="OWNERSHIP_CHALLENGE_RETENTION_DAYS"
        )
        # Used sign-in nonces: one row per signed-in call, useless once the nonce is past its
        # NONCE_SECONDS (billing/x402/signin.py); pruned with the ownership challenges.
        retention_register(
            model=SignInNonce, time_field="created_at", days_setting="OWNERSHIP_CHALLENGE_RETENTION_DAYS"
        )
        from billing.models import PaymentIdentifier

        # A named payment's stored answer is kept for a retention window (its money is the
        # Payment row's, kept for good).
        retention_register(
            model=PaymentIdentifier, time_field="claimed_at", days_setting="PAYMENT_IDENTIFIER_RETENTION_DAYS"
        )
        # Every x402 challenge declares its `bazaar` discovery (billing/x402/challenge.py's table).
        from billing.x402 import bazaar  # noqa: F401
