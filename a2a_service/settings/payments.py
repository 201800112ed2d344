"""Settings of payments (imported by base): the deposit watcher and prepaid credits, the chain,
token, treasury and facilitator of x402, the reconciler, product availability, bounties,
transactions from a prompt and whale tiers."""

from __future__ import annotations

from .environment import env

# --- the deposit watcher (prepaid credits) --------------------------------------------
DEPOSIT_POLL_SECONDS = env.float("DEPOSIT_POLL_SECONDS", default=3.0)
DEPOSIT_CONFIRMATIONS = env.int("DEPOSIT_CONFIRMATIONS", default=2)
DEPOSIT_BLOCK_RANGE = env.int("DEPOSIT_BLOCK_RANGE", default=500)
DEPOSIT_MAX_RANGES_PER_SCAN = env.int("DEPOSIT_MAX_RANGES_PER_SCAN", default=20)
DEPOSIT_LOCK_SECONDS = env.int("DEPOSIT_LOCK_SECONDS", default=120)
DEPOSIT_START_BLOCK = env.int("DEPOSIT_START_BLOCK", default=None)
# Deposits are credited up to the block the chain itself calls final enough under this tag
# ("safe" or "finalized"), and never above head - DEPOSIT_CONFIRMATIONS; "" (or a chain
# without the tag) uses the confirmations alone.
DEPOSIT_FINALITY_TAG = env("DEPOSIT_FINALITY_TAG", default="safe")
# A chain at CHAIN_RPC_URL other than the one read before (another block 0) is expected where the
# stack starts a fresh chain each time (`make run` sets it for its own anvil): logged at INFO
# there, at ERROR elsewhere (billing/deposits.py).
CHAIN_RESTARTS_EXPECTED = env.bool("CHAIN_RESTARTS_EXPECTED", default=False)
# How many recently read blocks the watcher remembers (number, hash) to find where a
# reorganised chain forked from what it read.
DEPOSIT_CHECKPOINTS = env.int("DEPOSIT_CHECKPOINTS", default=256)
# Ownership challenges (messages to sign) issued per window: per wallet *from one requester*
# (the caller's address; an IPv6 /64 is one), and per requester over all wallets; beyond
# either, 429. Nobody's requests use up another requester's room (billing/credits.py).
OWNERSHIP_CHALLENGES_PER_WALLET = env.int("OWNERSHIP_CHALLENGES_PER_WALLET", default=5)
OWNERSHIP_CHALLENGES_PER_REQUESTER = env.int("OWNERSHIP_CHALLENGES_PER_REQUESTER", default=20)
OWNERSHIP_CHALLENGE_WINDOW_SECONDS = env.int("OWNERSHIP_CHALLENGE_WINDOW_SECONDS", default=600)
# Expired challenges are deleted this many days after they expired (the feeds' pruning pass).
OWNERSHIP_CHALLENGE_RETENTION_DAYS = env.int("OWNERSHIP_CHALLENGE_RETENTION_DAYS", default=2)
# Named x402 payments (payment-identifier) are answered again for this many days after their
# first call; then the row is pruned (a retry is then refused by the proof's own single use).
PAYMENT_IDENTIFIER_RETENTION_DAYS = env.int("PAYMENT_IDENTIFIER_RETENTION_DAYS", default=7)
# A credit call's debit (with its ledger row) commits without waiting for PostgreSQL to
# flush it to disk (synchronous_commit=off for that transaction only). A database crash can
# then forget the debits of its last fraction of a second (at most 3x wal_writer_delay):
# those calls are free, balances still equal their ledger sums, nobody is charged twice.
# Deposits, refunds, adjustments, x402 claims and sessions always commit synchronously.
# true: every debit waits for the flush (measured in `make bench`).
CREDIT_DEBIT_SYNC_COMMIT = env.bool("CREDIT_DEBIT_SYNC_COMMIT", default=False)

