"""Production's https redirect and HSTS hold for the fast paths in front of Django too: a
plain-http paid call is redirected by Django (not answered by a fast path), and an https
answer from the fast path carries the HSTS header."""

from __future__ import annotations

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import override_settings
from django.utils import timezone
from werkzeug.test import Client

from a2a_service.wsgi import application, django_application
from billing.x402.fastpath import LOCAL
from catalog.models import EditorialPiece
from tests.support.signin import required_but_nonce

pytestmark = pytest.mark.django_db
BRIEF = "/api/a2a/x402/morning-brief"
HTTPS = {"X-Forwarded-Proto": "https"}


@pytest.fixture(autouse=True)
def brief() -> None:
    """This morning's brief: the brief is sold (402) only when it has something to deliver."""
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the challenge fast path needs Redis (CI sets REDIS_URL)")
    # What production.py sets (the test settings serve plain http). SecurityMiddleware reads
    # them when the middleware chain is built, so the chain is built again on each side.
    production_like = override_settings(
        SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
        SECURE_SSL_REDIRECT=True,
        SECURE_REDIRECT_EXEMPT=[r"^api/a2a/program/health$"],
        SECURE_HSTS_SECONDS=3600,
        SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
    )
    production_like.enable()
    django_application.load_middleware()
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    LOCAL.ensure_started()
    assert LOCAL._listening.wait(5)
    LOCAL.clear()
    try:
        yield Client(application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        production_like.disable()
        django_application.load_middleware()


@pytest.fixture
def fast_path_calls():
    """Counts the requests that reach the layers below the challenge fast path."""
    calls: list[str] = []
    original = application.app
    application.app = lambda environ, start_response: (
        calls.append(environ["PATH_INFO"]) or original(environ, start_response)
    )
    yield calls
    application.app = original


def test_plain_http_paid_calls_are_redirected_not_served_by_a_fast_path(wsgi, fast_path_calls):
    assert wsgi.get(BRIEF, headers=HTTPS).status_code == 402  # the challenge is now in Redis
    fast_path_calls.clear()
    for headers in ({}, {"X-API-Key": "a2a_" + "x" * 40}):
        resp = wsgi.get(BRIEF, headers=headers)
        assert resp.status_code == 301
        assert resp.headers["Location"] == "https://localhost" + BRIEF
    assert fast_path_calls == []  # Django's SecurityMiddleware answered, neither fast path
    # The load balancer's health probe over plain http is exempt.
    assert wsgi.get("/api/a2a/program/health").status_code == 200


def test_https_answers_of_the_fast_path_carry_hsts(wsgi, fast_path_calls):
    first = wsgi.get(BRIEF, headers=HTTPS)  # rendered by Django, stored in Redis
    assert first.status_code == 402
    assert first.headers.get_all("Strict-Transport-Security") == ["max-age=3600; includeSubDomains"]
    fast_path_calls.clear()
    second = wsgi.get(BRIEF, headers=HTTPS)  # answered by the challenge fast path
    assert second.status_code == 402
    assert fast_path_calls == [], "the second challenge should come from the fast path"
    assert second.headers.get_all("Strict-Transport-Security") == ["max-age=3600; includeSubDomains"]
    # The same challenge (with a sign-in nonce of its own: billing/x402/signin.py).
    assert (
        required_but_nonce(second.headers["PAYMENT-REQUIRED"])[0]
        == required_but_nonce(first.headers["PAYMENT-REQUIRED"])[0]
    )
