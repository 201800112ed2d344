"""`python manage.py serve_metrics [--host 127.0.0.1] [--port 9464]`: the Prometheus exposition
on an internal address of its own, for a node that runs Celery workers and no web process (a
web node's is GET /internal/metrics with METRICS_TOKEN). It adds up the node's processes through
the same PROMETHEUS_MULTIPROC_DIR, and computes the database and broker figures when scraped.
With METRICS_TOKEN set it asks for the token too; without it, bind it only where Prometheus alone
can reach it (the default is loopback)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from prometheus_client import CONTENT_TYPE_LATEST

from a2a_service.core.metrics_endpoint import metrics_authorized, metrics_scrape


def metrics_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    token_ok = not settings.METRICS_TOKEN or metrics_authorized(environ.get("HTTP_AUTHORIZATION"))
    if environ.get("PATH_INFO") not in ("/metrics", "/internal/metrics") or not token_ok:
        start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "10")])
        return [b"not found\n"]
    body = metrics_scrape()
    start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
    return [body]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return None  # one line per scrape on stderr is noise


class Command(BaseCommand):
    help = "Serve the Prometheus exposition on an internal address (a node without a web process)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=9464)

    def handle(self, *args: Any, **options: Any) -> None:
        with make_server(options["host"], options["port"], metrics_app, handler_class=_Quiet) as server:
            self.stdout.write(f"serve_metrics: http://{options['host']}:{options['port']}/metrics")
            server.serve_forever()