# --- The shop: chain, token, treasury, facilitator --------------------------------
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", default="").rstrip("/")
CHAIN_NAME = env("CHAIN_NAME", default="base")
CHAIN_ID = env.int("CHAIN_ID", default=8453)
X402_NETWORK = env("X402_NETWORK", default="eip155:8453")
X402_NETWORK_V1_NAME = env("X402_NETWORK_V1_NAME", default="base")
# Base mainnet USDC; the local chain deploys its stand-in at the same address.
USDC_ADDRESS = env("USDC_ADDRESS", default="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
USDC_EIP712_NAME = env("USDC_EIP712_NAME", default="USD Coin")
USDC_EIP712_VERSION = env("USDC_EIP712_VERSION", default="2")
TREASURY_ADDRESS = env("TREASURY_ADDRESS", default="")
CHAIN_RPC_URL = env("CHAIN_RPC_URL", default="http://127.0.0.1:8545")
# Empty (the default): paid calls use the self-hosted facilitator in this process (it needs
# FACILITATOR_PRIVATE_KEY). Set: the facilitator at this URL (a third party, or this service's
# facilitator run as a separate process). Never this service's own public URL: a paid call
# would wait for a free worker of the server it runs in (production refuses it).
FACILITATOR_URL = env("FACILITATOR_URL", default="").rstrip("/")
FACILITATOR_TIMEOUT_SECONDS = env.float("FACILITATOR_TIMEOUT_SECONDS", default=20.0)
# The self-hosted facilitator (mounted at /api/a2a/facilitator/) settles with this gas key;
# empty: this deployment hosts no facilitator and FACILITATOR_URL points elsewhere.
FACILITATOR_PRIVATE_KEY = env("FACILITATOR_PRIVATE_KEY", default="")
FACILITATOR_SETTLE_TIMEOUT_SECONDS = env.float("FACILITATOR_SETTLE_TIMEOUT_SECONDS", default=15.0)
# Every process settling with the gas key allocates its nonces under one lock (in Redis, or a file
# in RUN_DIR without Redis): how long a settlement waits for it before answering 503 (nothing sent).
FACILITATOR_NONCE_LOCK_WAIT_SECONDS = env.float("FACILITATOR_NONCE_LOCK_WAIT_SECONDS", default=10.0)
# An `exact` settle within this many seconds of the same process's verify of the same payment
# takes that verification (its simulated transfer included) instead of verifying and simulating
# again (billing/facilitator/exact_once.py). 0: every settle verifies and simulates again.
FACILITATOR_VERIFY_REUSE_SECONDS = env.float("FACILITATOR_VERIFY_REUSE_SECONDS", default=2.0)
# The self-hosted facilitator's HTTP /settle spends its gas key, so it answers only callers that
# send `Authorization: Bearer <this>` (the service's own paid calls when FACILITATOR_URL points at
# a separately run facilitator). Empty: /settle over HTTP is refused; in-process settlement is
# unaffected. /verify and /supported stay public.
FACILITATOR_SHARED_SECRET = env("FACILITATOR_SHARED_SECRET", default="")
# The reconciler (beat) decides payments whose settlement was not confirmed in time, and claims
# left by a process that died before settling, from the token's AuthorizationUsed events.
PAYMENT_RECONCILE_SECONDS = env.float("PAYMENT_RECONCILE_SECONDS", default=10.0)
PAYMENT_CLAIM_STALE_SECONDS = env.int("PAYMENT_CLAIM_STALE_SECONDS", default=300)
PAYMENT_RECONCILE_LOOKBACK_BLOCKS = env.int("PAYMENT_RECONCILE_LOOKBACK_BLOCKS", default=5000)
X402_MAX_TIMEOUT_SECONDS = env.int("X402_MAX_TIMEOUT_SECONDS", default=120)
# A product with nothing to deliver now (its spec's `available` check says no) is answered 503
# with this Retry-After on every paid surface, unpaid calls included: no payment is asked for
# nothing. A stored 402 challenge of a product with such a check lives at most
# PRODUCT_AVAILABILITY_RECHECK_SECONDS (its data may go stale by time alone); a change of
# availability seen at a feed or analytics pass, a brief or a prune drops them at once.
PRODUCT_UNAVAILABLE_RETRY_SECONDS = env.int("PRODUCT_UNAVAILABLE_RETRY_SECONDS", default=60)
PRODUCT_AVAILABILITY_RECHECK_SECONDS = env.int("PRODUCT_AVAILABILITY_RECHECK_SECONDS", default=10)
# The agent-payment network rail exists but is disabled (interface: payment_alternatives).
SKYFIRE_RAIL_ENABLED = env.bool("SKYFIRE_RAIL_ENABLED", default=False)

# --- Bounties (billing/bounties) ------------------------------------------------------------
# The automatic check of a spread-snapshot submission: a reading older than this (or of a
# bounty whose criteria name no max_age_seconds) is stale; it must be within this many bps of
# our own reading of the same venue pair (criteria tolerance_bps overrides).
BOUNTY_SNAPSHOT_MAX_AGE_SECONDS = env.int("BOUNTY_SNAPSHOT_MAX_AGE_SECONDS", default=300)
BOUNTY_SPREAD_TOLERANCE_BPS = env.float("BOUNTY_SPREAD_TOLERANCE_BPS", default=10.0)

# --- Transactions from a prompt (billing/txgen) ---------------------------------------------
# Wrapped ether on the chain (Base's WETH predeploy); wrap/unwrap prompts call it.
WETH_ADDRESS = env("WETH_ADDRESS", default="0x4200000000000000000000000000000000000006")
# Gas estimation (eth_estimateGas on CHAIN_RPC_URL) times out after this many seconds.
TXGEN_RPC_TIMEOUT_SECONDS = env.float("TXGEN_RPC_TIMEOUT_SECONDS", default=10.0)
# The affiliate tag recorded on a call whose account has no referral of its own (empty: none).
TXGEN_DEFAULT_AFFILIATE_TAG = env("TXGEN_DEFAULT_AFFILIATE_TAG", default="")
# Optional language-model fallback for prompts the patterns do not understand (off when empty):
# an OpenAI-compatible chat-completions URL, its model and key. Its reading is parsed by the
# same patterns and must copy the prompt's own amount and addresses.
TXGEN_LLM_URL = env("TXGEN_LLM_URL", default="")
TXGEN_LLM_MODEL = env("TXGEN_LLM_MODEL", default="")
TXGEN_LLM_API_KEY = env("TXGEN_LLM_API_KEY", default="")
# The whole exchange with the model (connect, answer) must end within TXGEN_LLM_TIMEOUT_SECONDS,
# and its answer be at most TXGEN_LLM_MAX_BODY_BYTES; otherwise the prompt is refused as without it.
TXGEN_LLM_TIMEOUT_SECONDS = env.float("TXGEN_LLM_TIMEOUT_SECONDS", default=15.0)
TXGEN_LLM_MAX_BODY_BYTES = env.int("TXGEN_LLM_MAX_BODY_BYTES", default=65_536)

# --- whale tiers (billing/tiers.py, billing/whale.py) -------------------------------------------
# A whale token (POST /api/a2a/account/whale/token) lives this long unless the body asks for
# another ttl_seconds, between WHALE_TOKEN_MIN_TTL_SECONDS and WHALE_TOKEN_MAX_TTL_SECONDS.
WHALE_TOKEN_DEFAULT_TTL_SECONDS = env.int("WHALE_TOKEN_DEFAULT_TTL_SECONDS", default=86_400)
WHALE_TOKEN_MIN_TTL_SECONDS = env.int("WHALE_TOKEN_MIN_TTL_SECONDS", default=60)
WHALE_TOKEN_MAX_TTL_SECONDS = env.int("WHALE_TOKEN_MAX_TTL_SECONDS", default=30 * 86_400)
# Unexpired, unrevoked tokens an account may hold at once (409 whale_token_limit beyond).
WHALE_TOKENS_MAX_ACTIVE = env.int("WHALE_TOKENS_MAX_ACTIVE", default=50)
# The rate limiter remembers, per process, a key's account, an account's tier and a token's
# revocation for this many seconds (0: read them at every request): a tier gained or lost, or a
# token revoked in the admin, reaches the rate limit within this delay.
WHALE_RATE_CACHE_SECONDS = env.float("WHALE_RATE_CACHE_SECONDS", default=5.0)

# --- Payment channels: x402 `batch-settlement` (billing/x402/channels.py, billing/rails/channel.py) ---
# Offered next to `exact` in every version 2 402 while on and RECEIVER_AUTHORIZER_PRIVATE_KEY is
# set. Production refuses to start with it on and no key.
X402_CHANNELS_ENABLED = env.bool("X402_CHANNELS_ENABLED", default=False)
# The key that signs claim batches and cooperative refunds: held by the self-hosted facilitator
# (advertised as `receiverAuthorizer` in /supported, offered in every channel 402). Not the
# treasury key, not the gas key.
RECEIVER_AUTHORIZER_PRIVATE_KEY = env("RECEIVER_AUTHORIZER_PRIVATE_KEY", default="")
# `extra.withdrawDelay` offered (seconds; the contract allows 900 s to 30 days): how long a
# payer's timed withdrawal waits, so the claim tasks below must run well within it.
X402_CHANNEL_WITHDRAW_DELAY = env.int("X402_CHANNEL_WITHDRAW_DELAY", default=900)
# Beat: claim vouchers (one transaction per batch of channels), settle what was claimed to the
# treasury, and (when X402_CHANNEL_IDLE_REFUND) close idle channels cooperatively.
X402_CHANNEL_CLAIM_INTERVAL = env.float("X402_CHANNEL_CLAIM_INTERVAL", default=60.0)
X402_CHANNEL_SETTLE_INTERVAL = env.float("X402_CHANNEL_SETTLE_INTERVAL", default=120.0)
X402_CHANNEL_REFUND_INTERVAL = env.float("X402_CHANNEL_REFUND_INTERVAL", default=180.0)
X402_CHANNEL_IDLE_REFUND = env.bool("X402_CHANNEL_IDLE_REFUND", default=False)
# A channel without a paid call for this long is idle (refunded when X402_CHANNEL_IDLE_REFUND).
X402_CHANNEL_IDLE_SECONDS = env.int("X402_CHANNEL_IDLE_SECONDS", default=3600)
X402_CHANNEL_MAX_CLAIMS_PER_BATCH = env.int("X402_CHANNEL_MAX_CLAIMS_PER_BATCH", default=100)
# `extra.minDeposit` (atomic USDC, or money like "$1"); empty: 10 x the call's price (the SDK's).
X402_CHANNEL_MIN_DEPOSIT = env("X402_CHANNEL_MIN_DEPOSIT", default="")
# How fresh the stored on-chain state must be to verify a voucher without the facilitator
# (ms); 0: the SDK's withdrawDelay/3, clamped to 30 s - 5 min.
X402_CHANNEL_STATE_TTL_MS = env.int("X402_CHANNEL_STATE_TTL_MS", default=0)
# Beat: the withdrawal watcher reads `pendingWithdrawals` of every open channel this often
# and claims at once the channels whose payer started a timed withdrawal.
X402_CHANNEL_WITHDRAWAL_WATCH_INTERVAL = env.float("X402_CHANNEL_WITHDRAWAL_WATCH_INTERVAL", default=30.0)
