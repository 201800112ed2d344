"""The sign-in scheme: a wallet that signed the 402's `sign-in-with-x` challenge (the
SIGN-IN-WITH-X header, as the SDK's clients send it) pays without a payment proof or an API key.

1. The signed message is checked: the SDK's own validation (our domain, the uri's origin, issued
   at most five minutes ago, not expired, not before its time) and signature check, and ours:
   signed for this very resource (its path and query on our origin: a signature for another path
   is refused), on our chain, with an expiry, and a nonce we issued less than NONCE_SECONDS ago
   (billing/x402/signin.py). The nonce is used with the payment: a unique (wallet, nonce) row
   written inside the rail's transaction before its hold (Offer.with_payment), so a served call
   uses it once (the same signature is then refused, and a concurrent one waits for the first
   and is refused), and a call that fails (nothing fresh to deliver, not enough credit) leaves
   it unused for the same signed message to be sent again while it is valid.
2. What the wallet already owns is served without a charge: the checks registered here
   (`ownership_register`) by billing (a news item it unlocked), sessions_app (a session pack
   covering the SKU), webhooks (a push entitlement covering what it asks for) and agents (a
   managed MCP pack), each answering the rail that serves it, or None.
3. Else a wallet whose credit account is verified (it signed our ownership challenge when it
   registered) and active pays from its credits: the X-API-Key rail itself (CreditRail), so the
   debit, its ledger row and the receipt are the same.
4. Else the 402 stands, saying why.

Refusals are PaymentRejected, answered as a refused x402 proof is (the 402 with the challenge to pay
instead): the SDK's reason codes (invalid_siwx_expired, invalid_siwx_domain_mismatch...), ours
(invalid_siwx_nonce_used, a replay), and `siwx_nothing_owned` for a good signature that buys
nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct
from x402.extensions.sign_in_with_x import (
    SIWxVerifyOptions,
    parse_siwx_header,
    validate_siwx_message,
    verify_siwx_signature,
)

from billing.front.schemes import scheme_register
from billing.front.types import Brought, Sale
from billing.models import Account, SignInNonce
from billing.once import owned_item_of
from billing.rails.base import Content, FreeReceipt, Offer, Paid, Rail, Receipt
from billing.rails.credits import CreditRail
from billing.x402.proof import PaymentRejected
from billing.x402.signin import HEADER, siwx_nonce_valid, siwx_origin, siwx_uri
from billing.x402.signin_message import eoa_signer, plain_message

T = TypeVar("T")
logger = logging.getLogger(__name__)

# (the signed-in wallet, lower case; its credit account if it has one; the sale) -> the rail that
# serves what it already owns without a charge, or None.
OwnershipCheck = Callable[[str, Account | None, Sale], Rail | None]
OWNERSHIP: dict[str, OwnershipCheck] = {}
# The same checks as SQL, for the sign-in fast path's one statement (billing/api/signin_fastpath.py):
# a boolean expression, true when the wallet %(wallet)s (lower case) or its credit account
# %(account)s owns something covering the SKU %(sku)s of a GET with no parameters on a REST path.
# While any check has none, every sign-in call is Django's.
OWNED_SQL: dict[str, str] = {}


def ownership_register(name: str, check: OwnershipCheck, *, owned_sql: str | None = None) -> None:
    """Called from an app's AppConfig.ready (the checks live in the layer that owns the thing)."""
    OWNERSHIP[name] = check
    if owned_sql is None:
        OWNED_SQL.pop(name, None)
    else:
        OWNED_SQL[name] = owned_sql


