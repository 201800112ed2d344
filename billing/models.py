from __future__ import annotations

from decimal import Decimal

from django.db import models

from a2a_service.core.money import usdc_from_atomic


class BillingSettings(models.Model):
    """The shop's staff-editable billing switches (one row)."""

    credit_billing_enabled = models.BooleanField(
        default=True, help_text="debit X-API-Key calls from the prepaid credit balance"
    )
    min_deposit_atomic = models.PositiveBigIntegerField(default=10_000, help_text="smallest deposit credited")
    bundle_atomic = models.PositiveBigIntegerField(
        default=5_000_000, help_text="deposit size that earns the bonus"
    )
    bonus_pct = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("10.00"))
    whale_window_days = models.PositiveSmallIntegerField(
        default=30,
        help_text="whale tiers: the USDC an account deposited in this many days (up to now) earns its tier",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "billing settings"
        verbose_name_plural = "billing settings"

    def __str__(self) -> str:
        return "billing settings"

    @classmethod
    def load(cls) -> BillingSettings:
        obj, _ = cls.objects.get_or_create(pk=1)
        return obj

    @property
    def bonus_atomic(self) -> int:
        return int(self.bundle_atomic * self.bonus_pct / 100)

    @property
    def min_deposit_usdc(self) -> float:
        return usdc_from_atomic(self.min_deposit_atomic)

    @property
    def bundle_usdc(self) -> float:
        return usdc_from_atomic(self.bundle_atomic)

    @property
    def bonus_usdc(self) -> float:
        return usdc_from_atomic(self.bonus_atomic)


class Payment(models.Model):
    """One x402 payment proof presented for a SKU. (payer, nonce) is unique: a proof is
    claimed once, before the product runs. Settled rows are the service's sales.

    claimed -> settled | failed | pending (broadcast, not confirmed in time) -> settled | released.
    A released claim is deleted, so the same proof may be sent again. A settled payment whose
    content was not delivered (delivered_at empty) is collected by sending the same proof again."""

    class State(models.TextChoices):
        CLAIMED = "claimed", "claimed"
        PENDING = "settlement_pending", "settlement pending (broadcast, not yet confirmed)"
        SETTLED = "settled", "settled"
        FAILED = "failed", "failed"

    sku = models.ForeignKey("catalog.Sku", on_delete=models.PROTECT, related_name="payments")
    resource = models.CharField(max_length=500)
    payer = models.CharField(max_length=42, db_index=True)
    nonce = models.CharField(max_length=66)
    amount_atomic = models.PositiveBigIntegerField()
    network = models.CharField(max_length=32)
    asset = models.CharField(max_length=42)
    pay_to = models.CharField(max_length=42)
    x402_version = models.PositiveSmallIntegerField(default=2)
    # The x402 scheme: `exact` (an EIP-3009 authorization of the price; nonce: its bytes32) or
    # `upto` (a Permit2 authorization of a maximum; nonce: its uint256 as 32 bytes of hex;
    # amount_atomic: the maximum while claimed, what the call used from the moment it is metered).
    scheme = models.CharField(max_length=24, default="exact")
    state = models.CharField(max_length=24, choices=State.choices, default=State.CLAIMED, db_index=True)
    tx_hash = models.CharField(max_length=66, blank=True)
    error = models.CharField(max_length=500, blank=True)
    # The authorization's validBefore (unix seconds): after it, an unsettled claim can never settle.
    valid_before = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    settled_at = models.DateTimeField(null=True, blank=True, db_index=True)
    delivered_at = models.DateTimeField(
        null=True, blank=True, help_text="when the content (or the effect) was delivered for this payment"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["payer", "nonce"], name="payment_proof_used_once")]
        indexes = [models.Index(fields=["state", "settled_at"])]

    def __str__(self) -> str:
        return f"{self.sku_id} {self.payer} {self.state}"

    @property
    def amount_usdc(self) -> float:
        return usdc_from_atomic(self.amount_atomic)


