"""Free documents served in front of Django (a2a_service/core/fastcache.py): the same bytes and
headers Django sends, counted in the funnel, never stale after a write, and anything unusual
left to Django."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from werkzeug.test import Client

from a2a_service.core.fastcache import (
    FREE_CHANNEL,
    FREE_LOCAL,
    FREE_VERSION_KEY,
    FreeFastPath,
    free_documents_forget,
)
from a2a_service.core.redisconn import channel, redis_client
from a2a_service.urls import CACHEABLE_ROUTES
from a2a_service.wsgi import application, django_application
from billing.models import BillingSettings, WhaleTier
from catalog.counters import counters_pending
from catalog.models import AgentFrameworkPack, CatalogAgent, Integration, NewsItem, PartnerAgent, Sku, Teaser
from catalog.signals import FREE_CACHE_IGNORED_APPS, FREE_CACHE_IGNORED_MODELS

pytestmark = pytest.mark.django_db
NEWS = "/api/a2a/news/catalog"
FREE_LAYER: FreeFastPath = application.app  # SecureFastPaths(FreeFastPath(CreditFastPath(Django)))
assert isinstance(FREE_LAYER, FreeFastPath)


def concrete(route: str) -> str:
    if "<str:name>" in route:
        return "/" + route.replace("<str:name>", Teaser.objects.order_by("id").first().name)
    return "/" + route


@pytest.fixture
def wsgi(settings):
    if not settings.REDIS_URL:
        pytest.skip("the free-document cache needs Redis (CI sets REDIS_URL); without it Django answers")
    # Keep the request cycle from closing the test transaction's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    for n in range(6):  # the test database's catalog has no news
        NewsItem.objects.create(title=f"Item {n}", teaser=f"teaser {n}", body="b", category="crypto")
    FREE_LOCAL.ensure_started()
    assert FREE_LOCAL._listening.wait(5), "the invalidation subscriber did not subscribe"
    FREE_LOCAL.clear()
    try:
        yield Client(application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def django_calls(monkeypatch) -> list[str]:
    """The paths of requests that reached the layers behind the free fast path."""
    calls: list[str] = []
    below = FREE_LAYER.app

    def counting(environ, start_response):
        calls.append(environ["PATH_INFO"])
        return below(environ, start_response)

    monkeypatch.setattr(FREE_LAYER, "app", counting)
    return calls


def stored_documents() -> list[bytes]:
    return [k for k in redis_client().scan_iter(match="a2a:free:*") if k != FREE_VERSION_KEY.encode()]


def answer(resp) -> tuple[int, bytes, list[tuple[str, str]]]:
    # Every answer carries its own request id (a2a_service/core/requestlog.py): its presence is compared.
    headers = [(n, "<id>" if n == "X-Request-ID" else v) for n, v in resp.headers.to_wsgi_list()]
    return resp.status_code, resp.get_data(), sorted(headers)


def written(write: Callable[[], None], capture) -> None:
    with capture(execute=True):
        write()


@pytest.mark.parametrize("route", sorted(CACHEABLE_ROUTES))
def test_every_cached_route_answers_byte_for_byte_as_django_does(wsgi, django_calls, route):
    path = concrete(route)
    django = answer(Client(django_application).get(path))
    assert django[0] == 200
    first = answer(wsgi.get(path))  # Django renders it, the layer stores it
    assert django_calls == [path]
    from_redis = answer(wsgi.get(path))
    FREE_LOCAL.clear()  # as after an invalidation: next from Redis again, then from the copy
    assert django_calls == [path], "a stored document went to Django"
    assert first == django
    assert from_redis == django
    assert answer(wsgi.get(path)) == django
    assert answer(wsgi.get(path)) == django  # this process's copy
    assert django_calls == [path]


@pytest.mark.parametrize("secure", [True, False])
def test_https_answers_carry_hsts_as_django_would(wsgi, django_calls, settings, secure):
    production_like = override_settings(
        SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
        SECURE_SSL_REDIRECT=False,
        SECURE_HSTS_SECONDS=3600,
        SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
    )
    production_like.enable()
    django_application.load_middleware()
    try:
        headers = {"X-Forwarded-Proto": "https" if secure else "http"}
        django = answer(Client(django_application).get(NEWS, headers=headers))
        assert ("Strict-Transport-Security", "max-age=3600; includeSubDomains") in django[2] or not secure
        assert [answer(wsgi.get(NEWS, headers=headers)) for _ in range(3)] == [django] * 3
        assert django_calls == [NEWS]
        # The other scheme is another document (its links may differ): Django renders it once.
        other = {"X-Forwarded-Proto": "http" if secure else "https"}
        assert answer(wsgi.get(NEWS, headers=other)) == answer(
            Client(django_application).get(NEWS, headers=other)
        )
        assert django_calls == [NEWS, NEWS]
    finally:
        production_like.disable()
        django_application.load_middleware()


def test_hits_served_in_front_of_django_are_counted_in_the_funnel(wsgi):
    teaser = concrete("api/a2a/teaser/<str:name>")
    for _ in range(4):
        assert wsgi.get(NEWS).status_code == 200  # Django, Redis, copy, copy
    for _ in range(3):
        assert wsgi.get(teaser).status_code == 200
    FREE_LOCAL.flush_counts()
    pending = counters_pending(since=timezone.now().date())
    assert pending["hit"] == 4 and pending["teaser"] == 3
    fields = redis_client().hgetall(f"a2a:ctr:{timezone.now().date().isoformat()}")
    assert int(fields[b"hit|api/a2a/news/catalog"]) == 4
    assert int(fields[b"teaser|api/a2a/teaser/<str:name>"]) == 3


def _news_item():
    NewsItem.objects.create(title="Fresh headline 7781", teaser="t", body="b", category="crypto")


def _billing_off():
    b = BillingSettings.load()
    b.credit_billing_enabled = not b.credit_billing_enabled
    b.save()


def _sku_price():
    sku = Sku.objects.get(sku="morning_brief")
    sku.price_atomic = 123_457
    sku.save()


def _sku_bulk_disable():
    from catalog.services import sku_set_status

    sku_set_status(sku_ids=[Sku.objects.get(sku="morning_brief").id], status=Sku.Status.DISABLED)


def _teaser():
    t = Teaser.objects.order_by("id").first()
    t.title = "Changed teaser title 7781"
    t.save()


def _agent():
    a = CatalogAgent.objects.order_by("id").first()
    a.name = "Renamed agent 7781"
    a.save()


def _agent_skus():
    a = CatalogAgent.objects.order_by("id").first()
    a.skus.clear()


def _whale():
    WhaleTier.objects.create(name="Kraken 7781", min_deposit_atomic=10**12, bonus_pct=1, perks=[])


def _integration():
    i = Integration.objects.order_by("id").first()
    i.name = "Renamed integration 7781"
    i.save()


def _pack_deleted():
    AgentFrameworkPack.objects.order_by("id").first().delete()


def _partner():
    PartnerAgent.objects.create(
        slug="partner-7781", name="Partner 7781", description="d", url="https://partner.example/"
    )


@pytest.mark.parametrize(
    "route,write",
    [
        (NEWS, _news_item),
        (
            "/api/a2a/equity/catalog",
            lambda: NewsItem.objects.create(title="Eq 7781", teaser="t", category="equity"),
        ),
        (NEWS, _billing_off),
        ("/.well-known/x402", _sku_price),
        ("/api/a2a/ai-agent.json", _sku_price),
        ("/.well-known/x402", _sku_bulk_disable),
        ("teaser", _teaser),
        ("/api/a2a/agents/catalog", _agent),
        ("/api/a2a/agents/catalog", _agent_skus),
        ("/api/a2a/account/whale/catalog", _whale),
        ("/api/a2a/discovery/integrations", _integration),
        ("/api/a2a/discovery/agent-frameworks", _pack_deleted),
        ("/api/a2a/partner/catalog", _partner),
    ],
)
def test_the_next_request_after_a_write_shows_it(wsgi, django_capture_on_commit_callbacks, route, write):
    path = concrete("api/a2a/teaser/<str:name>") if route == "teaser" else route
    before = wsgi.get(path).get_data()
    assert wsgi.get(path).get_data() == before  # from Redis
    assert wsgi.get(path).get_data() == before  # from the copy
    written(write, django_capture_on_commit_callbacks)
    after = wsgi.get(path).get_data()
    assert after != before
    assert after == Client(django_application).get(path).get_data()  # what the database says now
    if write not in (_billing_off, _sku_price, _sku_bulk_disable, _agent_skus, _pack_deleted):
        assert b"7781" in after
    assert wsgi.get(path).get_data() == after  # and that is stored in turn


def test_an_invalidation_from_another_process_clears_this_processs_copy(wsgi):
    wsgi.get(NEWS)
    wsgi.get(NEWS)
    assert FREE_LOCAL._data
    generation = FREE_LOCAL.generation()
    redis_client().incr(FREE_VERSION_KEY)  # what another process's free_documents_forget() does
    redis_client().publish(channel(FREE_CHANNEL), b"forget")
    deadline = time.monotonic() + 5
    while FREE_LOCAL.generation() == generation and time.monotonic() < deadline:
        time.sleep(0.01)
    assert FREE_LOCAL.generation() > generation and not FREE_LOCAL._data


def test_a_document_rendered_while_a_write_commits_is_not_stored(wsgi, monkeypatch):
    below = FREE_LAYER.app

    def write_during_render(environ, start_response):
        result = below(environ, start_response)
        free_documents_forget()  # another process's write committed while this one rendered
        return result

    monkeypatch.setattr(FREE_LAYER, "app", write_during_render)
    assert wsgi.get(NEWS).status_code == 200
    assert stored_documents() == []
    monkeypatch.setattr(FREE_LAYER, "app", below)
    wsgi.get(NEWS)
    assert len(stored_documents()) == 1


def test_a_local_copy_entry_expires(wsgi, monkeypatch):
    wsgi.get(NEWS)
    wsgi.get(NEWS)
    key = next(iter(FREE_LOCAL._data))
    assert FREE_LOCAL.get(key) is not None
    later = time.monotonic() + FREE_LOCAL.ttl + 1
    monkeypatch.setattr("a2a_service.core.fastcache.time.monotonic", lambda: later)
    assert FREE_LOCAL.get(key) is None


@pytest.mark.parametrize(
    "method,path,headers",
    [
        ("GET", NEWS, {"Origin": "https://agent.example"}),
        ("GET", NEWS, {"Cookie": "sessionid=abc"}),
        ("GET", NEWS, {"Authorization": "Bearer x"}),
        ("GET", NEWS, {"X-API-Key": "a2a_nothing"}),
        ("GET", NEWS, {"X-Session-Token": "s"}),
        ("GET", NEWS, {"PAYMENT-SIGNATURE": "x"}),
        ("HEAD", NEWS, {}),
        ("POST", NEWS, {}),
        ("OPTIONS", NEWS, {}),
        ("GET", NEWS + "?limit=abc", {}),  # 422: not stored
        ("GET", NEWS + "?limit=" + "9" * 2000, {}),  # too long a key
        ("GET", "/api/a2a/program/health", {}),  # not a cacheable document
        ("GET", "/api/a2a/monetization/conversion", {}),  # depends on the counts
    ],
)
def test_unusual_requests_go_to_django_every_time_and_are_not_stored(
    wsgi, django_calls, method, path, headers
):
    plain = Client(application, use_cookies=False)  # (werkzeug's jar would drop a Cookie header)
    for _ in range(2):
        assert plain.open(path, method=method, headers=headers).status_code < 500
    assert django_calls == [path.split("?")[0]] * 2
    assert stored_documents() == []


def test_a_cors_request_gets_djangos_cors_headers_even_after_the_document_is_stored(wsgi):
    wsgi.get(NEWS)
    cors = wsgi.get(NEWS, headers={"Origin": "https://agent.example"})
    assert cors.headers["Access-Control-Allow-Origin"] == "*"


def test_each_query_is_its_own_document(wsgi, django_calls):
    five = json.loads(wsgi.get(NEWS + "?limit=5").get_data())
    two = json.loads(wsgi.get(NEWS + "?limit=2").get_data())
    assert len(five["items"]) == 5 and len(two["items"]) == 2
    assert json.loads(wsgi.get(NEWS + "?limit=5").get_data()) == five
    assert json.loads(wsgi.get(NEWS + "?limit=2").get_data()) == two
    assert django_calls == [NEWS, NEWS]


@pytest.mark.parametrize(
    "path,headers",
    [
        (NEWS + "?limit=%00", {}),
        (NEWS + "?limit=%ff%fe", {}),
        (NEWS + "?category=" + "\u00e9" * 10, {}),
        (NEWS, {"Accept": "text/html"}),
        (NEWS, {"Accept": "\x7f" * 300}),
        (NEWS, {"Host": "evil.example"}),
        ("/.well-known/x402%00", {}),
    ],
)
def test_garbage_is_never_a_500(wsgi, path, headers):
    for _ in range(3):
        assert wsgi.get(path, headers=headers).status_code < 500


def test_a_corrupted_stored_document_goes_to_django(wsgi, django_calls):
    wsgi.get(NEWS)
    (key,) = stored_documents()
    redis_client().set(key, b"not a document")
    resp = wsgi.get(NEWS)
    assert resp.status_code == 200 and json.loads(resp.get_data())["items"]
    assert django_calls == [NEWS, NEWS]


def test_without_redis_django_answers_everything(wsgi, django_calls, settings):
    settings.REDIS_URL = ""
    for _ in range(3):
        assert wsgi.get(NEWS).status_code == 200
    assert django_calls == [NEWS] * 3


def test_the_rate_limit_holds_for_stored_documents(wsgi, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/day"})  # no window ends mid-test
    from a2a_service.core.throttling import BUFFERED_WINDOWS

    env = {"REMOTE_ADDR": "10.9.9.9"}
    codes = []
    for _ in range(5):
        codes.append(wsgi.get(NEWS, environ_base=env).status_code)
        BUFFERED_WINDOWS.flush()  # what the background flush does every 50 ms
    assert codes == [200, 200, 200, 429, 429]
    assert int(wsgi.get(NEWS, environ_base=env).headers["Retry-After"]) >= 1
    assert wsgi.get(NEWS, environ_base={"REMOTE_ADDR": "10.9.9.8"}).status_code == 200


@pytest.mark.parametrize("route", sorted(CACHEABLE_ROUTES))
def test_no_cached_document_reads_a_table_whose_writes_do_not_invalidate_it(wsgi, route):
    from django.apps import apps

    ignored = {
        m._meta.db_table
        for m in apps.get_models(include_auto_created=True)
        if m._meta.label in FREE_CACHE_IGNORED_MODELS or m._meta.app_label in FREE_CACHE_IGNORED_APPS
    }
    with CaptureQueriesContext(connection) as ctx:
        assert Client(django_application).get(concrete(route)).status_code == 200
    read = {t for q in ctx.captured_queries for t in re.findall(r'FROM "([a-z0-9_]+)"', q["sql"])}
    read |= {t for q in ctx.captured_queries for t in re.findall(r'JOIN "([a-z0-9_]+)"', q["sql"])}
    assert read and not (read & ignored), f"{route} reads {read & ignored}"


def test_agent_surface_answers_do_not_empty_the_stored_documents(
    wsgi, django_calls, django_capture_on_commit_callbacks
):
    """Every chat, A2A, MCP and marketplace answer writes an AgentInteraction row: frequent
    writes no cached document shows, so the next catalog read is still served in front of
    Django."""
    from agents.services import agent_interaction_record

    wsgi.get(NEWS)
    assert django_calls == [NEWS]
    for surface in ("chat", "jsonrpc", "mcp", "marketplace"):
        written(
            lambda surface=surface: agent_interaction_record(
                agent="agenthub", surface=surface, status_code=200
            ),
            django_capture_on_commit_callbacks,
        )
    wsgi.get(NEWS)
    assert django_calls == [NEWS]