def _settled(coro: Coroutine[Any, Any, T]) -> T:
    """The SDK's checks are coroutines that await nothing unless given a verifier or a provider
    (none is): run one to its end here, without an event loop (making one per call costs more
    than the check, and a surface may be running inside one already)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a sign-in check waited on I/O")


async def _eoa_signed(*, address: str, message: str, signature: str) -> bool:
    """The SDK's EVM verifier hook, for an EOA: the signer EIP-191 recovers from the SDK-formatted
    message. Without it the SDK re-parses the message it just formatted with the SIWE package's
    grammar and checks again what validate_siwx_message checked (tens of milliseconds a call);
    neither supports contract wallets without a provider."""
    try:
        signer = EthAccount.recover_message(encode_defunct(text=message), signature=signature)
    except Exception:  # noqa: BLE001 - a malformed signature is a refused one
        return False
    return bool(signer.lower() == address.lower())


VERIFY = SIWxVerifyOptions(evm_verifier=_eoa_signed)


def signin_verify(*, header: str, resource_url: str) -> tuple[str, str]:
    """The wallet (lower case) and nonce of a good signed message for this resource, or the
    refusal (PaymentRejected)."""
    try:
        payload = parse_siwx_header(header.strip())
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        raise PaymentRejected("invalid_siwx_payload", str(exc)[:300]) from None
    origin = siwx_origin(resource_url)
    if origin is None:
        raise PaymentRejected("invalid_siwx_uri_mismatch", "this resource takes no sign-in")
    try:
        validation = _settled(validate_siwx_message(payload, origin))
    except ValueError as exc:  # a uri urlparse refuses (the SDK lets it through)
        raise PaymentRejected("invalid_siwx_payload", str(exc)[:300]) from None
    if not validation.is_valid:
        raise PaymentRejected(str(validation.invalid_reason), str(validation.invalid_message))
    if payload.uri != siwx_uri(resource_url, origin):
        raise PaymentRejected(
            "invalid_siwx_uri_mismatch",
            f"the message was signed for {payload.uri}, not for this resource; sign this 402's challenge",
        )
    if payload.chain_id != settings.X402_NETWORK:
        raise PaymentRejected("invalid_siwx_chain_id", f"sign in on {settings.X402_NETWORK}")
    if not payload.expiration_time:
        raise PaymentRejected("invalid_siwx_expiration_time", "the message must carry its expirationTime")
    if not siwx_nonce_valid(payload.nonce):
        raise PaymentRejected(
            "invalid_siwx_nonce", "the nonce is not one of ours, or is too old: sign a new 402"
        )
    message = plain_message(payload)
    if message is not None:  # our challenge's shape: the same text, without the grammars' cost
        signer = eoa_signer(message=message, signature=payload.signature)
        if signer is None:
            signed = _settled(
                _eoa_signed(address=payload.address, message=message, signature=payload.signature)
            )
        else:
            signed = signer == payload.address.lower()
        if not signed:
            raise PaymentRejected("invalid_siwx_signature", "Signature verification failed")
        return payload.address.lower(), payload.nonce
    try:
        verification = _settled(verify_siwx_signature(payload, VERIFY))
    except ValueError as exc:  # fields the SIWE message refuses (a malformed address...)
        raise PaymentRejected("invalid_siwx_payload", str(exc)[:300]) from None
    except ImportError:  # the SDK's EVM check needs `signinwithethereum` (x402[extensions])
        logger.error("sign-in-with-x cannot be verified: the signinwithethereum package is not installed")
        raise PaymentRejected(
            "invalid_siwx_verifier_error", "sign-in cannot be checked by this server now; pay with x402"
        ) from None
    if not verification.is_valid or not verification.payer:
        raise PaymentRejected(str(verification.invalid_reason), str(verification.invalid_message))
    return verification.payer.lower(), payload.nonce


def signin_nonce_use(*, wallet_address: str, nonce: str) -> bool:
    """Record the nonce as used by the wallet: False when it was already (a replay)."""
    try:
        with transaction.atomic():
            SignInNonce.objects.create(wallet_address=wallet_address, nonce=nonce)
    except IntegrityError:
        return False
    return True


def _nonce_spend(address: str, nonce: str) -> None:
    if not signin_nonce_use(wallet_address=address, nonce=nonce):
        raise PaymentRejected(
            "invalid_siwx_nonce_used",
            "this signed message was used already: sign the new 402's challenge",
        )


def _owned_once(address: str, account: Account | None, sale: Sale) -> Rail | None:
    """A news item the account unlocked: the credit rail, whose claim finds it owned and charges
    nothing (the claim, not this read, is what keeps a first unlock paid once)."""
    item = owned_item_of(sale.offer)
    if account is None or item is None:
        return None
    owned = item.kind.model._default_manager.filter(account_id=account.id, **{item.kind.column: item.item_id})
    if not owned.exists():
        return None
    return CreditRail(account=account, reference=sale.reference)


class OwnedRail:
    """What the signed-in wallet already owns (a check above found it): served without a charge."""

    rail_name: ClassVar[str] = "free"
    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = False

    def __init__(self, *, wallet_address: str, account: Account | None) -> None:
        self.wallet_address = wallet_address
        self.account = account

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.wallet_address
        offer.call.account = self.account
        offer.call.extra["charge_atomic"] = 0
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        with transaction.atomic():
            return body()

    def hold(self, offer: Offer, content: Content | None) -> _OwnedHold:
        return _OwnedHold()


class _OwnedHold:
    def commit(self, content: Content | None) -> Receipt:
        return FreeReceipt()

    def release(self) -> None:
        return None

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


class SignInScheme:
    name = "siwx"

    def brought(self, brought: Brought) -> bool:
        return bool(brought.header(HEADER).strip())

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        address, nonce = signin_verify(header=brought.header(HEADER), resource_url=sale.resource_url)
        # Used with the payment, in the rail's transaction: a call that fails (nothing fresh to
        # deliver, not enough credit) leaves it unused, and the same signed message may be sent
        # again while it is valid; a served call uses it once.
        sale.offer.with_payment.append(lambda: _nonce_spend(address, nonce))
        account = Account.objects.filter(wallet_address=address).first()
        for check in OWNERSHIP.values():
            rail = check(address, account, sale)
            if rail is not None:
                return rail
        if account is not None and account.is_active and account.ownership_verified:
            return CreditRail(account=account, reference=sale.reference)
        raise PaymentRejected(
            "siwx_nothing_owned",
            f"signed in as {address}: this wallet owns nothing that covers {sale.offer.name} and has no verified "
            "credit account (POST /api/a2a/account/register, then deposit); pay it with x402",
        )


# A news item is named by a parameter: never a call the fast path serves.
ownership_register("once_per_account", _owned_once, owned_sql="FALSE")
scheme_register(SignInScheme())
