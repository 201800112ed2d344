"""A local stand-in for the feed replay server (the rule of catalog/feeds: GET /<key>/<path>
serves catalog/feeds/samples/<key>/<path>, a directory's index.json, else <path>.json, else
<path>.xml; the query string is ignored), in a thread, with hooks for failure cases."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

SAMPLES = Path(__file__).resolve().parents[2] / "catalog" / "feeds" / "samples"


def sample_file(path: str) -> Path | None:
    relative = unquote(urlsplit(path).path).lstrip("/")
    target = (SAMPLES / relative).resolve()
    if SAMPLES.resolve() not in target.parents and target != SAMPLES.resolve():
        return None
    candidates = (
        [target / "index.json", target / "index.xml"]
        if target.is_dir()
        else [target, target.with_name(target.name + ".json"), target.with_name(target.name + ".xml")]
    )
    return next((c for c in candidates if c.is_file()), None)


# A hook answers a request itself: (handler) -> True when it did.
Hook = Callable[[BaseHTTPRequestHandler], bool]


class Handler(BaseHTTPRequestHandler):
    hook: Hook | None = None
    # The path of every request, for tests that check what was asked.
    seen: list[str]
    # Maps a request (path and query) to the path of its sample; None: the path as it is.
    to_sample: Callable[[str], str] | None = None

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append(self.path)
        if self.hook is not None and self.hook(self):
            return
        path = self.to_sample(self.path) if self.to_sample else self.path
        found = sample_file(path)
        if found is None:
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error":"no sample"}')
            return
        body = found.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def sample_server(
    *, hook: Hook | None = None, to_sample: Callable[[str], str] | None = None, seen: list[str] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """Serve the samples on loopback; yields (base URL, the request paths seen)."""
    seen = [] if seen is None else seen
    handler = type(
        "BoundHandler",
        (Handler,),
        {
            "hook": staticmethod(hook) if hook else None,
            "seen": seen,
            "to_sample": staticmethod(to_sample) if to_sample else None,
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
