"""Prepaid credits: accounts, API keys, and every change of a balance (always with its ledger
row, in one transaction; debits are one conditional UPDATE that never goes below zero)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from eth_account import Account as EthAccount
from eth_account.messages import encode_defunct

from billing.models import Account, ApiKey, BillingSettings, Deposit, LedgerEntry, OwnershipChallenge

KEY_PREFIX = "a2a_"
KEY_LOOKUP_CHARS = 12  # the first characters, stored in clear to find the candidate keys
CHALLENGE_TTL = timedelta(minutes=10)


class WalletAlreadyRegistered(Exception):
    pass


class OwnershipNotProven(Exception):
    pass


class InsufficientCredit(Exception):
    def __init__(self, balance_atomic: int, price_atomic: int):
        super().__init__(f"balance {balance_atomic} < price {price_atomic}")
        self.balance_atomic = balance_atomic
        self.price_atomic = price_atomic


@dataclass(frozen=True)
class Registration:
    account: Account
    api_key: str
    rotated: bool


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_key_issue(*, account: Account) -> str:
    """A new key (about 256 random bits); the account's other keys are revoked."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        ApiKey.objects.filter(account=account, revoked_at__isnull=True).update(revoked_at=timezone.now())
        ApiKey.objects.create(account=account, prefix=key[:KEY_LOOKUP_CHARS], key_hash=_hash(key))
    return key


def api_key_account(*, key: str) -> Account | None:
    """The active account of a presented key, or None. The hash is compared in constant time."""
    if not key.startswith(KEY_PREFIX) or len(key) < KEY_LOOKUP_CHARS + 8:
        return None
    digest = _hash(key)
    for candidate in ApiKey.objects.filter(
        prefix=key[:KEY_LOOKUP_CHARS], revoked_at__isnull=True
    ).select_related("account"):
        if hmac.compare_digest(candidate.key_hash, digest) and candidate.account.is_active:
            return candidate.account
    return None


def ownership_challenge_issue(*, wallet_address: str) -> OwnershipChallenge:
    wallet = wallet_address.lower()
    now = timezone.now()
    expires = now + CHALLENGE_TTL
    message = (
        "Agent-to-Agent Market Intelligence: prove you own this wallet to rotate its API key.\n"
        f"Wallet: {wallet}\nNonce: {secrets.token_hex(16)}\nIssued: {now.isoformat()}\nExpires: {expires.isoformat()}"
    )
    return OwnershipChallenge.objects.create(wallet_address=wallet, message=message, expires_at=expires)


def _ownership_proven(wallet: str, signature: str) -> bool:
    challenges = OwnershipChallenge.objects.filter(
        wallet_address=wallet, used_at__isnull=True, expires_at__gt=timezone.now()
    ).order_by("-created_at")[:5]
    for challenge in challenges:
        try:
            signer = EthAccount.recover_message(encode_defunct(text=challenge.message), signature=signature)
        except Exception:  # a malformed signature proves nothing
            continue
        if signer.lower() == wallet:
            # Used once: claim it with a conditional update so two requests cannot both use it.
            return bool(
                OwnershipChallenge.objects.filter(pk=challenge.pk, used_at__isnull=True).update(
                    used_at=timezone.now()
                )
            )
    return False


def account_register(*, wallet_address: str, signature: str | None = None) -> Registration:
    wallet = wallet_address.lower()
    existing = Account.objects.filter(wallet_address=wallet).first()
    if existing is not None:
        if not signature:
            raise WalletAlreadyRegistered(wallet)
        if not _ownership_proven(wallet, signature):
            raise OwnershipNotProven(wallet)
        return Registration(account=existing, api_key=api_key_issue(account=existing), rotated=True)
    try:
        with transaction.atomic():
            account = Account.objects.create(wallet_address=wallet)
            key = api_key_issue(account=account)
    except IntegrityError:
        raise WalletAlreadyRegistered(wallet) from None
    # Deposits this wallet sent before it registered are credited now.
    for deposit in Deposit.objects.filter(from_address=wallet, state=Deposit.State.UNMATCHED):
        deposit_settle(deposit_id=deposit.id)
    account.refresh_from_db()
    return Registration(account=account, api_key=key, rotated=False)