class WhaleTier(models.Model):
    """A tier of large prepaid accounts, published in the whale catalog. An account holds the
    highest tier whose min_deposit_atomic its credited deposits of the window reach
    (BillingSettings.whale_window_days; billing/whale.py)."""

    name = models.CharField(max_length=64, unique=True)
    min_deposit_atomic = models.PositiveBigIntegerField(
        help_text="USDC (atomic, 6 decimals) deposited within the window to hold this tier"
    )
    bonus_pct = models.DecimalField(
        max_digits=6,
        decimal_places=2,
        default=Decimal("0"),
        help_text="added to each deposit of an account that holds the tier (a whale_bonus ledger row)",
    )
    rate_limit_per_minute = models.PositiveIntegerField(
        default=1200,
        help_text="requests per minute per caller address with the account's API key or whale token "
        "(instead of the base THROTTLE_ANON rate; set it above that)",
    )
    perks = models.JSONField(
        default=list, blank=True, help_text="other perks shown in the catalog: only what staff deliver"
    )

    class Meta:
        ordering = ["min_deposit_atomic"]

    def __str__(self) -> str:
        return self.name

    @property
    def min_deposit_usdc(self) -> float:
        return usdc_from_atomic(self.min_deposit_atomic)

    def bonus_for(self, amount_atomic: int) -> int:
        """The tier's bonus on a deposit, rounded down to the atomic unit."""
        return (amount_atomic * int(self.bonus_pct * 100)) // 10_000


class Account(models.Model):
    """A prepaid credit account: one per wallet. The balance is a cache of the ledger sum,
    changed only together with a ledger row (see billing.services.credits)."""

    wallet_address = models.CharField(max_length=42, unique=True, help_text="lower-case 0x address")
    credit_balance_atomic = models.BigIntegerField(default=0)
    is_active = models.BooleanField(default=True)
    # Set when the wallet signed one of our challenges. Deposits are credited only to a
    # verified account: anyone can name a wallet, only its owner can sign for it. Accounts
    # registered before proofs were required stay null until their owner signs.
    ownership_verified_at = models.DateTimeField(null=True, blank=True)
    # What a reorganisation took back that the balance no longer held (it was spent): the
    # account is held (is_active false) until staff settle it.
    reorg_shortfall_atomic = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(credit_balance_atomic__gte=0), name="account_balance_not_negative"
            )
        ]

    def __str__(self) -> str:
        return self.wallet_address

    @property
    def credit_balance_usdc(self) -> float:
        return usdc_from_atomic(self.credit_balance_atomic)

    @property
    def ownership_verified(self) -> bool:
        return self.ownership_verified_at is not None


