"""The local replay server: serves the recorded samples of catalog/feeds/samples/ so that the
adapters run end to end with no internet (`make run` starts it; FEEDS_MODE replay or auto).

GET /<key>/<path> serves samples/<key>/<path> (the query string is ignored). A directory
serves its index.json (or index.xml); a missing file is tried as <path>.json, then <path>.xml.
Content types: .json application/json, .xml application/atom+xml or application/rss+xml by
its root element, .ics text/calendar. Anything outside the samples folder is 404.

POST /<key>/<path> with a JSON-RPC 2.0 request (one object; batches are not served) answers
the recorded `result` (or `error`) of samples/<key>/<path>/<method>.json, trying each parent
folder up to samples/<key>/<method>.json (so one stand-in can serve several endpoints, and an
endpoint may have answers of its own), wrapped with the request's id. A method with no sample
answers JSON-RPC error -32601, as a node does.

Standalone: python -m catalog.feeds.replay [--host 127.0.0.1] [--port 8765]."""

from __future__ import annotations

import argparse
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

SAMPLES = Path(__file__).resolve().parent / "samples"
# A JSON-RPC request is a method name and a few parameters: anything larger is not one.
RPC_MAX_REQUEST_BYTES = 64 * 1024
logger = logging.getLogger("catalog.feeds.replay")


def sample_path(request_path: str, root: Path = SAMPLES) -> Path | None:
    """The sample file a request path names, by the rule above, or None."""
    parts = [p for p in unquote(urlsplit(request_path).path).split("/") if p]
    if not parts or any(p in (".", "..") or "\\" in p for p in parts):
        return None
    root = root.resolve()
    target = root.joinpath(*parts)
    candidates = [target]
    if target.is_dir():
        candidates = [target / "index.json", target / "index.xml"]
    else:
        candidates += [target.with_name(target.name + ".json"), target.with_name(target.name + ".xml")]
    for candidate in candidates:
        resolved = candidate.resolve()
        if resolved.is_file() and resolved.is_relative_to(root):
            return resolved
    return None


def rpc_sample_path(request_path: str, method: str, root: Path = SAMPLES) -> Path | None:
    """The recorded answer to `method` for a request path, by the POST rule above, or None."""
    parts = [p for p in unquote(urlsplit(request_path).path).split("/") if p]
    if not parts or any(p in (".", "..") or "\\" in p for p in parts):
        return None
    if not method or "/" in method or "\\" in method or method.startswith("."):
        return None
    root = root.resolve()
    for depth in range(len(parts), 0, -1):
        resolved = root.joinpath(*parts[:depth], f"{method}.json").resolve()
        if resolved.is_file() and resolved.is_relative_to(root):
            return resolved
    return None


def rpc_answer(request_path: str, body: bytes, root: Path = SAMPLES) -> dict[str, object]:
    """The JSON-RPC answer to one request body (always an answer object, as a node gives)."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    answer: dict[str, object] = {"jsonrpc": "2.0", "id": request.get("id")}
    path = rpc_sample_path(request_path, request["method"], root)
    recorded = None
    if path is not None:
        try:
            recorded = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError):
            recorded = None
    if isinstance(recorded, dict) and "error" in recorded:
        answer["error"] = recorded["error"]
    elif isinstance(recorded, dict) and "result" in recorded:
        answer["result"] = recorded["result"]
    else:
        answer["error"] = {"code": -32601, "message": "Method not found"}
    return answer


def content_type(path: Path, body: bytes) -> str:
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "application/json"
    if suffix == ".ics":
        return "text/calendar; charset=utf-8"
    if suffix == ".xml":
        head = body[:2048].decode("utf-8", "replace")
        if "<feed" in head and "http://www.w3.org/2005/Atom" in head and "<rss" not in head:
            return "application/atom+xml; charset=utf-8"
        return "application/rss+xml; charset=utf-8"
    return "application/octet-stream"


class ReplayHandler(BaseHTTPRequestHandler):
    server_version = "a2a-feeds-replay/1.0"
    root: Path = SAMPLES

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = sample_path(self.path, self.root)
        if path is None:
            body = b'{"error": "no recorded sample for this path"}'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
        else:
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", content_type(path, body))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= RPC_MAX_REQUEST_BYTES:
            status, body = 400, b'{"error": "a JSON-RPC request needs a body of a sane length"}'
        else:
            status, body = 200, json.dumps(rpc_answer(self.path, self.rfile.read(length), self.root)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        logger.debug("replay: " + format, *args)


def replay_server(*, host: str = "127.0.0.1", port: int = 8765, root: Path = SAMPLES) -> ThreadingHTTPServer:
    handler = type("Handler", (ReplayHandler,), {"root": root})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def replay_start(*, host: str = "127.0.0.1", port: int = 8765, root: Path = SAMPLES) -> ThreadingHTTPServer:
    """Serve in a daemon thread; stop with server.shutdown(); server.server_close()."""
    server = replay_server(host=host, port=port, root=root)
    threading.Thread(target=server.serve_forever, name="feeds-replay", daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = replay_server(host=args.host, port=args.port)
    print(f"feeds replay server on http://{args.host}:{args.port}/ serving {SAMPLES}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
