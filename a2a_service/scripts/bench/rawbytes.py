"""The raw-WSGI ceiling of `make bench`: a WSGI app that answers every request with fixed bytes
(the status, headers and body of one of the service's answers, saved by the bench in the file
named by BENCH_RAW_ANSWER), served by granian with the same workers as the service. What is
left between it and the service's fast paths is what they spend per request (issue 27 item 3).
It imports nothing of the service (no Django)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# Set by the server, not by the app: granian writes its own.
SERVER_HEADERS = frozenset({"date", "server", "connection", "keep-alive", "transfer-encoding"})


def answer_save(path: Path, status: str, headers: list[tuple[str, str]], body: bytes) -> None:
    kept = [(n, v) for n, v in headers if n.lower() not in SERVER_HEADERS]
    path.write_text(json.dumps({"status": status, "headers": kept, "body": base64.b64encode(body).decode()}))


def _load() -> tuple[str, list[tuple[str, str]], bytes]:
    saved = json.loads(Path(os.environ["BENCH_RAW_ANSWER"]).read_text())
    return saved["status"], [(str(n), str(v)) for n, v in saved["headers"]], base64.b64decode(saved["body"])


STATUS, HEADERS, BODY = _load() if os.environ.get("BENCH_RAW_ANSWER") else ("200 OK", [], b"")


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response(STATUS, HEADERS)
    return [BODY]
