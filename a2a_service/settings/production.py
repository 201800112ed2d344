"""Production: PostgreSQL, Redis, secrets from the environment. Refuses to start without
them, or with any value that ships in this repository for development (local.py, test.py,
the anvil accounts of billing/chain/localchain.py): those keys are public, so a deployment
that runs with one of them has no secret at all."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import (
    ATTESTATION_PRIVATE_KEY,
    DATABASES,
    FACILITATOR_PRIVATE_KEY,
    FACILITATOR_URL,
    FEEDS_MODE,
    INGEST_TOKEN,
    PUBLIC_BASE_URL,
    RECEIVER_AUTHORIZER_PRIVATE_KEY,
    REDIS_URL,
    SECRET_KEY,
    TREASURY_ADDRESS,
    X402_CHANNELS_ENABLED,
    env,
)
from .refusals import production_refusals

DEBUG = False

# Production names its hosts: no development list of loopback names and `testserver`.
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])
_problems = production_refusals(
    secret_key=SECRET_KEY,
    treasury_address=TREASURY_ADDRESS,
    redis_url=REDIS_URL,
    database_engine=DATABASES["default"]["ENGINE"],
    allowed_hosts=ALLOWED_HOSTS,
    facilitator_private_key=FACILITATOR_PRIVATE_KEY,
    attestation_private_key=ATTESTATION_PRIVATE_KEY,
    ingest_token=INGEST_TOKEN,
    facilitator_url=FACILITATOR_URL,
    public_base_url=PUBLIC_BASE_URL,
    feeds_mode=FEEDS_MODE,
    channels_enabled=X402_CHANNELS_ENABLED,
    receiver_authorizer_private_key=RECEIVER_AUTHORIZER_PRIVATE_KEY,
)
if _problems:
    raise ImproperlyConfigured("refusing to start with production settings: " + "; ".join(_problems))

# --- transport security ---------------------------------------------------------------------
# TLS is terminated by a proxy that sets X-Forwarded-Proto (and must overwrite a client's own).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Plain-http requests are redirected to https. A proxy that terminates TLS and forwards only
# https (and sets X-Forwarded-Proto) needs no change; set false only if the proxy itself
# redirects and Django cannot tell (no X-Forwarded-Proto).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Paths answered over plain http too (regexes without the leading slash): a load balancer's
# health probe usually speaks http to the backend directly.
SECURE_REDIRECT_EXEMPT = env.list("SECURE_REDIRECT_EXEMPT", default=[r"^api/a2a/program/health$"])
# Browsers remember to use https only (one year by default; 0 turns the header off).
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
# Preloading is a decision about the whole domain, made at hstspreload.org: off unless asked
# for, and then Django's deploy check may not insist on it (security.W021).
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
# The Host header is what the client sent unless a proxy is known to rewrite it: trusting
# X-Forwarded-Host from anyone lets a client choose the host of absolute URLs.
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)
