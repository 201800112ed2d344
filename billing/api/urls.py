"""Paid routes, from the product specs: every product's x402 path and X-API-Key routes, and
the X-API-Key routes whose product is not built yet."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, path

from billing.api.accounts import AccountRegisterView, AccountView, OwnershipMessageView
from billing.api.views import credit_view, x402_view
from billing.api.whale import WhaleStatusView, WhaleTokenView
from billing.bounties.api import BountiesMineView, BountyClaimView, BountySubmitView
from billing.facilitator.api import FacilitatorSettleView, FacilitatorSupportedView, FacilitatorVerifyView
from billing.facilitator.discovery_api import FacilitatorDiscoveryView
from catalog.api.bodies import BrianTransactionRequest
from catalog.products.registry import specs_all

M, ACC, T = "market-data", "accounts", "telemetry"

# X-API-Key routes whose product is not built yet: they validate their input, then answer
# 503 uncharged. A route that sells a product is declared by the product's spec
# (ProductSpec.credit_routes) instead, and moves there when the product is built.
# (method, path, operation id, summary, tag, query, body[, deprecated])
# None today: the whale routes (billing/api/whale.py) were the last.
PENDING_CREDIT_ROUTES: list[tuple[Any, ...]] = []


# X-API-Key POST routes whose JSON body is the product's request (validated with the body model,
# then with the product's params model): (method, path, operation id, summary, tag, sku, body).
BODY_CREDIT_ROUTES: list[tuple[Any, ...]] = [
    (
        "POST",
        "api/a2a/txgen/transaction",
        "txgen_transaction",
        "Build a transaction from a prompt (0.30 USDC)",
        M,
        "txgen_transaction",
        BrianTransactionRequest,
    ),
]


def paid_urlpatterns() -> list[URLPattern]:
    """Every paid route, from the product specs: each product's x402 path and its X-API-Key
    routes, then the X-API-Key routes still waiting for their product."""
    patterns = []
    for spec in specs_all():
        view = x402_view(spec.sku, spec.headline, spec.params)
        patterns.append(path(spec.full_path.lstrip("/"), view.as_view(), name=f"x402_{spec.sku}"))
        for route in spec.credit_routes:
            credit = credit_view(
                method=route.method,
                name=route.operation_id,
                summary=route.summary,
                tag=route.tag,
                product_sku=spec.sku,
                deprecated=route.deprecated,
                successor=route.successor,
                free=route.free,
            )
            patterns.append(path(route.route, credit.as_view(), name=route.operation_id))
    for method, route, name, summary, tag, sku, body in BODY_CREDIT_ROUTES:
        sold = credit_view(method=method, name=name, summary=summary, tag=tag, product_sku=sku, body=body)
        patterns.append(path(route, sold.as_view(), name=name))
    for method, route, name, summary, tag, query, body, *extra in PENDING_CREDIT_ROUTES:
        pending = credit_view(
            method=method,
            name=name,
            summary=summary,
            tag=tag,
            product_sku=None,
            query=query,
            body=body,
            deprecated=bool(extra and extra[0]),
        )
        patterns.append(path(route, pending.as_view(), name=name))
    return patterns


urlpatterns = [
    *paid_urlpatterns(),
    path("api/a2a/account/register", AccountRegisterView.as_view(), name="account_register"),
    # Bounties: claiming and submitting are free (the listing is the paid `bounties` product).
    path("api/a2a/bounties/mine", BountiesMineView.as_view(), name="bounties_mine"),
    path("api/a2a/bounties/<int:bounty_id>/claim", BountyClaimView.as_view(), name="bounty_claim"),
    path("api/a2a/bounties/<int:bounty_id>/submit", BountySubmitView.as_view(), name="bounty_submit"),
]

# The self-hosted x402 facilitator (answers 503 where FACILITATOR_PRIVATE_KEY is not set).
urlpatterns += [
    path("api/a2a/facilitator/supported", FacilitatorSupportedView.as_view(), name="facilitator_supported"),
    path("api/a2a/facilitator/verify", FacilitatorVerifyView.as_view(), name="facilitator_verify"),
    path("api/a2a/facilitator/settle", FacilitatorSettleView.as_view(), name="facilitator_settle"),
    path(
        "api/a2a/facilitator/discovery/resources",
        FacilitatorDiscoveryView.as_view(),
        name="facilitator_discovery_resources",
    ),
]

urlpatterns += [
    path("api/a2a/account", AccountView.as_view(), name="account_get"),
    path("api/a2a/account/register/message", OwnershipMessageView.as_view(), name="account_register_message"),
    path("api/a2a/account/whale/status", WhaleStatusView.as_view(), name="whale_status"),
    path("api/a2a/account/whale/token", WhaleTokenView.as_view(), name="whale_token"),
]