class ApiKey(models.Model):
    """Only a hash of the key is stored; the key itself is shown once."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="api_keys")
    prefix = models.CharField(max_length=16, db_index=True, help_text="first characters, to find the key")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({'revoked' if self.revoked_at else 'active'})"


class OwnershipChallenge(models.Model):
    """A message the service issued for a wallet to sign (EIP-191, or EIP-1271 for a contract
    wallet), to prove ownership. The client returns its nonce with the signature: the proof is
    checked against that one challenge, which no number of newer challenges can displace."""

    wallet_address = models.CharField(max_length=42, db_index=True)
    # Who asked for it (a keyed hash of the caller's address: requester_fingerprint; empty for
    # in-process callers): issuing is limited per requester, so that one requester's challenges
    # never use up another's room for the same wallet.
    requester = models.CharField(max_length=32, blank=True, default="")
    nonce = models.CharField(max_length=64, unique=True)
    message = models.TextField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["requester", "created_at"], name="challenge_requester_recent"),
            models.Index(
                fields=["wallet_address", "requester", "created_at"], name="challenge_wallet_requester"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.wallet_address} until {self.expires_at:%Y-%m-%d %H:%M}"


class ChainCursor(models.Model):
    """How far the deposit watcher has read: every confirmed block up to block_number, on the
    chain whose block 0 is genesis_hash. checkpoints: [number, hash] of recently read blocks,
    to find the common ancestor after a reorganisation."""

    name = models.CharField(max_length=64, primary_key=True)
    block_number = models.BigIntegerField()
    block_hash = models.CharField(max_length=66, blank=True)
    genesis_hash = models.CharField(max_length=66, blank=True)
    checkpoints = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} @ {self.block_number}"


class Deposit(models.Model):
    class State(models.TextChoices):
        PENDING = "pending_confirmations", "pending confirmations"
        CREDITED = "credited", "credited"
        BELOW_MINIMUM = "below_minimum", "below minimum (not credited)"
        UNMATCHED = "unmatched", "no verified account yet (credited when the wallet proves ownership)"
        REORGED = "reorged", "orphaned by a chain reorganisation (credit reversed)"

    tx_hash = models.CharField(max_length=66)
    log_index = models.PositiveIntegerField(help_text="the log's index in its block (changes if re-included)")
    # The log's position inside its transaction: with tx_hash, the deposit's identity, the same
    # whichever block includes the transaction. Null for rows recorded before it was kept.
    tx_log_index = models.PositiveIntegerField(null=True, blank=True)
    block_number = models.BigIntegerField(db_index=True)
    block_hash = models.CharField(max_length=66)
    from_address = models.CharField(max_length=42, db_index=True)
    amount_atomic = models.PositiveBigIntegerField()
    bonus_atomic = models.PositiveBigIntegerField(default=0)
    whale_bonus_atomic = models.PositiveBigIntegerField(
        default=0, help_text="the whale tier's bonus credited with this deposit (its whale_bonus ledger row)"
    )
    account = models.ForeignKey(
        Account, null=True, blank=True, on_delete=models.PROTECT, related_name="deposits"
    )
    state = models.CharField(max_length=24, choices=State.choices, db_index=True)
    seen_at = models.DateTimeField(auto_now_add=True)
    credited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-block_number", "-log_index"]
        constraints = [
            # A transfer is one deposit wherever it lands; a row orphaned by a reorganisation
            # (its credit reversed) no longer holds the key, so a re-inclusion is a new row.
            models.UniqueConstraint(
                fields=["tx_hash", "tx_log_index"],
                condition=~models.Q(state="reorged"),
                name="deposit_transfer_recorded_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.from_address} {usdc_from_atomic(self.amount_atomic)} USDC ({self.state})"

    @property
    def amount_usdc(self) -> float:
        return usdc_from_atomic(self.amount_atomic)


class LedgerEntry(models.Model):
    """Append-only: every change of a credit balance is one row."""

    class Kind(models.TextChoices):
        DEPOSIT = "deposit", "deposit"
        BONUS = "bonus", "bundle bonus"
        WHALE_BONUS = "whale_bonus", "whale tier bonus"
        SKU_CALL = "sku_call", "SKU call"
        REFUND = "refund", "refund"
        ADJUSTMENT = "adjustment", "staff adjustment"
        REORG_REVERSAL = "reorg_reversal", "reversal of a deposit orphaned by a reorg"
        BOUNTY_REWARD = "bounty_reward", "bounty reward"

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="ledger")
    amount_atomic = models.BigIntegerField(help_text="signed: credits positive, debits negative")
    balance_after_atomic = models.BigIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    reference = models.CharField(max_length=200, blank=True)
    sku = models.ForeignKey("catalog.Sku", null=True, blank=True, on_delete=models.PROTECT)
    deposit = models.ForeignKey(Deposit, null=True, blank=True, on_delete=models.PROTECT)
    staff = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.PROTECT)
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            # A deposit (and its bonus) is credited once, whatever runs twice.
            models.UniqueConstraint(
                fields=["deposit", "kind"],
                condition=models.Q(deposit__isnull=False),
                name="ledger_deposit_credited_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.kind} {usdc_from_atomic(self.amount_atomic)}"


class WhaleToken(models.Model):
    """A signed, expiring whale tier pass (billing/whale.py): sub-agents send it in
    X-Whale-Token for the account's tier rate limit; it pays for nothing. The token itself is
    never stored (its signature is derived from SECRET_KEY): this row makes it revocable."""

    jti = models.CharField(max_length=32, unique=True)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="whale_tokens")
    tier = models.CharField(max_length=64, help_text="the account's tier when it was issued")
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.jti[:8]}… {self.tier} ({'revoked' if self.revoked_at else 'active'})"


class IdempotentCall(models.Model):
    """The first answer to a paid call sent with an Idempotency-Key, replayed on retries of
    the same call only: a key reused for another method, path or parameters is refused."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE)
    key = models.CharField(max_length=200)
    path = models.CharField(max_length=300)
    fingerprint = models.CharField(
        max_length=64, default="", help_text="sha256 of the call's method, path, query and body"
    )
    status_code = models.PositiveSmallIntegerField()
    body = models.JSONField()
    headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "key"], name="idempotency_key_once_per_account")
        ]

    def __str__(self) -> str:
        return f"{self.account_id} {self.key}"


