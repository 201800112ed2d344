"""Production: PostgreSQL, Redis, secrets from the environment. Refuses to start
without them rather than running with a development default."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DATABASES, REDIS_URL, SECRET_KEY, TREASURY_ADDRESS, env

DEBUG = False
_missing = [
    name
    for name, value in {
        "SECRET_KEY": SECRET_KEY,
        "TREASURY_ADDRESS": TREASURY_ADDRESS,
        "REDIS_URL": REDIS_URL,
    }.items()
    if not value
]
if _missing:
    raise ImproperlyConfigured(f"production settings need these environment variables: {', '.join(_missing)}")
if len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters in production")
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("production needs DATABASE_URL pointing to PostgreSQL")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=True)
