"""The route table reads from the code: `manage.py show_routes` prints every route (method,
path, view, product), and every URL pattern is named by its operation id."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.urls import URLResolver, get_resolver
from rest_framework.test import APIClient


@pytest.fixture(scope="module")
def lines() -> list[list[str]]:
    out = io.StringIO()
    call_command("show_routes", stdout=out)
    return [line.split() for line in out.getvalue().splitlines()]


@pytest.mark.parametrize(
    "expected",
    [
        ["GET", "/.well-known/agent.json", "selector=agents.a2a.cards.agent_card_v03"],
        ["GET", "/.well-known/agent-card.json", "selector=agents.a2a.cards.agent_card_v1"],
        ["GET", "/api/a2a/news/catalog", "selector=catalog.selectors.market.news_catalog"],
        ["GET", "/api/a2a/account/whale/catalog", "selector=billing.selectors.pricing.whale_catalog"],
        ["GET", "/api/a2a/teaser/{name}", "selector=catalog.selectors.teasers.teaser"],
        ["POST", "/api/a2a/marketplace/execute", "agents.discovery.views.MarketplaceExecuteView"],
        ["GET,POST", "/api/a2a/agents/{slug}", "agents.api.AgentView"],
        ["GET", "/api/a2a/x402/sentiment", "billing.api.views.X402SentimentView", "sku=sentiment"],
        ["GET", "/api/a2a/sentiment", "sku=sentiment"],
        ["GET", "/api/a2a/session/call/{sku}", "sessions_app.api.SessionCallView"],
    ],
)
def test_show_routes_prints_path_view_and_product(lines, expected):
    method, path, *rest = expected
    [line] = [words for words in lines if words[1] == path]
    assert line[0] == method
    assert all(word in line for word in rest), line


def test_show_routes_prints_every_route_once(lines):
    paths = [words[1] for words in lines]
    assert len(paths) == len(set(paths))
    assert not any(p.startswith("/admin/") and p != "/admin/login/" for p in paths)


def _patterns(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            if p.namespace != "admin":
                yield from _patterns(p.url_patterns, prefix + str(p.pattern))
        else:
            yield prefix + str(p.pattern), p


@pytest.mark.django_db
def test_every_url_pattern_is_named_by_its_operation_id():
    doc = APIClient().get("/api/a2a/openapi.json").json()
    for route, pattern in _patterns(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        operations = {op["operationId"] for op in doc["paths"].get(path, {}).values()}
        assert pattern.name in operations, (route, pattern.name, operations)