class NewsUnlock(models.Model):
    """An account that has unlocked a news item gets it again free."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE)
    news_item = models.ForeignKey("catalog.NewsItem", on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "news_item"], name="news_unlocked_once")]

    def __str__(self) -> str:
        return f"{self.account_id} unlocked {self.news_item_id}"


class SignInNonce(models.Model):
    """A sign-in-with-x nonce a wallet has used (billing/x402/signin.py): the unique pair is
    what makes each signed message good for one call."""

    wallet_address = models.CharField(max_length=42, help_text="lower-case 0x address")
    nonce = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["wallet_address", "nonce"], name="siwx_nonce_once")]

    def __str__(self) -> str:
        return f"{self.wallet_address} {self.nonce}"


class CreditAdjustment(LedgerEntry):
    """The admin's form for a staff adjustment: it writes one ledger row (and the balance)."""

    class Meta:
        proxy = True
        verbose_name = "credit adjustment"


class PaymentIdentifier(models.Model):
    """A client-named x402 payment (the `payment-identifier` extension): answered once. The
    identifier is unique; its first call claims the row (an insert, never a read first) with
    the fingerprint of the payload and the call, and stores the answer once it is sold, so
    the same payload again gets that answer (no second charge or settlement) and another
    payload under the same identifier is refused (409). A first call that failed with nothing
    charged deletes its row: the identifier may be used again (billing/front/identifier.py)."""

    class State(models.TextChoices):
        CLAIMED = "claimed", "claimed (the first call is running, or ended without an answer)"
        ANSWERED = "answered", "answered"

    key = models.CharField(max_length=128, unique=True)
    fingerprint = models.CharField(max_length=64, help_text="sha256 of the payment payload and the call")
    state = models.CharField(max_length=12, choices=State.choices, default=State.CLAIMED)
    # The running attempt holding the claim ("" once it gave it up: the same payload may run again).
    attempt = models.CharField(max_length=32, blank=True, default="")
    claimed_at = models.DateTimeField(db_index=True)
    scheme = models.CharField(max_length=32, blank=True, default="")
    sku = models.CharField(max_length=64, blank=True, default="")
    content = models.JSONField(null=True, blank=True)
    # The charge as first told (rail, amount, transaction, payer, the x402 settle response).
    receipt = models.JSONField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.key} {self.state}"


