"""Push products: the signal desk pack (turns webhook push on for the buyer's account), the
prediction alert subscription pack (the same for prediction_alert only), the pro morning brief
(the full brief, and morning_brief push for a period) and the outcome-pricing catalog."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.money import usdc_from_atomic
from billing.front import Sale
from billing.front.signin import OwnedRail
from billing.models import Account
from billing.rails.base import Rail
from billing.selectors.credits import payer_account
from catalog.products.briefs import MorningBriefFullOut, brief_available, brief_latest, brief_payload
from catalog.products.registry import ProductCall, product
from webhooks.models import EventPrice, PushEntitlement, WebhookSubscription


class SignalDeskPackOut(BaseModel):
    account: str = Field(description="the wallet whose webhooks receive the push")
    push_until: str = Field(description="push is on until this time (a second pack extends the first)")
    events: list[str]
    register_webhook: str
    events_catalog: str


class EventPriceOut(BaseModel):
    kind: str
    price_usdc: float


class OutcomePricingOut(BaseModel):
    prices: list[EventPriceOut]
    charged: str = Field(description="when and how a pushed event is charged")
    signal_desk_pack: str


def _account(call: ProductCall) -> Account:
    return payer_account(call, needs="push is delivered to a credit account's webhooks")


def _account_ready(call: ProductCall) -> None:
    _account(call)


def _entitlement_extend(*, account: Account, kinds: list[str], days: int) -> PushEntitlement:
    """A new entitlement for `days`, starting when the account's current one of the same kinds
    ends (a second pack extends the first) or now. The account's row is locked first: two
    packs bought at the same moment (two x402 payments, say) would otherwise both start from
    the same end and the buyer would pay twice for one period."""
    with transaction.atomic():
        list(Account.objects.select_for_update().filter(pk=account.pk).values_list("pk", flat=True))
        now = timezone.now()
        current = [
            e
            for e in PushEntitlement.objects.filter(account=account, expires_at__gt=now)
            if sorted(e.kinds) == sorted(kinds)
        ]
        start = max((e.expires_at for e in current), default=now)
        return PushEntitlement.objects.create(
            account=account, kinds=kinds, expires_at=start + timedelta(days=days)
        )


# The push entitlement is an effect: bought by x402, it is created only once the payment settled.
@product(
    sku="signal_desk_pack",
    path="/webhooks/signal-desk-pack",
    headline="Signal desk pack: webhook push of copy signals, regime attestations and alerts",
    price="0.29",
    family="webhooks",
    rank=19,
    teaser="copy-signals",
    output=SignalDeskPackOut,
    effects=True,
    ready=_account_ready,
)
def signal_desk_pack(call: ProductCall) -> dict[str, Any]:
    account = _account(call)
    entitlement = _entitlement_extend(account=account, kinds=[], days=settings.SIGNAL_DESK_PACK_DAYS)
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


class PredictionAlertPackOut(BaseModel):
    account: str = Field(description="the wallet whose webhooks receive the push")
    push_until: str = Field(
        description="prediction_alert push is on until this time (a second pack extends it)"
    )
    events: list[str] = Field(description="the event kinds this pack covers")
    days: int = Field(description="the period one pack adds")
    subscribed: bool = Field(
        description="whether the account has an active webhook subscribed to prediction_alert"
    )
    register_webhook: str
    events_catalog: str


# Like the signal desk pack, for prediction_alert only: an effect, created once paid.
@product(
    sku="prediction_alert_subscription_pack",
    path="/prediction/alert-subscription-pack",
    headline="Prediction alert subscription pack: push alerts for chosen markets",
    price="0.25",
    family="prediction",
    rank=33,
    output=PredictionAlertPackOut,
    effects=True,
    ready=_account_ready,
)
def prediction_alert_subscription_pack(call: ProductCall) -> dict[str, Any]:
    account = _account(call)
    kinds = ["prediction_alert"]
    entitlement = _entitlement_extend(account=account, kinds=kinds, days=settings.PREDICTION_ALERT_PACK_DAYS)
    subscribed = any(
        "prediction_alert" in (sub.events or [])
        for sub in WebhookSubscription.objects.filter(account=account, is_active=True)
    )
    return {
        "account": account.wallet_address,
        "push_until": entitlement.expires_at.isoformat(),
        "events": kinds,
        "days": settings.PREDICTION_ALERT_PACK_DAYS,
        "subscribed": subscribed,
        "register_webhook": call.base_url + "/api/a2a/account/webhooks/register",
        "events_catalog": call.base_url + "/api/a2a/webhooks/events",
    }


class MorningBriefPushOut(BaseModel):
    account: str = Field(description="the wallet whose webhooks receive the push")
    events: list[str] = Field(description="the event kinds this purchase covers")
    expires_at: str = Field(
        description="each new brief is pushed until this time (a second purchase extends it)"
    )
    days: int = Field(description="the period one purchase adds")
    subscribed: bool = Field(
        description="whether the account has an active webhook subscribed to morning_brief"
    )
    register_webhook: str


class MorningBriefProOut(MorningBriefFullOut):
    push: MorningBriefPushOut


def _brief_pro_ready(call: ProductCall) -> None:
    """Before any payment: the push needs a credit account to hold it, and the brief it sells
    must exist (bought by x402, an effect runs only after the payment is final)."""
    _account(call)
    brief_latest()


# The full brief (catalog/products/briefs.py's payload), plus the buyer's morning_brief push
# entitlement: an effect, created once paid. Each brief published during the period is pushed
# once to the account's webhooks subscribed to morning_brief (webhooks/signals.py).
@product(
    sku="morning_brief_pro",
    path="/morning-brief/pro",
    headline="Morning brief pro, with webhook routing",
    price="0.15",
    family="brief",
    rank=41,
    teaser="morning-brief",
    output=MorningBriefProOut,
    effects=True,
    ready=_brief_pro_ready,
    available=brief_available,
)
def morning_brief_pro(call: ProductCall) -> dict[str, Any]:
    account = _account(call)
    content = brief_payload(brief_latest())
    kinds = ["morning_brief"]
    entitlement = _entitlement_extend(account=account, kinds=kinds, days=settings.MORNING_BRIEF_PRO_DAYS)
    subscribed = any(
        "morning_brief" in (sub.events or [])
        for sub in WebhookSubscription.objects.filter(account=account, is_active=True)
    )
    return {
        **content,
        "push": {
            "account": account.wallet_address,
            "events": kinds,
            "expires_at": entitlement.expires_at.isoformat(),
            "days": settings.MORNING_BRIEF_PRO_DAYS,
            "subscribed": subscribed,
            "register_webhook": call.base_url + "/api/a2a/account/webhooks/register",
        },
    }


def outcome_prices() -> list[dict[str, Any]]:
    return [
        {"kind": p.kind, "price_usdc": usdc_from_atomic(p.price_atomic)}
        for p in EventPrice.objects.order_by("kind")
    ]


@product(
    sku="webhook_outcome_pricing",
    path="/webhooks/outcome-pricing",
    headline="Outcome-based webhook pricing: the price of each pushed event kind",
    price="0.01",
    family="webhooks",
    rank=28,
    output=OutcomePricingOut,
    pure=True,
)
def webhook_outcome_pricing(call: ProductCall) -> dict[str, Any]:
    return {
        "prices": outcome_prices(),
        "charged": "per delivered event, from prepaid credits, when no signal desk pack covers the account; "
        "an event without enough credit is skipped (never delivered free); an undelivered paid event is "
        "refunded",
        "signal_desk_pack": call.base_url + "/api/a2a/x402/webhooks/signal-desk-pack",
    }


# What a push entitlement owns, for sign-in (billing/front/signin.py): the SKU whose content the
# entitlement pushes -> the event kind it must cover.
PUSHED_SKUS = {"morning_brief": "morning_brief"}


def push_owned(address: str, account: Account | None, sale: Sale) -> Rail | None:
    """A signed-in wallet whose account holds an unexpired push entitlement covering what it asks
    for (the morning brief, pushed to it for the period it paid): served without a charge."""
    kind = PUSHED_SKUS.get(sale.offer.name)
    if account is None or kind is None:
        return None
    active = PushEntitlement.objects.filter(account=account, expires_at__gt=timezone.now())
    if not any(entitlement.covers(kind) for entitlement in active):
        return None
    return OwnedRail(wallet_address=address, account=account)


def push_owned_sql() -> str:
    """push_owned as SQL, for the sign-in fast path (billing.front.signin.OWNED_SQL)."""
    table = PushEntitlement._meta.db_table
    return (
        " OR ".join(
            f"(%(sku)s = '{sku}' AND EXISTS (SELECT 1 FROM {table} AS pe WHERE pe.account_id = %(account)s"
            f" AND pe.expires_at > now() AND (pe.kinds IS NULL OR pe.kinds IN ('null', '[]')"
            f" OR pe.kinds @> '[\"{kind}\"]'::jsonb)))"
            for sku, kind in PUSHED_SKUS.items()
        )
        or "FALSE"
    )