def _apply(sql: str, params: list) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def credit_debit(*, account_id: int, amount_atomic: int, sku_id: int | None, reference: str) -> int:
    """Take amount from the balance in one conditional UPDATE (never below zero) and write
    the ledger row. Must run inside the caller's transaction, so that a failed call rolls
    both back. Returns the new balance."""
    balance = _apply(
        "UPDATE billing_account SET credit_balance_atomic = credit_balance_atomic - %s "
        "WHERE id = %s AND credit_balance_atomic >= %s RETURNING credit_balance_atomic",
        [amount_atomic, account_id, amount_atomic],
    )
    if balance is None:
        current = (
            Account.objects.filter(pk=account_id).values_list("credit_balance_atomic", flat=True).first()
        )
        raise InsufficientCredit(current or 0, amount_atomic)
    LedgerEntry.objects.create(
        account_id=account_id,
        amount_atomic=-amount_atomic,
        balance_after_atomic=balance,
        kind=LedgerEntry.Kind.SKU_CALL,
        sku_id=sku_id,
        reference=reference[:200],
    )
    return balance


def credit_call_commit_relax() -> None:
    """Inside a credit call's transaction, before its debit: let it commit without waiting
    for the disk flush unless CREDIT_DEBIT_SYNC_COMMIT (see the setting for what that risks).
    SET LOCAL ends with the transaction, so nothing else on this connection is affected."""
    if connection.vendor == "postgresql" and not settings.CREDIT_DEBIT_SYNC_COMMIT:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")


def credit_add(
    *,
    account_id: int,
    amount_atomic: int,
    kind: str,
    reference: str = "",
    deposit: Deposit | None = None,
    staff_id: int | None = None,
    reason: str = "",
) -> LedgerEntry:
    """Add (or, for a negative staff adjustment, take) credit with its ledger row."""
    with transaction.atomic():
        balance = _apply(
            "UPDATE billing_account SET credit_balance_atomic = credit_balance_atomic + %s "
            "WHERE id = %s AND credit_balance_atomic + %s >= 0 RETURNING credit_balance_atomic",
            [amount_atomic, account_id, amount_atomic],
        )
        if balance is None:
            raise InsufficientCredit(0, -amount_atomic)
        entry = LedgerEntry.objects.create(
            account_id=account_id,
            amount_atomic=amount_atomic,
            balance_after_atomic=balance,
            kind=kind,
            reference=reference[:200],
            deposit=deposit,
            staff_id=staff_id,
            reason=reason[:300],
        )
    return entry


def deposit_settle(*, deposit_id: int) -> Deposit:
    """Decide a confirmed deposit: below the minimum, waiting for its wallet to register, or
    credited (with the bundle bonus). Credits once: the deposit row is locked and the ledger
    has one deposit row per deposit and kind."""
    billing = BillingSettings.load()
    with transaction.atomic():
        deposit = Deposit.objects.select_for_update().get(pk=deposit_id)
        if deposit.state in (Deposit.State.CREDITED, Deposit.State.BELOW_MINIMUM):
            return deposit
        if deposit.amount_atomic < billing.min_deposit_atomic:
            deposit.state = Deposit.State.BELOW_MINIMUM
            deposit.save(update_fields=["state"])
            return deposit
        account = Account.objects.filter(wallet_address=deposit.from_address).first()
        if account is None:
            deposit.state = Deposit.State.UNMATCHED
            deposit.save(update_fields=["state"])
            return deposit
        bonus = (
            (deposit.amount_atomic * int(billing.bonus_pct * 100)) // 10_000
            if (deposit.amount_atomic >= billing.bundle_atomic)
            else 0
        )
        credit_add(
            account_id=account.id,
            amount_atomic=deposit.amount_atomic,
            kind=LedgerEntry.Kind.DEPOSIT,
            reference=f"{deposit.tx_hash}:{deposit.log_index}",
            deposit=deposit,
        )
        if bonus:
            credit_add(
                account_id=account.id,
                amount_atomic=bonus,
                kind=LedgerEntry.Kind.BONUS,
                reference=f"bundle bonus {billing.bonus_pct}%",
                deposit=deposit,
            )
        deposit.account = account
        deposit.bonus_atomic = bonus
        deposit.state = Deposit.State.CREDITED
        deposit.credited_at = timezone.now()
        deposit.save(update_fields=["account", "bonus_atomic", "state", "credited_at"])
        return deposit


def ledger_audit() -> list[tuple[int, int, int]]:
    """Accounts whose balance differs from their ledger sum: (account id, balance, sum)."""
    from django.db.models import Sum

    sums = dict(
        LedgerEntry.objects.values_list("account_id")
        .annotate(s=Sum("amount_atomic"))
        .values_list("account_id", "s")
    )
    return [
        (a.id, a.credit_balance_atomic, sums.get(a.id, 0) or 0)
        for a in Account.objects.all()
        if a.credit_balance_atomic != (sums.get(a.id, 0) or 0)
    ]