class DiscoveredResource(models.Model):
    """A resource the self-hosted facilitator saw declared (x402 `bazaar`) in a verify or a
    settle: its discovery list (GET /api/a2a/facilitator/discovery/resources). One row per
    resource URL and method (or MCP tool), upserted in one statement."""

    resource = models.CharField(max_length=500)
    method = models.CharField(max_length=8, blank=True, default="")
    tool_name = models.CharField(max_length=128, blank=True, default="")
    type = models.CharField(max_length=8, help_text="http or mcp")
    x402_version = models.PositiveSmallIntegerField(default=2)
    description = models.CharField(max_length=500, blank=True, default="")
    mime_type = models.CharField(max_length=100, blank=True, default="")
    service_name = models.CharField(max_length=32, blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    icon_url = models.CharField(max_length=2048, blank=True, default="")
    # "<scheme>|<network>" -> the payment requirements last seen for it.
    accepts = models.JSONField(default=dict)
    bazaar = models.JSONField(default=dict, help_text="the declaration (info and schema) last seen")
    first_seen_at = models.DateTimeField()
    last_updated = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["resource", "method", "tool_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["resource", "method", "tool_name"], name="discovered_resource_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.method or self.tool_name} {self.resource}"


# Models of billing's subpackages, imported here so Django (and migrations) find them.
import billing.bounties.models  # noqa: E402, F401
import billing.txgen.models  # noqa: E402, F401


class PaymentChannel(models.Model):
    """The server's state of one x402 `batch-settlement` payment channel: every field of the
    SDK's server `Channel` (billing/x402/channels.py reads and writes it under a row lock).
    Amounts are atomic USDC (the SDK's decimal strings); times are unix milliseconds as the
    SDK keeps them. `charged_cumulative_atomic` only grows: it is the sum of the channel's
    sales (ChannelSale), and the next voucher must sign exactly it plus the call's price."""

    channel_id = models.CharField(max_length=66, primary_key=True)  # bytes32 hex, lowercase
    # The ChannelConfig (it hashes to channel_id).
    payer = models.CharField(max_length=42, db_index=True)
    payer_authorizer = models.CharField(max_length=42)
    receiver = models.CharField(max_length=42)
    receiver_authorizer = models.CharField(max_length=42)
    token = models.CharField(max_length=42)
    withdraw_delay = models.PositiveIntegerField()
    salt = models.CharField(max_length=66)
    charged_cumulative_atomic = models.DecimalField(max_digits=78, decimal_places=0, default=0)
    # The latest voucher: what a claim submits.
    signed_max_claimable_atomic = models.DecimalField(max_digits=78, decimal_places=0, default=0)
    signature = models.TextField(default="0x")
    # The on-chain channel as last read.
    balance_atomic = models.DecimalField(max_digits=78, decimal_places=0, default=0)
    total_claimed_atomic = models.DecimalField(max_digits=78, decimal_places=0, default=0)
    withdraw_requested_at = models.BigIntegerField(default=0)  # a payer's timed withdrawal (0: none)
    refund_nonce = models.BigIntegerField(default=0)
    onchain_synced_at = models.BigIntegerField(null=True, blank=True)
    last_request_timestamp = models.BigIntegerField(default=0)
    # The in-flight request's reservation (the SDK's PendingRequest), empty when none.
    pending_id = models.CharField(max_length=80, blank=True)
    pending_signed_max_claimable_atomic = models.DecimalField(
        max_digits=78, decimal_places=0, null=True, blank=True
    )
    pending_expires_at = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.channel_id[:10]} {self.payer} {self.charged_cumulative_atomic}"


class ChannelSale(models.Model):
    """One call paid by a channel voucher: a ledger-visible sale (billing/selectors/sales.py
    counts it like a settled x402 Payment). Written in the transaction that commits the
    voucher to the channel, so a committed voucher is a sale and a rolled-back one is not.
    (channel, cumulative) is unique: a voucher pays one call."""

    channel_id = models.CharField(max_length=66, db_index=True)
    sku = models.ForeignKey("catalog.Sku", on_delete=models.PROTECT, related_name="channel_sales")
    resource = models.CharField(max_length=500)
    payer = models.CharField(max_length=42, db_index=True)
    amount_atomic = models.PositiveBigIntegerField()
    # The channel's charged cumulative amount after this call (the voucher's maximum).
    cumulative_atomic = models.DecimalField(max_digits=78, decimal_places=0)
    network = models.CharField(max_length=32)
    # The deposit transaction, for the call that opened or topped up the channel ("" otherwise).
    deposit_tx_hash = models.CharField(max_length=66, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # When the call's content was delivered: with the sale for a product without effects; for a
    # product with effects (it runs once the voucher is committed) when it ran. Null: paid and
    # not delivered (the product failed): the same voucher collects it (billing/rails/channel.py).
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["channel_id", "cumulative_atomic"], name="channel_voucher_used_once")
        ]

    def __str__(self) -> str:
        return f"{self.channel_id[:10]} {self.sku_id} {self.amount_atomic}"
