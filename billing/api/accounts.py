"""Credit accounts: registration, the ownership message, and the account itself."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from billing.credits import (
    OwnershipNotProven,
    WalletAlreadyRegistered,
    account_register,
    ownership_challenge_issue,
)
from billing.models import BillingSettings, Deposit, LedgerEntry
from catalog.api import schemas as s
from catalog.api.bodies import A2aRegisterBody, EvmAddress
from catalog.api.errors import Conflict
from catalog.api.inputs import QueryModel, parse_body, parse_query, query_parameters
from catalog.api.views import ApiView, ok
from catalog.formats import iso
from catalog.money import usdc_from_atomic


class WalletQuery(QueryModel):
    wallet_address: EvmAddress


class AccountRegisterView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Register a wallet for prepaid credits (or rotate its key with a signature)",
        description="201 with a new API key. A wallet that already has an account answers 409, unless the body "
        "carries `signature`: the wallet's EIP-191 signature of the message from "
        "GET /api/a2a/account/register/message, which rotates the key (200).",
        operation_id="account_register",
        request=A2aRegisterBody,
        responses={201: s.RegisterOut, 200: s.RegisterOut, 409: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        body = parse_body(request, A2aRegisterBody)
        try:
            reg = account_register(wallet_address=body.wallet_address, signature=body.signature)
        except WalletAlreadyRegistered:
            raise Conflict(
                "this wallet already has an account; to get a new key, sign the message from "
                "/api/a2a/account/register/message and send it as `signature`",
                extra={"message_endpoint": "/api/a2a/account/register/message"},
            ) from None
        except OwnershipNotProven:
            raise Conflict(
                "the signature does not prove ownership of this wallet (sign a fresh message)",
                extra={"message_endpoint": "/api/a2a/account/register/message"},
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
        summary="A message to sign with your wallet, to prove ownership and rotate your API key",
        operation_id="account_register_message",
        parameters=query_parameters(WalletQuery),
        responses={200: s.OwnershipMessageOut, 422: s.HTTPValidationError},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request, WalletQuery)
        challenge = ownership_challenge_issue(wallet_address=query.wallet_address)
        return ok(
            s.OwnershipMessageOut(
                wallet_address=challenge.wallet_address,
                message=challenge.message,
                expires_at=iso(challenge.expires_at) or "",
            )
        )


class AccountView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Your credit account: balance, recent deposits and ledger rows",
        operation_id="account_get",
        parameters=[API_KEY_HEADER],
        responses={200: s.AccountOut, 401: s.UnauthorizedOut},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        deposits = Deposit.objects.filter(from_address=account.wallet_address)[:20]
        ledger = LedgerEntry.objects.filter(account=account).select_related("sku")[:50]
        return ok(
            s.AccountOut(
                wallet_address=account.wallet_address,
                credit_balance_usdc=account.credit_balance_usdc,
                credit_billing_enabled=BillingSettings.load().credit_billing_enabled,
                treasury_address=settings.TREASURY_ADDRESS,
                deposits=[
                    s.DepositOut(
                        tx_hash=d.tx_hash,
                        log_index=d.log_index,
                        block_number=d.block_number,
                        amount_usdc=d.amount_usdc,
                        bonus_usdc=usdc_from_atomic(d.bonus_atomic),
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
