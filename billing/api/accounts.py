"""Credit accounts: registration, the ownership message, and the account itself."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import ApiError, RequestValidationError, Unauthorized, rate_limited_body
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel, parse_body, parse_query, query_parameters
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.schemas import ErrorOut, HTTPValidationError, RateLimitedOut, UnauthorizedOut
from a2a_service.core.throttling import requester_fingerprint
from a2a_service.core.views import ApiView, ok
from billing import schemas as s
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from billing.credits import (
    ChallengeRateLimited,
    OwnershipCheckUnavailable,
    OwnershipNotProven,
    account_register,
    ownership_challenge_issue,
)
from billing.models import BillingSettings, Deposit, LedgerEntry, OwnershipChallenge
from catalog.api.bodies import A2aRegisterBody, EvmAddress

MESSAGE_ENDPOINT = "/api/a2a/account/register/message"


class WalletQuery(QueryModel):
    wallet_address: EvmAddress


class OwnershipProofRequired(Unauthorized):
    code = "ownership_proof_required"


class OwnershipProofFailed(Unauthorized):
    code = "ownership_not_proven"


class TooManyChallenges(ApiError):
    status_code = 429
    code = "rate_limited"

    def __init__(self, wait_seconds: float):
        body = rate_limited_body(wait_seconds)
        super().__init__(body["detail"], extra={"retry_after": body["retry_after"]})
        self.headers = {"Retry-After": str(body["retry_after"])}


class ChainUnavailable(ApiError):
    status_code = 503
    code = "ownership_check_unavailable"


def _challenge(request: Request, wallet_address: str) -> OwnershipChallenge:
    try:
        return ownership_challenge_issue(
            wallet_address=wallet_address, requester=requester_fingerprint(request)
        )
    except ChallengeRateLimited as exc:
        raise TooManyChallenges(exc.retry_after_seconds) from None


class AccountRegisterView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Register a wallet for prepaid credits, or get a new key, by signing a challenge",
        description="Every registration proves the caller owns the wallet. POST {wallet_address} alone answers "
        "401 `ownership_proof_required` with a fresh challenge (message, nonce, expires_at); sign `message` with "
        "the wallet (EIP-191 personal_sign; a contract wallet is checked with EIP-1271) and POST "
        "{wallet_address, nonce, signature}. A new wallet gets 201 with its API key; a wallet that already has an "
        "account gets a new key (200, the old one is revoked), and its account is marked verified. Deposits are "
        "credited only to a verified account: deposits sent before the proof are credited when it succeeds. "
        "A challenge proves once and expires after 10 minutes, whatever is asked after it. A limited number is "
        "issued per window to one requester (caller address) for one wallet, and to one requester over all "
        "wallets (429 with Retry-After); another requester's challenges never count against yours.",
        operation_id="account_register",
        request=A2aRegisterBody,
        responses={
            201: s.RegisterOut,
            200: s.RegisterOut,
            401: s.OwnershipProofRequiredOut,
            422: HTTPValidationError,
            429: RateLimitedOut,
            503: ErrorOut,
        },
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request, A2aRegisterBody)
        if not body.signature:
            challenge = _challenge(request, body.wallet_address)
            raise OwnershipProofRequired(
                "sign `message` with this wallet (EIP-191 personal_sign) and POST it again with "
                "`nonce` and `signature`",
                extra={
                    "wallet_address": challenge.wallet_address,
                    "message": challenge.message,
                    "nonce": challenge.nonce,
                    "expires_at": iso(challenge.expires_at) or "",
                    "message_endpoint": MESSAGE_ENDPOINT,
                },
            )
        if not body.nonce:
            raise RequestValidationError.single(
                ["body", "nonce"], "the nonce of the signed challenge is required with `signature`", "missing"
            )
        try:
            reg = account_register(
                wallet_address=body.wallet_address, nonce=body.nonce, signature=body.signature
            )
        except OwnershipNotProven:
            raise OwnershipProofFailed(
                "the signature does not prove ownership of this wallet for that challenge (unknown, used or "
                "expired nonce, or another signer); get a fresh challenge and sign it",
                extra={"wallet_address": body.wallet_address.lower(), "message_endpoint": MESSAGE_ENDPOINT},
            ) from None
        except OwnershipCheckUnavailable:
            raise ChainUnavailable(
                "the signature is not the wallet's own and the chain cannot be asked now whether it is a "
                "contract wallet's (EIP-1271); try again with a fresh challenge"
            ) from None
        out = s.RegisterOut(
            api_key=reg.api_key,
            wallet_address=reg.account.wallet_address,
            credit_balance_usdc=reg.account.credit_balance_usdc,
            treasury_address=settings.TREASURY_ADDRESS,
            rotated=reg.rotated,
        )
        return ok(out, status=200 if reg.rotated else 201)


class OwnershipMessageView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="A challenge to sign with your wallet, to register it or get a new API key",
        description="Sign `message` (EIP-191 personal_sign) and POST {wallet_address, nonce, signature} to "
        "/api/a2a/account/register. A limited number of challenges is issued per window to one requester "
        "(caller address) for one wallet and over all wallets: 429 with Retry-After beyond it. Another "
        "requester's challenges never count against yours.",
        operation_id="account_register_message",
        parameters=query_parameters(WalletQuery),
        responses={200: s.OwnershipMessageOut, 422: HTTPValidationError, 429: RateLimitedOut},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request, WalletQuery)
        challenge = _challenge(request, query.wallet_address)
        return ok(
            s.OwnershipMessageOut(
                wallet_address=challenge.wallet_address,
                message=challenge.message,
                nonce=challenge.nonce,
                expires_at=iso(challenge.expires_at) or "",
            )
        )


class AccountView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Your credit account: balance, recent deposits and ledger rows",
        operation_id="account_get",
        parameters=[API_KEY_HEADER],
        responses={200: s.AccountOut, 401: UnauthorizedOut},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        deposits = Deposit.objects.filter(from_address=account.wallet_address)[:20]
        ledger = LedgerEntry.objects.filter(account=account).select_related("sku")[:50]
        return ok(
            s.AccountOut(
                wallet_address=account.wallet_address,
                credit_balance_usdc=account.credit_balance_usdc,
                ownership_verified=account.ownership_verified,
                credit_billing_enabled=BillingSettings.load().credit_billing_enabled,
                treasury_address=settings.TREASURY_ADDRESS,
                deposits=[
                    s.DepositOut(
                        tx_hash=d.tx_hash,
                        log_index=d.log_index,
                        block_number=d.block_number,
                        amount_usdc=d.amount_usdc,
                        bonus_usdc=usdc_from_atomic(d.bonus_atomic),
                        whale_bonus_usdc=usdc_from_atomic(d.whale_bonus_atomic),
                        state=d.state,
                        seen_at=iso(d.seen_at) or "",
                        credited_at=iso(d.credited_at),
                    )
                    for d in deposits
                ],
                ledger=[
                    s.LedgerRowOut(
                        id=e.id,
                        amount_usdc=usdc_from_atomic(e.amount_atomic),
                        balance_after_usdc=usdc_from_atomic(e.balance_after_atomic),
                        kind=e.kind,
                        reference=e.reference,
                        sku=e.sku.sku if e.sku else None,
                        created_at=iso(e.created_at) or "",
                    )
                    for e in ledger
                ],
            )
        )
