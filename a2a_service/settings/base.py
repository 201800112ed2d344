"""Settings shared by every environment. Everything that differs between machines
comes from the environment (12-factor); every setting is a row of docs/configuration.md.

This module holds Django itself (apps, middleware, database, cache, CORS, DRF, the OpenAPI
schema) and Celery (its broker and beat's schedule, one table below); each area's settings live
in a module of their own, imported here whole so that every setting is read from
a2a_service.settings.base as before: environment (the environment reader, paths, DEBUG),
payments, agents, webhooks, feeds, intel and observability."""

from __future__ import annotations

from datetime import timedelta

from celery.schedules import crontab

from .agents import *  # noqa: F403
from .environment import *  # noqa: F403
from .environment import BASE_DIR, RUN_DIR, env
from .feeds import *  # noqa: F403
from .feeds import FEEDS_PRUNE_SECONDS
from .intel import *  # noqa: F403
from .intel import INTEL_COMPUTE_SECONDS, MORNING_BRIEF_HOUR_UTC
from .observability import *  # noqa: F403
from .payments import *  # noqa: F403
from .payments import (
    DEPOSIT_POLL_SECONDS,
    PAYMENT_RECONCILE_SECONDS,
    X402_CHANNEL_CLAIM_INTERVAL,
    X402_CHANNEL_REFUND_INTERVAL,
    X402_CHANNEL_SETTLE_INTERVAL,
    X402_CHANNEL_WITHDRAWAL_WATCH_INTERVAL,
)
from .webhooks import *  # noqa: F403
from .webhooks import DELEGATION_SWEEP_SECONDS, WEBHOOK_SWEEP_SECONDS

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

# Largest `limit` accepted on catalog lists (the interface leaves the maximum to us).
CATALOG_LIMIT_MAX = 200

# --- outbound HTTP (a2a_service/core/http.py) ------------------------------------------------
OUTBOUND_HTTP_TIMEOUT_SECONDS = env.float("OUTBOUND_HTTP_TIMEOUT_SECONDS", default=5.0)
# Other outbound calls (a2a_service/core/http.py) to private addresses; the host of FACILITATOR_URL is
# always allowed (operator configuration, often a self-hosted facilitator on loopback).
OUTBOUND_ALLOW_PRIVATE_TARGETS = env.bool("OUTBOUND_ALLOW_PRIVATE_TARGETS", default=False)

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

# --- Celery beat: every periodic task, paced by its area's setting ----------------------------
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {
        "task": "catalog.tasks.worker_heartbeat",
        "schedule": float(WORKER_HEARTBEAT_SECONDS),
    },
    "flush-counters": {"task": "catalog.tasks.flush_counters", "schedule": 30.0},
    "scan-deposits": {"task": "billing.tasks.scan_deposits", "schedule": DEPOSIT_POLL_SECONDS},
    "sweep-webhook-deliveries": {"task": "webhooks.tasks.sweep_deliveries", "schedule": WEBHOOK_SWEEP_SECONDS},
    "reconcile-payments": {
        "task": "billing.tasks.reconcile_payments",
        "schedule": PAYMENT_RECONCILE_SECONDS,
    },
    "feeds-prune": {"task": "feeds.prune", "schedule": FEEDS_PRUNE_SECONDS},
    "dispatch-desk-signals": {
        "task": "webhooks.tasks.dispatch_desk_signals",
        "schedule": DELEGATION_SWEEP_SECONDS,
    },
    "compute-intel": {"task": "analytics.compute_intel", "schedule": INTEL_COMPUTE_SECONDS},
    "compose-morning-brief": {
        "task": "briefs.compose",
        "schedule": crontab(minute=0, hour=MORNING_BRIEF_HOUR_UTC),
    },
    # A brief published later than it was saved (MORNING_BRIEF_PUBLISH_DELAY_MINUTES, the admin's
    # "Publish now" bulk action, which sends no post_save) is pushed to the pro brief's buyers by
    # this sweep.
    "push-morning-brief": {"task": "webhooks.tasks.push_morning_brief", "schedule": 60.0},
    # Payment channels (x402 batch-settlement): each task does nothing while channels are off.
    "channels-claim": {"task": "billing.tasks.channels_claim", "schedule": X402_CHANNEL_CLAIM_INTERVAL},
    "channels-settle": {"task": "billing.tasks.channels_settle", "schedule": X402_CHANNEL_SETTLE_INTERVAL},
    "channels-refund-idle": {"task": "billing.tasks.channels_refund_idle", "schedule": X402_CHANNEL_REFUND_INTERVAL},
    "channels-watch-withdrawals": {
        "task": "billing.tasks.channels_watch_withdrawals",
        "schedule": X402_CHANNEL_WITHDRAWAL_WATCH_INTERVAL,
    },
}
