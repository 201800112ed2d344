"""Settings shared by every environment. Everything that differs between machines
comes from the environment (12-factor); see README "Configuration"."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import environ
from celery.schedules import crontab

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()
# A local .env is a convenience for development only; production passes real env vars.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Where the embedded local stack keeps its files (SQLite, broker folders, beat schedule).
RUN_DIR = Path(env("A2A_RUN_DIR", default=str(BASE_DIR / ".run")))

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "catalog",
    "billing",
    "sessions_app",
    "webhooks",
    "agents",
    # Feed schedules live in the database, editable in the admin (catalog/feeds/schedule.py).
    "django_celery_beat",
]

MIDDLEWARE = [
    # First: the request id (X-Request-ID) and the request's timing (a2a_service/core/requestlog.py).
    "a2a_service.core.requestlog.RequestObserveMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Refuses NUL and lone surrogates in path segments, query and API headers (422/404).
    "a2a_service.core.inputs.InputGuardMiddleware",
]

# The API distinguishes /api/a2a/agenthub from /api/a2a/agenthub/ (both are documented
# operations), so Django must not redirect one to the other.
APPEND_SLASH = False

ROOT_URLCONF = "a2a_service.urls"
WSGI_APPLICATION = "a2a_service.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{RUN_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # env.db() already puts CONN_MAX_AGE=0 in the dict, so assign (not setdefault): one
    # connection per web thread, reused across requests, health-checked before use.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    # SQLite: wait on a locked database instead of failing, WAL for concurrent readers.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "a2a",
            "TIMEOUT": 300,
        }
    }
else:
    # A file cache is shared by every local process (web, worker, beat), unlike locmem.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(RUN_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / ".run" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- CORS: agents in browsers must be able to read the payment headers --------------
CORS_ALLOW_ALL_ORIGINS = True
CORS_URLS_REGEX = r"^/(api|\.well-known)/.*$"
CORS_ALLOW_HEADERS = [
    "accept",
    "content-type",
    "x-api-key",
    "x-whale-token",
    "x-session-token",
    "x-ingest-token",
    "idempotency-key",
    "payment-signature",
    "x-payment",
    "x-request-id",
]
CORS_EXPOSE_HEADERS = [
    "payment-required",
    "payment-response",
    "x-payment-response",
    "x-credit-charged",
    "x-credit-balance",
    "retry-after",
    "x-request-id",
]

# --- DRF ------------------------------------------------------------------------
# Request limits (a2a_service/core/parsers.py). Bodies: at most this many bytes (a larger one
# answers 413 body_too_large, in JSON-RPC form on the JSON-RPC routes; the largest real body, a
# 500-reading spread snapshot, is ~100 KB).
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=1_048_576)
# Django's own cap for bodies it reads (forms, the admin), the same number.
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# JSON nested deeper than this (arrays and objects) answers 422 json_too_deep before decoding;
# also applies to the JSON inside x402 payment headers. No body of the interface goes past 4.
API_JSON_MAX_DEPTH = env.int("API_JSON_MAX_DEPTH", default=64)
# A PAYMENT-SIGNATURE / X-PAYMENT header longer than this is refused (402 invalid_payload)
# without decoding; a real x402 payload is 1-3 KB of base64.
PAYMENT_HEADER_MAX_BYTES = env.int("PAYMENT_HEADER_MAX_BYTES", default=16_384)
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["a2a_service.core.parsers.BoundedJSONParser"],
    "EXCEPTION_HANDLER": "a2a_service.core.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["a2a_service.core.throttling.ClientRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": env("THROTTLE_ANON", default="600/min")},
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Agent-to-Agent Market Intelligence Service",
    "DESCRIPTION": (
        "Market intelligence for automated agents: news, trading signals, sentiment, prediction-market "
        "catalogs, trading and risk desks, and digests. Discovery and teasers are free; full content is "
        "paid in USDC on Base (eip155:8453) by x402 per call, prepaid credits (X-API-Key) or prepaid "
        "sessions. Errors: 422 HTTPValidationError for broken parameters or bodies, 401 for a missing "
        "or unknown API key, 402 with payment instructions, 404 for unknown ids, 429 with Retry-After."
    ),
    "VERSION": "16.5.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": True,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/(a2a|mcp)",
    "SCHEMA_COERCE_PATH_PK_SUFFIX": False,
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "POSTPROCESSING_HOOKS": [
        "a2a_service.core.openapi.postprocess_schema",
    ],
    "TAGS": [
        {"name": "discovery", "description": "Free discovery, manifests and status"},
        {"name": "teasers", "description": "Free teasers of paid products"},
        {"name": "market-data", "description": "Catalogs and market intelligence"},
        {"name": "telemetry", "description": "Network research telemetry"},
        {"name": "accounts", "description": "Credit accounts, API keys, webhooks, delegation"},
        {"name": "sessions", "description": "Prepaid sessions"},
        {"name": "marketplace", "description": "Marketplace and agent-network proxy"},
        {"name": "agents", "description": "Catalog agents"},
        {"name": "x402", "description": "Paid endpoints (HTTP 402 until paid)"},
        {"name": "mcp", "description": "MCP tool endpoints"},
    ],
}

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
# A credit call's debit (with its ledger row) commits without waiting for PostgreSQL to
# flush it to disk (synchronous_commit=off for that transaction only). A database crash can
# then forget the debits of its last fraction of a second (at most 3x wal_writer_delay):
# those calls are free, balances still equal their ledger sums, nobody is charged twice.
# Deposits, refunds, adjustments, x402 claims and sessions always commit synchronously.
# true: every debit waits for the flush (measured in `make bench`).
CREDIT_DEBIT_SYNC_COMMIT = env.bool("CREDIT_DEBIT_SYNC_COMMIT", default=False)

# --- Celery -----------------------------------------------------------------------
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {"visibility_timeout": 3600}
    # kombu's Redis transport with the fault that stopped a worker on a Redis restart fixed
    # (a2a_service/core/broker.py).
    CELERY_BROKER_TRANSPORT = "a2a_service.core.broker:Transport"
else:
    # kombu's filesystem transport: a broker that needs no server, for `make run`.
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(RUN_DIR / "broker" / "queue"),
        "data_folder_out": str(RUN_DIR / "broker" / "queue"),
        "processed_folder": str(RUN_DIR / "broker" / "processed"),
        # Without it kombu writes its exchange tables to ./control, inside the repository.
        "control_folder": str(RUN_DIR / "broker" / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{RUN_DIR / 'results'}"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker keeps reconnecting to a broker that is down, however long (Celery's default gives up
# after 100 attempts, about 50 minutes, and the worker exits); at start too.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_EXPIRES = timedelta(hours=1)
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(RUN_DIR / "celerybeat-schedule")
WORKER_HEARTBEAT_SECONDS = env.int("WORKER_HEARTBEAT_SECONDS", default=15)
# How often beat's sweeper queues the webhook deliveries that are due (a lost queue message, a
# claim whose worker died).
WEBHOOK_SWEEP_SECONDS = env.float("WEBHOOK_SWEEP_SECONDS", default=10.0)
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {
        "task": "catalog.tasks.worker_heartbeat",
        "schedule": float(WORKER_HEARTBEAT_SECONDS),
    },
    "flush-counters": {"task": "catalog.tasks.flush_counters", "schedule": 30.0},
    "scan-deposits": {"task": "billing.tasks.scan_deposits", "schedule": DEPOSIT_POLL_SECONDS},
    "sweep-webhook-deliveries": {"task": "webhooks.tasks.sweep_deliveries", "schedule": WEBHOOK_SWEEP_SECONDS},
}

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
CELERY_BEAT_SCHEDULE["reconcile-payments"] = {
    "task": "billing.tasks.reconcile_payments",
    "schedule": PAYMENT_RECONCILE_SECONDS,
}
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
AGENTVERSE_NEWS_AGENT = env("AGENTVERSE_NEWS_AGENT", default="")
INGEST_TOKEN = env("INGEST_TOKEN", default="")
# ERC-8004 (agents/erc8004/): the identity registry `manage.py erc8004_register` registers the
# service's agent in. Empty address on a local anvil chain: the command deploys the project's
# own registry (billing/chain/contracts/AgentIdentityRegistry.sol) there first.
ERC8004_REGISTRY_ADDRESS = env("ERC8004_REGISTRY_ADDRESS", default="")
ERC8004_REGISTRY_CHAIN_ID = env.int("ERC8004_REGISTRY_CHAIN_ID", default=CHAIN_ID)
ERC8004_REGISTRY_RPC_URL = env("ERC8004_REGISTRY_RPC_URL", default=CHAIN_RPC_URL)
# The key that sends register()/setAgentURI() and owns the agent token (needs gas). Empty on
# anvil: its development account #0.
ERC8004_SIGNER_PRIVATE_KEY = env("ERC8004_SIGNER_PRIVATE_KEY", default="")
ERC8004_IMAGE_URL = env("ERC8004_IMAGE_URL", default="")
# Agent status (agents/discovery/status.py), measured from the agents' recorded answers
# (AgentInteraction) in the last AGENT_STATUS_WINDOW_MINUTES: no answer -> idle; an error rate
# (5xx / answers) at or above AGENT_STATUS_DEGRADED_ERROR_RATE or a median latency at or above
# AGENT_STATUS_DEGRADED_LATENCY_MS -> degraded; otherwise online; disabled in the admin -> disabled.
AGENT_STATUS_WINDOW_MINUTES = env.int("AGENT_STATUS_WINDOW_MINUTES", default=60)
AGENT_STATUS_DEGRADED_ERROR_RATE = env.float("AGENT_STATUS_DEGRADED_ERROR_RATE", default=0.2)
AGENT_STATUS_DEGRADED_LATENCY_MS = env.int("AGENT_STATUS_DEGRADED_LATENCY_MS", default=5000)
OUTBOUND_HTTP_TIMEOUT_SECONDS = env.float("OUTBOUND_HTTP_TIMEOUT_SECONDS", default=5.0)
# The catalog agents' chat may have an OpenAI-compatible model reword its replies (agents/chat/llm.py):
# off while CHAT_LLM_URL is empty; any failure keeps the deterministic reply.
CHAT_LLM_URL = env("CHAT_LLM_URL", default="")
CHAT_LLM_API_KEY = env("CHAT_LLM_API_KEY", default="")
CHAT_LLM_MODEL = env("CHAT_LLM_MODEL", default="")
CHAT_LLM_TIMEOUT_SECONDS = env.float("CHAT_LLM_TIMEOUT_SECONDS", default=5.0)

# --- webhooks -----------------------------------------------------------------------------
WEBHOOKS_REQUIRE_HTTPS = env.bool("WEBHOOKS_REQUIRE_HTTPS", default=not DEBUG)
# Webhook targets must resolve to public addresses (checked again at every connection, and
# the connection goes to the checked address); true only for local receivers.
WEBHOOKS_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOKS_ALLOW_PRIVATE_TARGETS", default=False)
# Other outbound calls (a2a_service/core/http.py) to private addresses; the host of FACILITATOR_URL is
# always allowed (operator configuration, often a self-hosted facilitator on loopback).
OUTBOUND_ALLOW_PRIVATE_TARGETS = env.bool("OUTBOUND_ALLOW_PRIVATE_TARGETS", default=False)

# Feeds (catalog/feeds/): how a pass fetches. FEEDS_MODE: live (production), replay (the local
# replay server's recorded samples) or auto (live, and replay for a source it cannot reach).
FEEDS_MODE = env.str("FEEDS_MODE", default="live")
FEEDS_REPLAY_URL = env.str("FEEDS_REPLAY_URL", default="http://127.0.0.1:8765")
FEEDS_USER_AGENT = env.str("FEEDS_USER_AGENT", default="a2a-market-intel/1.0 (+feeds)")
FEEDS_HTTP_TIMEOUT_SECONDS = env.float("FEEDS_HTTP_TIMEOUT_SECONDS", default=10.0)
FEEDS_HTTP_DEADLINE_SECONDS = env.float("FEEDS_HTTP_DEADLINE_SECONDS", default=30.0)
FEEDS_MAX_BODY_BYTES = env.int("FEEDS_MAX_BODY_BYTES", default=8 * 1024 * 1024)
# --- feed runner, schedule and retention (catalog/feeds/runner.py, retention.py) -------------
# A pass whose lock (FeedState.running_since) is older than this belongs to a dead process.
FEEDS_LOCK_STALE_SECONDS = env.int("FEEDS_LOCK_STALE_SECONDS", default=900)
# A failing source waits base * 2^(failures-1) seconds before its next scheduled pass, at most max.
FEEDS_BACKOFF_BASE_SECONDS = env.int("FEEDS_BACKOFF_BASE_SECONDS", default=60)
FEEDS_BACKOFF_MAX_SECONDS = env.int("FEEDS_BACKOFF_MAX_SECONDS", default=3600)
# Pruning of high-volume feed tables (news is sold and never pruned).
FEEDS_PRUNE_SECONDS = env.float("FEEDS_PRUNE_SECONDS", default=3600.0)
FEEDS_RETENTION_PROBES_DAYS = env.int("FEEDS_RETENTION_PROBES_DAYS", default=14)
FEEDS_RETENTION_SPREADS_DAYS = env.int("FEEDS_RETENTION_SPREADS_DAYS", default=30)
# A prediction market's yes-price history (one row per pass where the price moved).
FEEDS_RETENTION_PREDICTION_PRICES_DAYS = env.int("FEEDS_RETENTION_PREDICTION_PRICES_DAYS", default=90)
CELERY_BEAT_SCHEDULE["feeds-prune"] = {"task": "feeds.prune", "schedule": FEEDS_PRUNE_SECONDS}
# News (catalog/feeds/news/): comma-separated `category|url[|source name]` (category crypto,
# equity or general; the name recorded as the items' source, default the URL's host).
NEWS_FEEDS = env.str(
    "NEWS_FEEDS",
    default=",".join(
        [
            "crypto|https://www.coindesk.com/arc/outboundfeeds/rss/|CoinDesk",
            "crypto|https://cointelegraph.com/rss|Cointelegraph",
            "equity|https://feeds.content.dowjones.io/public/rss/mw_topstories|MarketWatch",
            "general|https://www.sec.gov/news/pressreleases.rss|SEC",
            "general|https://www.federalreserve.gov/feeds/press_all.xml|Federal Reserve",
        ]
    ),
)
# Unlock price of a new item by category, in USDC (staff may override an item in the admin).
NEWS_PRICE_EQUITY_USDC = env.str("NEWS_PRICE_EQUITY_USDC", default="0.18")
NEWS_PRICE_GENERAL_USDC = env.str("NEWS_PRICE_GENERAL_USDC", default="0.18")
NEWS_PRICE_CRYPTO_USDC = env.str("NEWS_PRICE_CRYPTO_USDC", default="0.1")
NEWS_TEASER_CHARS = env.int("NEWS_TEASER_CHARS", default=280)
NEWS_MAX_ITEMS_PER_FEED = env.int("NEWS_MAX_ITEMS_PER_FEED", default=100)
# Sentiment of the news (catalog/analytics/sentiment.py) and the products built on it
# (sentiment, equity_intel, equity_scalp). An item's weight halves every half-life.
SENTIMENT_HALF_LIFE_HOURS = env.float("SENTIMENT_HALF_LIFE_HOURS", default=12.0)
# Nothing newer than this about the assets asked for: 503, nothing charged (news flows around
# the clock; a day without any is a dead feed, not a quiet market).
SENTIMENT_MAX_AGE_HOURS = env.float("SENTIMENT_MAX_AGE_HOURS", default=24.0)
SENTIMENT_DRIVERS = env.int("SENTIMENT_DRIVERS", default=5)
# Equity news is thinner over a weekend than crypto news: a longer freshness limit.
EQUITY_NEWS_MAX_AGE_HOURS = env.float("EQUITY_NEWS_MAX_AGE_HOURS", default=72.0)
EQUITY_INTEL_HEADLINES = env.int("EQUITY_INTEL_HEADLINES", default=10)
# A catalyst (an earnings, guidance, M&A, rating, legal, product or macro headline) is fresh,
# and may make a scalp setup, for this long after its publication.
EQUITY_CATALYST_FRESH_HOURS = env.float("EQUITY_CATALYST_FRESH_HOURS", default=24.0)
# A quote older than this gives no price context to trade on (the last close stays the
# reference over a long weekend).
EQUITY_QUOTE_MAX_AGE_HOURS = env.float("EQUITY_QUOTE_MAX_AGE_HOURS", default=96.0)
# equity_scalp: stop and target at these fractions of the day's range from the entry.
EQUITY_SCALP_STOP_RANGE = env.float("EQUITY_SCALP_STOP_RANGE", default=0.5)
EQUITY_SCALP_TARGET_RANGE = env.float("EQUITY_SCALP_TARGET_RANGE", default=1.0)
EQUITY_SCALP_HORIZON_MINUTES = env.int("EQUITY_SCALP_HORIZON_MINUTES", default=240)

# Exchange feed (catalog/feeds/exchanges/, ccxt public endpoints, no keys). EXCHANGES: ccxt ids;
# MARKET_SYMBOLS: bases (quoted in USDT, else USD/USDC) or full ccxt symbols "BASE/QUOTE";
# EXCHANGE_API_BASES ("id=url,..."): replaces the scheme and host of every REST URL of that
# exchange (the path is kept), so a local server can stand in for the venue.
EXCHANGES = env.list("EXCHANGES", default=["binance", "okx", "bybit", "kraken", "coinbase"])
MARKET_SYMBOLS = env.list(
    "MARKET_SYMBOLS",
    default=[
        "BTC",
        "ETH",
        "SOL",
        "XRP",
        "BNB",
        "DOGE",
        "ADA",
        "AVAX",
        "LINK",
        "DOT",
        "LTC",
        "TRX",
        "TON",
        "SUI",
        "NEAR",
    ],
)
EXCHANGE_API_BASES = env.str("EXCHANGE_API_BASES", default="")
EXCHANGE_CANDLE_LIMITS = env.dict("EXCHANGE_CANDLE_LIMITS", default={"1m": "300", "1h": "300"})
# Order-book levels fetched per side for each spot market (0: no depth). Venues accept only
# some values (binance 5/10/20/50/100/...; okx up to 400; bybit spot up to 200).
EXCHANGE_BOOK_DEPTH = env.int("EXCHANGE_BOOK_DEPTH", default=20)
# Trading fees as fractions ("binance=0.001,okx=0.0008"): override a venue's public base-tier
# rate from ccxt's static exchange description (catalog/analytics/execution.py).
# (A malformed rate fails at start-up rather than pricing with a wrong fee.)
EXCHANGE_TAKER_FEES = {k.strip(): float(v) for k, v in env.dict("EXCHANGE_TAKER_FEES", default={}).items()}
EXCHANGE_MAKER_FEES = {k.strip(): float(v) for k, v in env.dict("EXCHANGE_MAKER_FEES", default={}).items()}
# Tokenized assets priced from the exchanges' tickers: "SYMBOL|name|underlying,...".
TOKENIZED_WATCHLIST = env.list("TOKENIZED_WATCHLIST", default=["PAXG|PAX Gold|XAU", "XAUT|Tether Gold|XAU"])
# Calendar feed (catalog/feeds/calendar/): ICS calendars, comma-separated `name|url[|country]`
# (the name is the events' calendar and the replay sample's file name). Defaults: the release
# calendars the US statistical agencies publish as iCalendar: BLS (employment situation, CPI,
# PPI, JOLTS) and BEA (GDP, personal income and outlays/PCE, trade). Central banks (FOMC, ECB)
# publish their meeting dates as web pages, not ICS: staff add those in the admin (manual
# events) or list an ICS URL here. Events are kept from CALENDAR_PAST_DAYS before the pass to
# CALENDAR_HORIZON_DAYS after it.
CALENDAR_ICS_URLS = env.str(
    "CALENDAR_ICS_URLS",
    default=",".join(
        [
            "bls|https://www.bls.gov/schedule/news_release/bls.ics|US",
            "bea|https://www.bea.gov/news/schedule/ics/online-calendar-subscription.ics|US",
        ]
    ),
)
CALENDAR_PAST_DAYS = env.int("CALENDAR_PAST_DAYS", default=7)
CALENDAR_HORIZON_DAYS = env.int("CALENDAR_HORIZON_DAYS", default=60)
# Equities feed (catalog/feeds/equities/): Stooq's keyless CSV quotes. EQUITY_SYMBOLS: tickers
# (US listings; "SAP.DE" for another Stooq market); the tokenized watchlist's underlyings are
# added. EQUITY_QUOTES_TZ: the zone of Stooq's date/time columns (its site's clock, Poland).
EQUITY_QUOTES_URL = env.str("EQUITY_QUOTES_URL", default="https://stooq.com/q/l/")
EQUITY_SYMBOLS = env.list(
    "EQUITY_SYMBOLS",
    default=["SPY", "QQQ", "AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOGL", "META", "COIN", "MSTR"],
)
EQUITY_QUOTES_TZ = env.str("EQUITY_QUOTES_TZ", default="Europe/Warsaw")
# The tokenized premium products flag an underlying quote older than this (while its market is
# open; while it is closed, older than this before the last close).
TOKENIZED_UNDERLYING_MAX_AGE_MINUTES = env.int("TOKENIZED_UNDERLYING_MAX_AGE_MINUTES", default=30)
# Retention of candles and funding readings (the feeds' pruning schedule reads it).
EXCHANGE_RETENTION_DAYS = env.int("EXCHANGE_RETENTION_DAYS", default=14)
# Per connect and per read of a delivery: a receiver that drips bytes resets it each time...
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=5.0)
# ...so a whole attempt (resolve, connect, send, headers, body) is also cut at this deadline.
# A claim's lease is 2 x this + 5 s: an attempt ends (and records itself) before anyone may
# claim its delivery again.
WEBHOOK_ATTEMPT_DEADLINE_SECONDS = env.float("WEBHOOK_ATTEMPT_DEADLINE_SECONDS", default=10.0)
WEBHOOK_RETRY_SCALE = env.float("WEBHOOK_RETRY_SCALE", default=1.0)
# Deliveries run on workers of their own (`celery worker --queues webhooks`; `make run` starts
# one), so slow receivers never hold the workers that credit deposits.
WEBHOOK_DELIVERY_QUEUE = env("WEBHOOK_DELIVERY_QUEUE", default="webhooks")
# The Celery queues whose depth /internal/metrics reports (a2a_celery_queue_depth).
METRICS_CELERY_QUEUES = env.list("METRICS_CELERY_QUEUES", default=["celery", WEBHOOK_DELIVERY_QUEUE])
# At most this many attempts to one subscription at a time; a delivery over the cap waits
# (deferred by WEBHOOK_DEFER_SECONDS, not lost), so one slow receiver cannot take every worker.
WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION = env.int("WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION", default=2)
WEBHOOK_DEFER_SECONDS = env.float("WEBHOOK_DEFER_SECONDS", default=5.0)
# Free test events: at most this many per subscription per WEBHOOK_TEST_EVENTS_WINDOW_SECONDS...
WEBHOOK_TEST_EVENTS_PER_WINDOW = env.int("WEBHOOK_TEST_EVENTS_PER_WINDOW", default=5)
# ...and this many per account (all its subscriptions together) in the same window.
WEBHOOK_TEST_EVENTS_PER_ACCOUNT = env.int("WEBHOOK_TEST_EVENTS_PER_ACCOUNT", default=10)
# Active webhook subscriptions per account (delegations' and pools' own included; those of an
# expired delegation not): each can hold deliveries in flight. Beyond it, 409.
WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT = env.int("WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT", default=10)
WEBHOOK_TEST_EVENTS_WINDOW_SECONDS = env.int("WEBHOOK_TEST_EVENTS_WINDOW_SECONDS", default=600)
# Signs regime_attestation events (EIP-191); its address is published in the manifests.
ATTESTATION_PRIVATE_KEY = env("ATTESTATION_PRIVATE_KEY", default="")
SIGNAL_DESK_PACK_DAYS = env.int("SIGNAL_DESK_PACK_DAYS", default=30)
# How long a prediction alert subscription pack turns prediction_alert push on.
PREDICTION_ALERT_PACK_DAYS = env.int("PREDICTION_ALERT_PACK_DAYS", default=30)
# How long buying the pro morning brief turns morning_brief push on for the buyer's webhooks.
MORNING_BRIEF_PRO_DAYS = env.int("MORNING_BRIEF_PRO_DAYS", default=30)
# The managed MCP pack (agents/mcp/managed.py): how many paid tool calls on /mcp it grants the
# buyer's API key, and for how many days (then calls are paid from credits again).
MCP_MANAGED_CALLS = env.int("MCP_MANAGED_CALLS", default=20)
MCP_MANAGED_DAYS = env.int("MCP_MANAGED_DAYS", default=7)
# What one A2A task stores and answers (agents/a2a/store.py): a message's JSON is at most
# A2A_MESSAGE_MAX_BYTES (larger: -32602), a task's history at most A2A_TASK_MAX_MESSAGES messages
# and A2A_TASK_MAX_BYTES; a message to a task without room for it and its answer is refused
# (-32004), and an unpaid repeat of the task's question is not stored.
A2A_MESSAGE_MAX_BYTES = env.int("A2A_MESSAGE_MAX_BYTES", default=32_768)
A2A_TASK_MAX_MESSAGES = env.int("A2A_TASK_MAX_MESSAGES", default=20)
A2A_TASK_MAX_BYTES = env.int("A2A_TASK_MAX_BYTES", default=262_144)
# How long A2A tasks (GetTask answers from them) and the agent surfaces' answer records (agent
# status reads the last 24 h) are kept before the feeds' pruning pass deletes them; 0 keeps all.
A2A_TASK_RETENTION_DAYS = env.int("A2A_TASK_RETENTION_DAYS", default=7)
AGENT_INTERACTION_RETENTION_DAYS = env.int("AGENT_INTERACTION_RETENTION_DAYS", default=7)
# Execution delegation (webhooks/delegation/): a reported fill may exceed its order's notional (or
# the delegation's total) by this fraction of it (price moves between the order and the fill, fee
# rounding); beyond it the fill is refused (422) and not recorded.
DELEGATION_FILL_TOLERANCE = env.float("DELEGATION_FILL_TOLERANCE", default=0.01)
# Fills are self-reported: a fill's price must lie within this percentage of what the market
# traded at its time (the ingested 1m bars, else 1h bars, and tickers, within
# DELEGATION_FILL_PRICE_WINDOW_SECONDS of filled_at, any venue); beyond it, or with no ingested
# price for that time, it is refused (422) and never reaches the scorecard's live_fills.
DELEGATION_FILL_PRICE_TOLERANCE_PCT = env.float("DELEGATION_FILL_PRICE_TOLERANCE_PCT", default=3.0)
DELEGATION_FILL_PRICE_WINDOW_SECONDS = env.int("DELEGATION_FILL_PRICE_WINDOW_SECONDS", default=300)
# Signals published while the publishing process could not hand them over (it died after the
# commit) are turned into orders and pooled deliveries by this sweep (also the pool's).
DELEGATION_SWEEP_SECONDS = env.float("DELEGATION_SWEEP_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE["dispatch-desk-signals"] = {
    "task": "webhooks.tasks.dispatch_desk_signals",
    "schedule": DELEGATION_SWEEP_SECONDS,
}
# Coordination pool (webhooks/pool/): member i (by join order) receives each copy signal
# i x POOL_SLOT_SECONDS after it was published; the size the desk publishes to its pool for one
# signal is POOL_SIGNAL_SIZE_USDC times the signal's size fraction (its risk-based sizing), and the
# members' allocations are scaled down pro rata to fit it.
POOL_SLOT_SECONDS = env.float("POOL_SLOT_SECONDS", default=2.0)
POOL_SIGNAL_SIZE_USDC = env.float("POOL_SIGNAL_SIZE_USDC", default=10_000.0)
# --- signals, regime, track record (catalog/analytics/signals.py, catalog/intel.py) ------------
# Stop and target of a signal, in ATRs of its 1h bars from the entry; how many 1h bars it holds.
SIGNAL_STOP_ATR = env.float("SIGNAL_STOP_ATR", default=1.5)
SIGNAL_TARGET_ATR = env.float("SIGNAL_TARGET_ATR", default=3.0)
SIGNAL_HORIZON_BARS = env.int("SIGNAL_HORIZON_BARS", default=24)
# The majors the market regime (risk_on / risk_off / neutral / high_volatility) is read from.
REGIME_MAJORS = env.list("REGIME_MAJORS", default=["BTC/USDT", "ETH/USDT"])
# A desk publishes a signal only at this confidence or more; it is killed (stops publishing
# until staff re-enable it) when its drawdown over its closed signals reaches this many percent.
DESK_MIN_CONFIDENCE = env.float("DESK_MIN_CONFIDENCE", default=0.5)
DESK_KILL_DRAWDOWN_PCT = env.float("DESK_KILL_DRAWDOWN_PCT", default=15.0)
# /api/mcp/strategies lists a desk as live once it closed this many signals in 30 days with a
# positive expectancy (and is not killed); scout before that.
DESK_LIVE_MIN_SIGNALS = env.int("DESK_LIVE_MIN_SIGNALS", default=10)
# The analytics pass (catalog/intel.py: regime, signals closed and published, intel snapshot).
INTEL_COMPUTE_SECONDS = env.float("INTEL_COMPUTE_SECONDS", default=300.0)
# intel/latest refuses (503, uncharged) a newest snapshot older than this.
INTEL_MAX_AGE_SECONDS = env.int("INTEL_MAX_AGE_SECONDS", default=1800)
INTEL_RETENTION_DAYS = env.int("INTEL_RETENTION_DAYS", default=30)
CELERY_BEAT_SCHEDULE["compute-intel"] = {"task": "analytics.compute_intel", "schedule": INTEL_COMPUTE_SECONDS}
# Copy signals: the free tier of /api/a2a/signals/copy-trade sees signals opened at least this
# long ago, routing masked; the size of a copied order risks this percent of equity between
# entry and stop, at most this fraction of equity (1: no leverage).
COPY_FREE_DELAY_SECONDS = env.int("COPY_FREE_DELAY_SECONDS", default=600)
COPY_RISK_PER_TRADE_PCT = env.float("COPY_RISK_PER_TRADE_PCT", default=1.0)
COPY_MAX_POSITION_FRACTION = env.float("COPY_MAX_POSITION_FRACTION", default=1.0)
# Alert thresholds: a cross-venue spread (net of taker fees for the exchanges feed's readings;
# an alert when a venue pair crosses it), a move of a prediction market's yes price.
PAIR_ARB_ALERT_BPS = env.float("PAIR_ARB_ALERT_BPS", default=25.0)
# Federated partner signals older than this are not resold (catalog/products/federation.py).
FEDERATION_SIGNAL_MAX_AGE_HOURS = env.float("FEDERATION_SIGNAL_MAX_AGE_HOURS", default=24.0)
PREDICTION_ALERT_MOVE = env.float("PREDICTION_ALERT_MOVE", default=0.05)

# --- desks (catalog/analytics/desks.py; the other thresholds are constants there) -----------
# A grid step is at least this many round-trip taker fees (2 = half of each step pays fees).
GRID_FEE_MULTIPLE = env.float("GRID_FEE_MULTIPLE", default=2.0)
# The scalp desk's pairs trade at least this much a day (USD) on their deepest venue.
SCALP_MIN_VOLUME_USD = env.float("SCALP_MIN_VOLUME_USD", default=1_000_000.0)
# A scalp is skipped when crossing the spread costs more than this share of its target distance.
SCALP_MAX_SPREAD_SHARE = env.float("SCALP_MAX_SPREAD_SHARE", default=0.25)
# The macro gate (/risk/macro-gate, the decision pack's macro check, the morning brief) is
# closed within this many hours before or after a high-impact calendar event.
MACRO_GATE_HOURS = env.float("MACRO_GATE_HOURS", default=4.0)

# --- morning brief (catalog/briefs.py): composed by beat every day at this UTC hour, published
# after the delay (staff's time to review or replace it in the admin; 0: at once).
MORNING_BRIEF_HOUR_UTC = env.int("MORNING_BRIEF_HOUR_UTC", default=6)
MORNING_BRIEF_PUBLISH_DELAY_MINUTES = env.float("MORNING_BRIEF_PUBLISH_DELAY_MINUTES", default=0.0)
CELERY_BEAT_SCHEDULE["compose-morning-brief"] = {
    "task": "briefs.compose",
    "schedule": crontab(minute=0, hour=MORNING_BRIEF_HOUR_UTC),
}
# A brief published later than it was saved (the delay above, the admin's "Publish now" bulk
# action, which sends no post_save) is pushed to the pro brief's buyers by this sweep.
CELERY_BEAT_SCHEDULE["push-morning-brief"] = {"task": "webhooks.tasks.push_morning_brief", "schedule": 60.0}

# Largest `limit` accepted on catalog lists (the interface leaves the maximum to us).
CATALOG_LIMIT_MAX = 200

# One handler, on the root logger: every record is printed once, whatever runs the code
# (granian and Celery add none to these loggers). Django's defaults put a second console
# handler on the "django" logger (active with DEBUG), which doubled every django.request
# line; "handlers": [] replaces it (and the unused mail_admins one).
# LOG_FORMAT: plain (a line of text) or json (one JSON object per line: time, level, logger,
# message, request_id, and a money event's ids; python-json-logger). Every record carries the
# id of the request or task it belongs to (a2a_service/core/requestlog.py). Outbound HTTP calls
# are logged at INFO by a2a_service.core.http (LOG_OUTBOUND_LEVEL=WARNING: failures only).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "()": "a2a_service.core.requestlog.PlainFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
        },
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]}
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "filters": {
        "request_id": {"()": "a2a_service.core.requestlog.RequestIdFilter"},
        "expected_503": {"()": "a2a_service.core.errors.SkipExpectedUnavailable"},
        "expected_4xx": {"()": "a2a_service.core.errors.ExpectedClientErrorsAtInfo"},
    },
    "loggers": {
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"filters": ["expected_503", "expected_4xx"]},
        # The MCP SDK logs each stateless request's session start and end at INFO (agents/mcp/).
        "mcp": {"level": "WARNING"},
        "a2a_service.core.http": {"level": env("LOG_OUTBOUND_LEVEL", default="INFO")},
    },
}

# --- metrics (a2a_service/core/metrics.py; docs/operations/) -------------------------------------
# GET /internal/metrics answers the Prometheus exposition only to `Authorization: Bearer
# <METRICS_TOKEN>`; unset (the default), or any other request, gets the 404 of an unknown path.
# Several processes per node: set PROMETHEUS_MULTIPROC_DIR (an environment variable read by
# prometheus_client itself) to one directory shared by the node's web and Celery processes.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
# --- operations (logging, admin) ---------------------------------------------------------------
# A failure that repeats on every request (Redis or the cache down) is logged with its traceback
# at most once per this many seconds per kind and process; the next record counts the rest.
LOG_REPEAT_SECONDS = env.float("LOG_REPEAT_SECONDS", default=60.0)
# Admin logins: after this many failed attempts from one IP address, or for one username,
# within the window, further attempts are refused (429 with Retry-After) until it ends.
ADMIN_LOGIN_MAX_FAILURES = env.int("ADMIN_LOGIN_MAX_FAILURES", default=5)
ADMIN_LOGIN_WINDOW_SECONDS = env.int("ADMIN_LOGIN_WINDOW_SECONDS", default=900)

# --- feeds: prediction venues and DeFi yields (catalog/feeds/polymarket, kalshi, defillama) ---
# Keyless public APIs. Each pass is bounded: at most *_MAX_MARKETS markets per venue (fetched
# PREDICTION_PAGE_SIZE a page), at most POLYMARKET_MAX_MIDPOINTS CLOB look-ups for the markets
# Gamma gives no price, and the DefiLlama pools at or above the TVL floor, largest first, up to
# the cap. DEFILLAMA_YIELDS_URL is the full URL of the pools list (~15 MB live, hence its own
# body limit).
POLYMARKET_GAMMA_URL = env.str("POLYMARKET_GAMMA_URL", default="https://gamma-api.polymarket.com")
POLYMARKET_CLOB_URL = env.str("POLYMARKET_CLOB_URL", default="https://clob.polymarket.com")
POLYMARKET_MAX_MARKETS = env.int("POLYMARKET_MAX_MARKETS", default=500)
POLYMARKET_MAX_MIDPOINTS = env.int("POLYMARKET_MAX_MIDPOINTS", default=50)
KALSHI_API_URL = env.str("KALSHI_API_URL", default="https://api.elections.kalshi.com/trade-api/v2")
KALSHI_MAX_MARKETS = env.int("KALSHI_MAX_MARKETS", default=500)
PREDICTION_PAGE_SIZE = env.int("PREDICTION_PAGE_SIZE", default=100)
DEFILLAMA_YIELDS_URL = env.str("DEFILLAMA_YIELDS_URL", default="https://yields.llama.fi/pools")
DEFILLAMA_MIN_TVL_USD = env.float("DEFILLAMA_MIN_TVL_USD", default=1_000_000.0)
DEFILLAMA_MAX_POOLS = env.int("DEFILLAMA_MAX_POOLS", default=500)
DEFILLAMA_MAX_BODY_BYTES = env.int("DEFILLAMA_MAX_BODY_BYTES", default=64 * 1024 * 1024)

# --- feeds: the chain's fee history and the RPC probes (catalog/feeds/chain, rpcprobe) --------
# The chain feed reads eth_feeHistory of CHAIN_RPC_URL over this many newest blocks, with the
# reward percentiles 10/25/50/70/90/99; each block's row is kept CHAIN_FEE_RETENTION_DAYS.
CHAIN_FEE_HISTORY_BLOCKS = env.int("CHAIN_FEE_HISTORY_BLOCKS", default=20)
CHAIN_FEE_RETENTION_DAYS = env.int("CHAIN_FEE_RETENTION_DAYS", default=7)
# The chain's EIP-1559 parameters for projecting the next block's base fee: EIP-1559's own
# (elasticity 2, change denominator 8) are Ethereum's and anvil's; OP-stack chains such as Base
# use their own (Base: 6 and 250).
CHAIN_EIP1559_ELASTICITY = env.int("CHAIN_EIP1559_ELASTICITY", default=2)
CHAIN_EIP1559_DENOMINATOR = env.int("CHAIN_EIP1559_DENOMINATOR", default=8)
# Endpoints the RPC probe feed measures: comma-separated `name|url` or `name|url|region|country`
# (plus the enabled endpoints staff add in the admin). Defaults: public Base mainnet endpoints.
RPC_PROBE_URLS = env.str(
    "RPC_PROBE_URLS",
    default=",".join(
        [
            "base-official|https://mainnet.base.org",
            "publicnode|https://base-rpc.publicnode.com",
            "llamarpc|https://base.llamarpc.com",
            "1rpc|https://1rpc.io/base",
            "drpc|https://base.drpc.org",
        ]
    ),
)
# `name` or `name|region|country`: the service's own chain node (CHAIN_RPC_URL) is probed too,
# under that name; empty: not probed. `make run` sets local-anvil for its local chain.
RPC_PROBE_OWN_CHAIN = env.str("RPC_PROBE_OWN_CHAIN", default="")
# Each JSON-RPC call of a probe gives up after this long (connect, read and the whole exchange).
RPC_PROBE_TIMEOUT_SECONDS = env.float("RPC_PROBE_TIMEOUT_SECONDS", default=5.0)
# Endpoints probed at once (each probe is a few sequential calls).
RPC_PROBE_CONCURRENCY = env.int("RPC_PROBE_CONCURRENCY", default=8)

# --- cross-venue prediction matching and divergence (catalog/analytics/prediction_match.py) --
# A computed pair at or above this confidence is a match (sold, alerted); below it (a near miss:
# similar wording, another threshold or date) it is kept for staff to confirm or reject.
PREDICTION_MATCH_MIN_CONFIDENCE = env.float("PREDICTION_MATCH_MIN_CONFIDENCE", default=0.6)
# Close times further apart than this are flagged as a rules mismatch and lower the confidence.
PREDICTION_MATCH_CLOSE_HOURS = env.float("PREDICTION_MATCH_CLOSE_HOURS", default=48.0)
# Trading fee per contract = rate x P x (1 - P) (Kalshi's published taker formula, 0.07; before
# its round-up to the cent). Polymarket charges no trading fee on most markets: 0.
PREDICTION_FEE_KALSHI = env.float("PREDICTION_FEE_KALSHI", default=0.07)
PREDICTION_FEE_POLYMARKET = env.float("PREDICTION_FEE_POLYMARKET", default=0.0)

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
