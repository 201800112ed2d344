"""Test settings: fast hashing, in-memory cache unless Redis is given (CI gives it)."""

from __future__ import annotations

from .base import *  # noqa: F403
from .base import REDIS_URL, env

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
