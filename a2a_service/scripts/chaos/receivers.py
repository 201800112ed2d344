"""Webhook receivers on loopback: one that answers at once, one slow (it answers after a delay,
inside the service's timeout), one failing (always 500: its deliveries end dead-lettered and
refunded). Each records the webhook-ids it was sent and when they arrived."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KINDS = ("ok", "slow", "fail")


class Receiver:
    def __init__(self, kind: str, port: int, slow_seconds: float = 2.0) -> None:
        self.kind = kind
        self.port = port
        self.url = f"http://127.0.0.1:{port}/hook/{kind}"
        self.arrivals: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrived = time.time()
                lag = None
                try:
                    created = datetime.fromisoformat(json.loads(body)["created_at"]).timestamp()
                    lag = (arrived - created) * 1000
                except (ValueError, KeyError, TypeError):
                    pass
                with receiver._lock:
                    receiver.arrivals.append(
                        {"id": self.headers.get("webhook-id", ""), "t": arrived, "lag_ms": lag}
                    )
                if receiver.kind == "slow":
                    time.sleep(slow_seconds)
                status = 500 if receiver.kind == "fail" else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name=f"hook-{kind}", daemon=True).start()

    def ids(self) -> set[str]:
        with self._lock:
            return {a["id"] for a in self.arrivals}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
