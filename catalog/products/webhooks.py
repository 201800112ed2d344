"""Push products: the signal desk pack (turns webhook push on for the buyer's account) and
the outcome-pricing catalog."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from a2a_service.core.money import usdc_from_atomic
from catalog.products.registry import ProductCall, ProductFailed, register


def _account(call: ProductCall) -> Any:
    from billing.models import Account

    if call.account is not None:
        return call.account
    account = Account.objects.filter(wallet_address=(call.payer or "").lower()).first()
    if account is None:
        raise ProductFailed(
            "push is delivered to a credit account's webhooks: register this wallet first at "
            "/api/a2a/account/register (nothing was charged)"
        )
    return account


def _account_ready(call: ProductCall) -> None:
    _account(call)


# The push entitlement is an effect: bought by x402, it is created only once the payment settled.
@register("signal_desk_pack", effects=True, ready=_account_ready)
def signal_desk_pack(call: ProductCall) -> dict[str, Any]:
    from webhooks.models import PushEntitlement

    account = _account(call)
    current = (
        PushEntitlement.objects.filter(account=account, expires_at__gt=timezone.now())
        .order_by("-expires_at")
        .first()
    )
    start = current.expires_at if current else timezone.now()  # a second pack extends the first
    entitlement = PushEntitlement.objects.create(
        account=account, expires_at=start + timedelta(days=settings.SIGNAL_DESK_PACK_DAYS)
    )
    return {
        "account": account.wallet_address,
        "push_until": entitlement.expires_at.isoformat(),
        "events": [
            "copy_signal",
            "regime_attestation",
            "prediction_alert",
            "pair_arb_alert",
            "risk_exit_alert",
        ],
        "register_webhook": call.base_url + "/api/a2a/account/webhooks/register",
        "events_catalog": call.base_url + "/api/a2a/webhooks/events",
    }


def outcome_prices() -> list[dict[str, Any]]:
    from webhooks.models import EventPrice

    return [
        {"kind": p.kind, "price_usdc": usdc_from_atomic(p.price_atomic)}
        for p in EventPrice.objects.order_by("kind")
    ]


@register("webhook_outcome_pricing", pure=True)
def webhook_outcome_pricing(call: ProductCall) -> dict[str, Any]:
    return {
        "prices": outcome_prices(),
        "charged": "per delivered event, from prepaid credits, when no signal desk pack covers the account; "
        "an event without enough credit is skipped (never delivered free); an undelivered paid event is "
        "refunded",
        "signal_desk_pack": call.base_url + "/api/a2a/x402/webhooks/signal-desk-pack",
    }
