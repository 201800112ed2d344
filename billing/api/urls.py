"""Paid routes, from tables: every x402 path of the SKU table, and every X-API-Key path."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.urls import path
from pydantic import Field

from a2a_service.core.inputs import Limit24Query, QueryModel
from billing.api.accounts import AccountRegisterView, AccountView, OwnershipMessageView
from billing.api.views import credit_view, x402_view
from billing.facilitator.api import FacilitatorSettleView, FacilitatorSupportedView, FacilitatorVerifyView
from catalog.api.bodies import A2aDelegationActivateBody, A2aDelegationFillBody, BrianTransactionRequest
from catalog.products.news import NewsUnlockParams
from catalog.seed.skus import SKU_TABLE

X402_PARAMS = {"news_unlock": NewsUnlockParams}


class TwapPreviewQuery(QueryModel):
    symbol: Annotated[str, Field(min_length=3, max_length=40, pattern=r"^[A-Za-z0-9]+/[A-Za-z0-9]+$")] = (
        "BTC/USDT"
    )
    notional_usdc: Annotated[float, Field(gt=0, le=1_000_000_000)] = 10000
    slices: Annotated[int, Field(ge=1, le=200)] = 6


class MmHintQuery(QueryModel):
    bias: Literal["neutral", "long", "short"] = "neutral"


M, ACC, T = "market-data", "accounts", "telemetry"

# (method, path, operation id, summary, tag, product SKU, query, body[, deprecated])
CREDIT_ROUTES: list[tuple[Any, ...]] = [
    ("GET", "api/a2a/signals", "signals", "Trading signals", M, "signals", None, None),
    ("GET", "api/a2a/tokenized/signals", "tokenized_signals", "Tokenized asset signals", M, None, None, None),
    (
        "GET",
        "api/a2a/tokenized/premium",
        "tokenized_premium",
        "Tokenized premium digest",
        M,
        None,
        None,
        None,
    ),
    ("GET", "api/a2a/tokenized/scalp", "tokenized_scalp", "Tokenized scalp setups", M, None, None, None),
    ("GET", "api/a2a/equity/intel", "equity_intel", "Equity intelligence", M, None, None, None),
    ("GET", "api/a2a/equity/scalp", "equity_scalp", "Equity scalp setups", M, None, None, None),
    ("GET", "api/a2a/sentiment", "sentiment", "Market sentiment", M, "sentiment", None, None),
    ("GET", "api/a2a/bounties", "bounties", "Open bounties", M, "bounties", None, None),
    ("POST", "api/a2a/pool/join", "pool_join", "Join the coordination pool", M, None, None, None),
    (
        "POST",
        "api/a2a/news/<str:news_id>/unlock",
        "news_unlock_credit",
        "Unlock a news item's full text",
        M,
        "news_unlock",
        None,
        None,
    ),
    ("GET", "api/a2a/intel/latest", "intel_latest", "Latest intelligence", M, "signals", None, None),
    ("GET", "api/a2a/intel/history", "intel_history", "Intelligence history", M, None, Limit24Query, None),
    ("GET", "api/a2a/twap/preview", "twap_preview", "TWAP slicing preview", M, None, TwapPreviewQuery, None),
    ("GET", "api/a2a/mm/hint", "mm_hint", "Market-making hint", M, None, MmHintQuery, None),
    (
        "GET",
        "api/a2a/signals/copy-trade",
        "copy_trade_signals",
        "Copy-trade signals (free tier delayed 10 minutes, routing masked)",
        M,
        "copy_signals",
        None,
        None,
    ),
    ("GET", "api/a2a/exchange-spreads", "exchange_spreads", "Structural spread radar", M, None, None, None),
    (
        "GET",
        "api/a2a/spread-snapshot",
        "spread_snapshot",
        "Spread snapshot (deprecated: use exchange-spreads)",
        M,
        None,
        None,
        None,
        True,
    ),
    (
        "POST",
        "api/a2a/txgen/transaction",
        "txgen_transaction",
        "Build a transaction from a prompt (0.30 USDC)",
        M,
        None,
        None,
        BrianTransactionRequest,
    ),
    (
        "GET",
        "api/a2a/telemetry/detail",
        "telemetry_detail_credit",
        "Telemetry detail (X-API-Key)",
        T,
        "telemetry_detail",
        None,
        None,
    ),
    ("GET", "api/a2a/account/whale/status", "whale_status", "Whale tier status", ACC, None, None, None),
    ("POST", "api/a2a/account/whale/token", "whale_token", "Issue a whale token", ACC, None, None, None),
    (
        "POST",
        "api/a2a/account/delegation/activate",
        "delegation_activate",
        "Activate execution delegation",
        ACC,
        None,
        None,
        A2aDelegationActivateBody,
    ),
    (
        "POST",
        "api/a2a/account/delegation/report-fill",
        "delegation_report_fill",
        "Report a delegated fill",
        ACC,
        None,
        None,
        A2aDelegationFillBody,
    ),
]

urlpatterns = (
    [
        path(row.full_path.lstrip("/"), x402_view(row.sku, row.headline, X402_PARAMS.get(row.sku)).as_view())
        for row in SKU_TABLE
    ]
    + [
        path(
            route,
            credit_view(
                method=method,
                name=name,
                summary=summary,
                tag=tag,
                product_sku=sku,
                query=query,
                body=body,
                deprecated=bool(extra and extra[0]),
            ).as_view(),
        )
        for method, route, name, summary, tag, sku, query, body, *extra in CREDIT_ROUTES
    ]
    + [
        path("api/a2a/account/register", AccountRegisterView.as_view()),
    ]
)

# The self-hosted x402 facilitator (answers 503 where FACILITATOR_PRIVATE_KEY is not set).
urlpatterns += [
    path("api/a2a/facilitator/supported", FacilitatorSupportedView.as_view()),
    path("api/a2a/facilitator/verify", FacilitatorVerifyView.as_view()),
    path("api/a2a/facilitator/settle", FacilitatorSettleView.as_view()),
]

urlpatterns += [
    path("api/a2a/account", AccountView.as_view()),
    path("api/a2a/account/register/message", OwnershipMessageView.as_view()),
]
