"""A scripted JSON-RPC endpoint on loopback for the chain and probe tests: each method answers
what the test set (a result, a JSON-RPC error, or a raw HTTP answer: a status, a body, a delay,
headers), wrapped with the request's id; unset methods answer -32601 as a node does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Raw:
    """An HTTP answer as is (not wrapped): for broken endpoints."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Result:
    value: Any
    delay: float = 0.0


@dataclass
class Error:
    code: int
    message: str


Answer = Raw | Result | Error | Callable[[list[Any]], "Raw | Result | Error"]


class RpcStub:
    def __init__(self) -> None:
        self.methods: dict[str, Answer] = {}
        self.calls: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    request = json.loads(body)
                except ValueError:
                    request = {}
                method = request.get("method", "")
                stub.calls.append(method)
                answer = stub.methods.get(method, Error(-32601, "Method not found"))
                if callable(answer) and not isinstance(answer, Raw | Result | Error):
                    answer = answer(request.get("params") or [])
                delay = getattr(answer, "delay", 0.0)
                if delay:
                    time.sleep(delay)
                status, headers = 200, {"Content-Type": "application/json"}
                if isinstance(answer, Raw):
                    status, data = answer.status, answer.body
                    headers.update(answer.headers)
                elif isinstance(answer, Result):
                    data = json.dumps(
                        {"jsonrpc": "2.0", "id": request.get("id"), "result": answer.value}
                    ).encode()
                else:
                    error = {"code": answer.code, "message": answer.message}
                    data = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error}).encode()
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def node(
        self, *, head: int, chain_id: int = 8453, version: str = "stub/v1", genesis: str = "0x" + "11" * 32
    ):
        """Answer like a healthy node at `head`."""
        self.methods.update(
            eth_blockNumber=Result(hex(head)),
            eth_chainId=Result(hex(chain_id)),
            web3_clientVersion=Result(version),
            eth_getBlockByNumber=Result({"number": "0x0", "hash": genesis}),
        )
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
