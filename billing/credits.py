"""Prepaid credits: accounts, API keys, and every change of a balance (always with its ledger
row, in one transaction; debits are one conditional UPDATE that never goes below zero)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import Sum
from django.utils import timezone
from eth_abi import encode as abi_encode
from eth_account import Account as EthAccount
from eth_account.messages import defunct_hash_message, encode_defunct
from eth_typing import HexStr
from web3 import Web3

from a2a_service.core.observe import money_event
from billing.chain.rpc import chain
from billing.models import Account, ApiKey, BillingSettings, Deposit, LedgerEntry, OwnershipChallenge
from billing.tiers import account_tier

logger = logging.getLogger(__name__)

KEY_PREFIX = "a2a_"
KEY_LOOKUP_CHARS = 12  # the first characters, stored in clear to find the candidate keys
CHALLENGE_TTL = timedelta(minutes=10)


class OwnershipNotProven(Exception):
    """The signature does not prove the wallet signed this challenge (or the challenge is
    unknown, used or expired)."""


class OwnershipCheckUnavailable(Exception):
    """The signature is not the wallet's own (EOA) and the chain, needed to ask a contract
    wallet (EIP-1271), cannot be reached."""


class ChallengeRateLimited(Exception):
    def __init__(self, retry_after_seconds: float):
        super().__init__(f"too many challenges; retry in {retry_after_seconds:.0f} s")
        self.retry_after_seconds = retry_after_seconds


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


def _advisory_lock(name: bytes) -> None:
    """A PostgreSQL lock on `name` until the transaction ends (SQLite serialises writers)."""
    if connection.vendor == "postgresql":
        key = int.from_bytes(hashlib.sha256(name).digest()[:8], "big", signed=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _wallet_lock(wallet: str) -> None:
    """Serialise, until the transaction ends, everything that decides who a wallet's deposits
    belong to (registration, verification, deposit_settle), so a deposit settled while its
    wallet proves ownership is either credited or seen as unmatched by the registration."""
    _advisory_lock(b"wallet:" + wallet.encode())


def _room_back_in(recent: list[datetime], limit: int, window: timedelta, now: datetime) -> float | None:
    """None if fewer than `limit` of `recent` (newest first) are in the window, else the
    seconds until the oldest of the last `limit` leaves it."""
    if len(recent) < limit:
        return None
    return max((recent[limit - 1] + window - now).total_seconds(), 1.0)


def ownership_challenge_issue(*, wallet_address: str, requester: str = "") -> OwnershipChallenge:
    """A fresh message for the wallet to sign, for `requester` (requester_fingerprint of the
    caller; empty for in-process callers). Per OWNERSHIP_CHALLENGE_WINDOW_SECONDS, at most
    OWNERSHIP_CHALLENGES_PER_WALLET for one wallet from one requester and
    OWNERSHIP_CHALLENGES_PER_REQUESTER from one requester over all wallets: challenges are free
    to ask for, and the table must not grow at a stranger's pace. No limit counts another
    requester's challenges: a stranger asking for someone's wallet uses up the stranger's own
    room, never the owner's. A challenge issued proves until it expires, whatever is asked
    after it (account_register checks no limit)."""
    wallet = wallet_address.lower()
    window = timedelta(seconds=settings.OWNERSHIP_CHALLENGE_WINDOW_SECONDS)
    per_wallet = settings.OWNERSHIP_CHALLENGES_PER_WALLET
    per_requester = settings.OWNERSHIP_CHALLENGES_PER_REQUESTER
    with transaction.atomic():
        # Two requests cannot both see room for one more (requester first, then wallet: the
        # one order in which any path takes both).
        _advisory_lock(b"challenge-requester:" + requester.encode())
        _wallet_lock(wallet)
        now = timezone.now()
        mine = OwnershipChallenge.objects.filter(requester=requester, created_at__gt=now - window).order_by(
            "-created_at"
        )
        waits = [
            _room_back_in(
                list(mine.values_list("created_at", flat=True)[:per_requester]), per_requester, window, now
            ),
            _room_back_in(
                list(mine.filter(wallet_address=wallet).values_list("created_at", flat=True)[:per_wallet]),
                per_wallet,
                window,
                now,
            ),
        ]
        wait = max((w for w in waits if w is not None), default=None)
        if wait is not None:
            raise ChallengeRateLimited(wait)
        nonce = secrets.token_hex(16)
        expires = now + CHALLENGE_TTL
        message = (
            "Agent-to-Agent Market Intelligence: sign to prove you own this wallet and get its API key.\n"
            f"Wallet: {wallet}\nNonce: {nonce}\nIssued: {now.isoformat()}\nExpires: {expires.isoformat()}"
        )
        return OwnershipChallenge.objects.create(
            wallet_address=wallet, requester=requester, nonce=nonce, message=message, expires_at=expires
        )


ERC1271_MAGIC = bytes.fromhex("1626ba7e")
ERC1271_SELECTOR = bytes.fromhex("1626ba7e")  # isValidSignature(bytes32,bytes)


def signature_valid(*, wallet: str, message: str, signature: str) -> bool:
    """Whether `wallet` signed `message` (EIP-191 personal_sign). An ordinary account (EOA)
    is recovered from the signature; if that is not the wallet and the address holds code,
    the contract wallet is asked (EIP-1271 isValidSignature of the EIP-191 hash)."""
    signable = encode_defunct(text=message)
    try:
        raw = bytes.fromhex(signature.removeprefix("0x"))
    except ValueError:  # not hex: proves nothing
        return False
    if len(raw) == 65:
        try:
            if EthAccount.recover_message(signable, signature=raw).lower() == wallet:
                return True
        except Exception:  # malformed (bad v, s out of range): proves nothing as an EOA
            pass
    digest = defunct_hash_message(text=message)
    try:
        w3 = chain()
        address = Web3.to_checksum_address(wallet)
        if not w3.eth.get_code(address):
            return False
        answer = w3.eth.call(
            {
                "to": address,
                "data": HexStr(
                    "0x" + (ERC1271_SELECTOR + abi_encode(["bytes32", "bytes"], [digest, raw])).hex()
                ),
            }
        )
    except (ConnectionError, TimeoutError, OSError) as exc:
        raise OwnershipCheckUnavailable(str(exc)) from exc
    except Exception:  # the contract reverted, or is not a wallet
        return False
    return bytes(answer)[:4] == ERC1271_MAGIC


def _ownership_claim(*, wallet: str, nonce: str, signature: str) -> None:
    """Check the signature against the one challenge the client names, and use the challenge
    up (even when the proof fails: a nonce is known only to whoever asked for it, and each
    try may cost an RPC call). Raises OwnershipNotProven."""
    challenge = OwnershipChallenge.objects.filter(
        wallet_address=wallet, nonce=nonce.lower(), used_at__isnull=True, expires_at__gt=timezone.now()
    ).first()
    if challenge is None:
        raise OwnershipNotProven(wallet)
    # Claimed with a conditional update: two requests with the same nonce cannot both use it.
    if not OwnershipChallenge.objects.filter(pk=challenge.pk, used_at__isnull=True).update(
        used_at=timezone.now()
    ):
        raise OwnershipNotProven(wallet)
    if not signature_valid(wallet=wallet, message=challenge.message, signature=signature):
        raise OwnershipNotProven(wallet)


def account_register(*, wallet_address: str, nonce: str, signature: str) -> Registration:
    """Register a wallet, or give its account a new key, once it signed the challenge `nonce`.
    The account is then verified, and the wallet's deposits that waited for a verified
    account (unmatched) are credited to it."""
    wallet = wallet_address.lower()
    _ownership_claim(wallet=wallet, nonce=nonce, signature=signature)
    with transaction.atomic():
        _wallet_lock(wallet)
        account, created = Account.objects.get_or_create(wallet_address=wallet)
        if account.ownership_verified_at is None:
            account.ownership_verified_at = timezone.now()
            account.save(update_fields=["ownership_verified_at"])
        key = api_key_issue(account=account)
        for deposit_id in Deposit.objects.filter(
            from_address=wallet, state=Deposit.State.UNMATCHED
        ).values_list("id", flat=True):
            deposit_settle(deposit_id=deposit_id)
    account.refresh_from_db()
    return Registration(account=account, api_key=key, rotated=not created)


def _apply(sql: str, params: list[int]) -> int | None:
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
    entry = LedgerEntry.objects.create(
        account_id=account_id,
        amount_atomic=-amount_atomic,
        balance_after_atomic=balance,
        kind=LedgerEntry.Kind.SKU_CALL,
        sku_id=sku_id,
        reference=reference[:200],
    )
    # Told when the caller's transaction commits: a call whose product failed rolls it back, untold.
    money_event(
        "debit",
        amount_atomic=amount_atomic,
        account_id=account_id,
        ledger_entry_id=entry.id,
        sku_id=sku_id,
        reference=entry.reference,
    )
    return balance


def credit_call_commit_relax() -> None:
    """Inside a credit call's transaction, before its debit: let it commit without waiting
    for the disk flush unless CREDIT_DEBIT_SYNC_COMMIT (see the setting for what that risks).
    SET LOCAL ends with the transaction, so nothing else on this connection is affected."""
    if connection.vendor == "postgresql" and not settings.CREDIT_DEBIT_SYNC_COMMIT:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")


# The money event a credit of each kind is told as (a deposit and its bonuses are one "deposit"
# event, told by deposit_settle with the deposit's ids).
CREDIT_EVENTS: dict[str, str] = {
    LedgerEntry.Kind.REFUND: "refund",
    LedgerEntry.Kind.ADJUSTMENT: "adjustment",
    LedgerEntry.Kind.REORG_REVERSAL: "reversal",
    LedgerEntry.Kind.BOUNTY_REWARD: "reward",
}


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
        event = CREDIT_EVENTS.get(kind)
        if event is not None:
            money_event(
                event,
                amount_atomic=amount_atomic,
                account_id=account_id,
                ledger_entry_id=entry.id,
                reference=entry.reference,
            )
    return entry


def deposit_settle(*, deposit_id: int) -> Deposit:
    """Decide a confirmed deposit: below the minimum, waiting for its wallet to register, or
    credited (with the bundle bonus, and the whale tier's bonus: billing/tiers.py). Credits once: the deposit row is locked and the ledger
    has one deposit row per deposit and kind."""
    billing = BillingSettings.load()
    # The wallet lock before the row lock, in the order registration takes them (wallet, then
    # its deposits): the other order could deadlock with a registration of the same wallet.
    wallet = Deposit.objects.values_list("from_address", flat=True).get(pk=deposit_id)
    with transaction.atomic():
        _wallet_lock(wallet)
        deposit = Deposit.objects.select_for_update().get(pk=deposit_id)
        if deposit.state in (Deposit.State.CREDITED, Deposit.State.BELOW_MINIMUM, Deposit.State.REORGED):
            return deposit
        if deposit.amount_atomic < billing.min_deposit_atomic:
            deposit.state = Deposit.State.BELOW_MINIMUM
            deposit.save(update_fields=["state"])
            return deposit
        # Only an account whose wallet signed for it: naming a wallet proves nothing.
        account = Account.objects.filter(
            wallet_address=deposit.from_address, ownership_verified_at__isnull=False
        ).first()
        if account is None:
            deposit.state = Deposit.State.UNMATCHED
            deposit.save(update_fields=["state"])
            return deposit
        bonus = (
            (deposit.amount_atomic * int(billing.bonus_pct * 100)) // 10_000
            if (deposit.amount_atomic >= billing.bundle_atomic)
            else 0
        )
        # The tier held before this deposit (it is not credited yet, so not counted): the
        # deposit that crosses a threshold earns the new tier's bonus from the next one on.
        tier = account_tier(account.id)
        whale_bonus = tier.bonus_for(deposit.amount_atomic) if tier is not None else 0
        credited = credit_add(
            account_id=account.id,
            amount_atomic=deposit.amount_atomic,
            kind=LedgerEntry.Kind.DEPOSIT,
            reference=f"{deposit.tx_hash}:{deposit.tx_log_index}",
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
        if whale_bonus and tier is not None:
            # Its own row, linked to the deposit: the (deposit, kind) constraint credits it once.
            credit_add(
                account_id=account.id,
                amount_atomic=whale_bonus,
                kind=LedgerEntry.Kind.WHALE_BONUS,
                reference=f"whale tier {tier.name} {tier.bonus_pct}% of {deposit.tx_hash}:{deposit.tx_log_index}",
                deposit=deposit,
            )
        deposit.account = account
        deposit.bonus_atomic = bonus
        deposit.whale_bonus_atomic = whale_bonus
        deposit.state = Deposit.State.CREDITED
        deposit.credited_at = timezone.now()
        deposit.save(update_fields=["account", "bonus_atomic", "whale_bonus_atomic", "state", "credited_at"])
        money_event(
            "deposit",
            amount_atomic=deposit.amount_atomic,
            account_id=account.id,
            deposit_id=deposit.id,
            ledger_entry_id=credited.id,
            bonus_atomic=bonus + whale_bonus,
            tx_hash=deposit.tx_hash,
        )
        return deposit


def deposit_orphan(*, deposit_id: int) -> Deposit:
    """A deposit whose block left the chain (a reorganisation deeper than the confirmations):
    it becomes `reorged`, and if it was credited, the credit and its bonuses are taken back with
    a reorg_reversal ledger row. What the balance no longer holds (it was spent) cannot be
    taken: it is recorded on the account (reorg_shortfall_atomic) and the account is held
    (is_active false) for staff to settle. If the transfer is included again, the watcher
    records it as a new deposit and credits it once it is confirmed."""
    wallet = Deposit.objects.values_list("from_address", flat=True).get(pk=deposit_id)
    with transaction.atomic():
        _wallet_lock(wallet)  # the same order as deposit_settle and registration
        deposit = Deposit.objects.select_for_update().get(pk=deposit_id)
        if deposit.state == Deposit.State.REORGED:
            return deposit
        if deposit.state == Deposit.State.CREDITED and deposit.account_id is not None:
            owed = deposit.amount_atomic + deposit.bonus_atomic + deposit.whale_bonus_atomic
            account = Account.objects.select_for_update().get(pk=deposit.account_id)
            taken = min(owed, account.credit_balance_atomic)
            shortfall = owed - taken
            reason = f"chain reorganisation: deposit {deposit.tx_hash} left the chain"
            if shortfall:
                reason += f"; {shortfall} atomic could not be taken back (spent): account held"
            if taken:
                credit_add(
                    account_id=account.id,
                    amount_atomic=-taken,
                    kind=LedgerEntry.Kind.REORG_REVERSAL,
                    reference=f"{deposit.tx_hash}:{deposit.tx_log_index}",
                    deposit=deposit,
                    reason=reason,
                )
            if shortfall:
                Account.objects.filter(pk=account.id).update(
                    reorg_shortfall_atomic=models.F("reorg_shortfall_atomic") + shortfall, is_active=False
                )
                logger.error(
                    "account %s held: a reorganisation took back deposit %s of %s atomic, %s of it already spent",
                    account.wallet_address,
                    deposit.tx_hash,
                    owed,
                    shortfall,
                )
        deposit.state = Deposit.State.REORGED
        deposit.save(update_fields=["state"])
        return deposit


def ledger_audit() -> list[tuple[int, int, int]]:
    """Accounts whose balance differs from their ledger sum: (account id, balance, sum)."""
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
