"""`manage.py show_routes`: one line per route, so a reader finds any endpoint's code from its
path in one step: method(s), path, the view (dotted), for a free GET the selector that builds its
answer, and for a paid route the product SKU it sells."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.core.management.base import BaseCommand
from django.urls import URLPattern, URLResolver, get_resolver


def _walk(
    patterns: list[Any], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str, URLPattern]]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
        else:
            yield prefix + str(p.pattern), namespace, p


def _path(route: str) -> str:
    """The route as the OpenAPI document writes it: /api/a2a/teaser/{name}."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route).lstrip("^").rstrip("$")


def _dotted(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def route_lines(*, include_admin: bool = False) -> list[str]:
    rows = []
    for route, namespace, pattern in _walk(get_resolver().url_patterns):
        if namespace == "admin" and not include_admin:
            continue
        callback = pattern.callback
        view = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
        if view is None:
            methods, where = "ANY", _dotted(callback)
        else:
            names = [m for m in view.http_method_names if m != "options" and hasattr(view, m)]
            methods, where = ",".join(m.upper() for m in names) or "ANY", _dotted(view)
        extra = []
        selector = getattr(view, "selector", None)
        if selector is not None:
            extra.append(f"selector={_dotted(selector)}")
        sku = getattr(view, "sku_name", "") or getattr(view, "product_sku", None)
        if sku:
            extra.append(f"sku={sku}")
        rows.append("  ".join([f"{methods:<15}", f"{_path(route):<58}", where, *extra]).rstrip())
    return rows


class Command(BaseCommand):
    help = (
        "Print every route, one a line: method(s), path, view (dotted), the selector of a free GET, "
        "and the product SKU a paid route sells. The admin site's routes only with --admin."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--admin", action="store_true", help="include the admin site's routes")

    def handle(self, *args: Any, admin: bool = False, **options: Any) -> None:
        for line in route_lines(include_admin=admin):
            self.stdout.write(line)
