"""Test settings: fast hashing, in-memory cache unless Redis is given (CI gives it)."""

from __future__ import annotations

import os
import re

# pytest-xdist runs the suite in several worker processes: each gets its own test database from
# pytest-django, and here its own Redis database next to the one REDIS_URL names (the suite
# clears and counts keys in Redis). Set in the environment before the base settings read it, so
# the processes a test starts (Celery workers, web servers) inherit the same database, and only
# once (those processes carry PYTEST_XDIST_WORKER too).
_worker = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
_redis = re.fullmatch(r"(redis://[^/]*)(?:/(\d+))?", os.environ.get("REDIS_URL", ""))
if _worker and _redis and not os.environ.get("A2A_TEST_REDIS_PER_WORKER"):
    os.environ["REDIS_URL"] = f"{_redis.group(1)}/{int(_redis.group(2) or 0) + 1 + int(_worker.group(1))}"
    os.environ["A2A_TEST_REDIS_PER_WORKER"] = "1"

from .base import *  # noqa: E402, F403
from .base import REDIS_URL, env  # noqa: E402

SECRET_KEY = "test-only-not-a-secret"
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
TREASURY_ADDRESS = env("TREASURY_ADDRESS", default="0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")
INGEST_TOKEN = "test-ingest-token"
FACILITATOR_URL = "http://127.0.0.1:9/facilitator"
FACILITATOR_TIMEOUT_SECONDS = 0.5
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if not REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "a2a-test",
        }
    }
# Throttling is exercised by its own test with a low rate; elsewhere it must not interfere.
# (THROTTLE_ANON: the two-node test starts its web nodes with a low rate of their own.)
REST_FRAMEWORK = {  # noqa: F405
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"anon": env("THROTTLE_ANON", default="100000/min")},
}
WEBHOOKS_REQUIRE_HTTPS = False
# Tests that use a loopback receiver allow it explicitly (a test's Celery worker by environment).
WEBHOOKS_ALLOW_PRIVATE_TARGETS = env.bool("WEBHOOKS_ALLOW_PRIVATE_TARGETS", default=False)
WEBHOOK_RETRY_SCALE = 0.01
ATTESTATION_PRIVATE_KEY = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97"
