"""A local stand-in for the feeds' outside APIs in tests: a stdlib HTTP server on loopback,
in a thread, serving catalog/feeds/samples/ by the replay server's rule (GET /<key>/<path>:
the file, <path>.json, or <path>/index.json; the query string ignored). A test overrides a
path with its own answer (a status, a body, a delay, a redirect) or a function of the query,
and reads the requests it received."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support import ROOT

SAMPLES = ROOT / "catalog" / "feeds" / "samples"


def sample_path(key: str, path: str = "") -> Path | None:
    base = SAMPLES / key / path.strip("/")
    for candidate in (base, base.with_name(base.name + ".json"), base / "index.json"):
        if candidate.is_file():
            return candidate
    return None


def sample_json(key: str, path: str = "") -> Any:
    found = sample_path(key, path)
    assert found is not None, (key, path)
    return json.loads(found.read_text())


@dataclass
class Answer:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


# A route answers with an Answer, or a function of the query (each parameter's first value).
Route = Answer | Callable[[dict[str, str]], Answer]


class SampleServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                path = parts.path.rstrip("/") or "/"
                server.requests.append((path, query))
                route = server.routes.get(path)
                answer = route(query) if callable(route) else route
                if answer is None:
                    key, _, rest = path.lstrip("/").partition("/")
                    found = sample_path(key, rest)
                    answer = Answer(body=found.read_bytes()) if found else Answer(status=404, body=b"{}")
                if answer.delay:
                    time.sleep(answer.delay)
                body = answer.body
                if not isinstance(body, bytes | str):
                    body = json.dumps(body)
                data = body.encode() if isinstance(body, str) else body
                try:
                    self.send_response(answer.status)
                    for name, value in {"Content-Type": "application/json", **answer.headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # A short poll: shutdown() waits for the loop to look, 0.5 s by default, after every test.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
