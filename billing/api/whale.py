"""Whale tier routes (X-API-Key): the account's standing, and whale tokens for its sub-agents.
The tiers themselves: billing/tiers.py; tokens and the rate limit: billing/whale.py."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import Conflict, Forbidden, RequestValidationError
from a2a_service.core.formats import iso
from a2a_service.core.inputs import parse_body
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.schemas import HTTPValidationError, RateLimitedOut, UnauthorizedOut
from a2a_service.core.views import ApiView, ok
from billing import schemas as s
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from billing.selectors.whale import CATALOG_ENDPOINT, next_tier_out, whale_status
from billing.whale import (
    TOKEN_HEADER,
    NoWhaleTier,
    TooManyWhaleTokens,
    token_ttl_bounds,
    whale_token_issue,
)


class WhaleTierRequired(Forbidden):
    code = "whale_tier_required"


class WhaleTokenLimit(Conflict):
    code = "whale_token_limit"


class WhaleStatusView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Whale tier status",
        description="The account's whale tier (or null), its benefits, the USDC deposited within the window "
        "(credited deposits; bonuses not counted), the window's bounds, when the tier lapses if nothing more "
        "is deposited, and the progress to the next tier (amount still needed, percent of its minimum). "
        "Amounts in atomic units (6 decimals) and in USDC.",
        operation_id="whale_status",
        parameters=[API_KEY_HEADER],
        responses={
            200: s.WhaleStatusOut,
            401: OpenApiResponse(
                UnauthorizedOut, description="missing or unknown X-API-Key (or a refused X-Whale-Token)"
            ),
            429: OpenApiResponse(RateLimitedOut, description="rate limited; see Retry-After"),
        },
    )
    def get(self, request: Request) -> Response:
        return ok(whale_status(api_key_account(request)))


class WhaleTokenView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Issue a whale token",
        description="A signed, expiring tier pass for the account's sub-agents. Sent as the X-Whale-Token "
        "header instead of the API key, it gives the account's tier rate limit on every route (free and paid); "
        "it never spends credit: a paid route with only a token answers 402 with how to pay (X-API-Key credits "
        "or an x402 payment, which then gets the tier's limit too). The limit is the account's tier at the time "
        "of each call: a tier lost later (deposits left the window) stops the higher limit. Expired, revoked "
        "(staff, in the admin) or forged tokens answer 401 wherever they are sent. Only an account that holds "
        "a tier gets a token (403 whale_tier_required otherwise). Body optional: ttl_seconds (bounds in the 422 "
        "message), label.",
        operation_id="whale_token",
        parameters=[API_KEY_HEADER],
        request=s.WhaleTokenBody,
        responses={
            201: s.WhaleTokenOut,
            401: OpenApiResponse(UnauthorizedOut, description="missing or unknown X-API-Key"),
            403: OpenApiResponse(
                s.WhaleTierRequiredOut, description="the account holds no tier: what it takes to get one"
            ),
            409: OpenApiResponse(
                s.WhaleTokenLimitOut, description="too many active tokens (WHALE_TOKENS_MAX_ACTIVE)"
            ),
            422: HTTPValidationError,
            429: OpenApiResponse(RateLimitedOut, description="rate limited; see Retry-After"),
        },
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, s.WhaleTokenBody)
        low, high = token_ttl_bounds()
        if body.ttl_seconds is not None and not low <= body.ttl_seconds <= high:
            raise RequestValidationError.single(
                ["body", "ttl_seconds"],
                f"Input should be between {low} and {high} seconds",
                "greater_than_equal" if body.ttl_seconds < low else "less_than_equal",
            )
        try:
            issued = whale_token_issue(account=account, ttl_seconds=body.ttl_seconds, label=body.label)
        except NoWhaleTier as exc:
            standing = exc.standing
            raise WhaleTierRequired(
                f"this account holds no whale tier: it deposited {usdc_from_atomic(standing.deposited_atomic):g} "
                f"USDC in the last {standing.window_days} days; whale tokens are issued to tier accounts only",
                extra=s.WhaleTierRequiredOut(
                    detail="",
                    code="",
                    deposited_usdc=usdc_from_atomic(standing.deposited_atomic),
                    window_days=standing.window_days,
                    next_tier=next_tier_out(standing),
                    catalog_endpoint=CATALOG_ENDPOINT,
                ).model_dump(mode="json", exclude={"detail", "code"}),
            ) from None
        except TooManyWhaleTokens as exc:
            raise WhaleTokenLimit(
                f"this account has {exc.active} active whale tokens, the most it may hold; one frees up when "
                "the first expires (or staff revoke tokens)",
                extra={"active_tokens": exc.active, "next_expiry": iso(exc.next_expiry)},
            ) from None
        row, tier = issued.row, issued.tier
        out = s.WhaleTokenOut(
            token=issued.token,
            header=TOKEN_HEADER,
            jti=row.jti,
            tier=tier.name,
            label=row.label,
            issued_at=iso(row.created_at) or "",
            expires_at=iso(row.expires_at) or "",
            ttl_seconds=issued.ttl_seconds,
            rate_limit=s.RateLimitOut(
                requests=tier.rate_limit_per_minute, per_seconds=60, applies_to="account and caller address"
            ),
            usage=f"send `{TOKEN_HEADER}: <token>` instead of X-API-Key; to buy, add X-API-Key or pay with x402",
        )
        return ok(out, status=201, headers={"Cache-Control": "no-store"})
