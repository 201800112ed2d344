"""CPU per request of the layers in front of Django, in-process and single-threaded
(`BENCH_ONLY=cpu make bench`, or `python -m a2a_service.scripts.bench.cpu [--profile NAME]`).

Throughput on a loaded machine says little; the CPU one request costs a process says much more
and is disturbed far less by other load. This builds the service's WSGI application in this
process (local settings, DEBUG off, PostgreSQL and Redis as `make bench` finds them), and calls
it with a synthetic environ, next to:

- the raw ceiling: a WSGI app that returns the same status, headers and body from constants
  (what granian serving fixed bytes of the same size asks of the application);
- the x402 FastAPI reference (reference.py) called as an ASGI app on the same event loop for
  every call (no server: its own middleware, routing and response), answering its unpaid 402.

Rounds alternate over the contenders; each figure is the median over rounds of the mean CPU
(time.process_time) per call in a round, and its wall time (perf_counter: for the credit call,
the database's round trip is in it). --profile challenge|free|credit|reference prints cProfile's
top functions for that contender."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import logging
import os
import pstats
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable, MutableMapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALLS = int(os.environ.get("BENCH_CPU_CALLS", "2000"))
ROUNDS = int(os.environ.get("BENCH_CPU_ROUNDS", "7"))
CHALLENGE = "/api/a2a/x402/payments/dual-rail-status"
CREDIT = CHALLENGE
FREE = "/api/a2a/news/catalog"
NEWS_ITEMS = 40


def environ_for(path: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Roughly what granian puts in the environ for one of wrk's requests."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    return environ


def wsgi_call(
    app: Callable, environ: dict[str, Any], *, copy: bool = True
) -> tuple[str, list[tuple[str, str]], bytes]:
    sent: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        sent.append((status, headers))

    result = app(dict(environ) if copy else environ, start_response)
    body = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    return sent[-1][0], sent[-1][1], body


def fixed_bytes_app(status: str, headers: list[tuple[str, str]], body: bytes) -> Callable:
    """The raw ceiling: the same answer from constants."""
    headers = list(headers)

    def app(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        start_response(status, headers)
        return [body]

    return app


def _setup(env: dict[str, str]) -> None:
    os.environ.update(env)
    from a2a_service.scripts.bench.servers import prepare

    prepare(env)


def _facilitator_stub(supported: bytes) -> str:
    """The reference middleware asks its facilitator /supported when it is created: a thread
    answers with our facilitator's own answer (nothing else is asked on the unpaid path)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(supported)))
            self.end_headers()
            self.wfile.write(supported)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def reference_caller(supported: bytes) -> tuple[Callable[[], tuple[int, bytes]], asyncio.AbstractEventLoop]:
    os.environ["FACILITATOR_URL"] = _facilitator_stub(supported)
    os.environ.setdefault("TREASURY_ADDRESS", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720")
    from a2a_service.scripts.bench.reference import app

    loop = asyncio.new_event_loop()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/paid",
        "raw_path": b"/paid",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8001")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8001),
    }

    async def one() -> tuple[int, bytes]:
        out: dict[str, Any] = {"body": b""}

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
            elif message["type"] == "http.response.body":
                out["body"] += message.get("body", b"")

        await app(dict(scope), receive, send)
        return out["status"], out["body"]

    def call() -> tuple[int, bytes]:
        return loop.run_until_complete(one())

    return call, loop


def _fixtures() -> str:
    """40 news items (the free catalog's size in `make bench`), and a funded key."""
    from billing.credits import credit_add
    from catalog.models import NewsItem
    from tests.support.wallets import register_wallet

    for n in range(max(NEWS_ITEMS - NewsItem.objects.count(), 0)):
        NewsItem.objects.create(
            title=f"Bench headline {n}: markets move on macro data",
            teaser="A two-sentence teaser of the item, as the catalog shows it to agents before they pay.",
            body="Full text.",
            category="crypto",
            source="bench",
        )
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=10**12, kind="adjustment", reason="bench cpu")
    return reg.api_key


def _wait_listening() -> None:
    from a2a_service.core.fastcache import FREE_LOCAL
    from billing.x402.fastpath import LOCAL

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if LOCAL._listening.is_set() and FREE_LOCAL._listening.is_set():
            return
        time.sleep(0.05)
    raise RuntimeError("the fast paths' copies did not subscribe to their channels")


def measure(
    contenders: dict[str, Callable[[], Any]], *, calls: int, rounds: int
) -> dict[str, dict[str, float]]:
    per: dict[str, dict[str, list[float]]] = {k: {"cpu": [], "wall": []} for k in contenders}
    for _ in range(rounds):
        for name, call in contenders.items():
            for _ in range(min(50, calls)):
                call()
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(calls):
                call()
            per[name]["cpu"].append((time.process_time() - c0) / calls * 1e6)
            per[name]["wall"].append((time.perf_counter() - w0) / calls * 1e6)
    return {k: {m: statistics.median(v[m]) for m in v} for k, v in per.items()}


def profile(call: Callable[[], Any], calls: int) -> None:
    prof = cProfile.Profile(time.process_time)  # CPU, not waiting on the database
    prof.enable()
    for _ in range(calls):
        call()
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(35)


def cpu_scenario(
    env: dict[str, str], *, profile_name: str = "", record: bool = True
) -> dict[str, dict[str, float]]:
    _setup(env)
    from a2a_service.scripts.bench.targets import ratio_record
    from a2a_service.wsgi import application

    key = _fixtures()
    unpaid, free, credit = environ_for(CHALLENGE), environ_for(FREE), environ_for(CREDIT, {"X-API-Key": key})
    # First calls: Django renders and stores; then wait for the copies to be in use.
    for environ in (unpaid, free, unpaid, free):
        wsgi_call(application, environ)
    _wait_listening()
    answers = {name: wsgi_call(application, e) for name, e in (("challenge", unpaid), ("free", free))}
    layers = {}
    for name, e in (("challenge", unpaid), ("free", free), ("credit", credit)):
        probe = dict(e)
        wsgi_call(application, probe, copy=False)  # the layer that answered marks the environ
        layers[name] = probe.get("a2a.layer", "django")
    status, _, supported = wsgi_call(application, environ_for("/api/a2a/facilitator/supported"))
    if not status.startswith("200"):
        raise RuntimeError(f"our facilitator's /supported answered {status}")
    ref_call, loop = reference_caller(supported)
    ref_status, ref_body = ref_call()
    if ref_status != 402:
        raise RuntimeError(f"the reference answered {ref_status}, not 402")
    raw_challenge = fixed_bytes_app(*answers["challenge"])
    raw_free = fixed_bytes_app(*answers["free"])
    contenders: dict[str, Callable[[], Any]] = {
        "raw (402 bytes)": lambda: wsgi_call(raw_challenge, unpaid),
        "challenge": lambda: wsgi_call(application, unpaid),
        "raw (catalog bytes)": lambda: wsgi_call(raw_free, free),
        "free": lambda: wsgi_call(application, free),
        "credit": lambda: wsgi_call(application, credit),
        "reference": ref_call,
    }
    if profile_name:
        profile(contenders[profile_name], CALLS)
        return {}
    print(
        f"\n== CPU per request, in-process, one thread ({CALLS} calls x {ROUNDS} alternating rounds; "
        f"402 {sum(len(n) + len(v) + 4 for n, v in answers['challenge'][1])} header bytes + "
        f"{len(answers['challenge'][2])} body bytes, catalog {len(answers['free'][2])} body bytes; "
        f"answered by: {layers})"
    )
    med = measure(contenders, calls=CALLS, rounds=ROUNDS)
    print(f"{'contender':<22}{'CPU us':>10}{'wall us':>10}")
    for name, m in med.items():
        print(f"{name:<22}{m['cpu']:>10.1f}{m['wall']:>10.1f}")
    loop.close()
    ratios = {
        "unpaid 402 challenge, raw ceiling / ours (app CPU per request)": (
            med["raw (402 bytes)"]["cpu"] / med["challenge"]["cpu"]
        ),
        "free catalog, raw ceiling / ours (app CPU per request)": (
            med["raw (catalog bytes)"]["cpu"] / med["free"]["cpu"]
        ),
        "credit call vs reference's unpaid 402 (reference CPU / ours)": (
            med["reference"]["cpu"] / med["credit"]["cpu"]
        ),
        "unpaid 402 vs reference's (reference CPU / ours)": med["reference"]["cpu"] / med["challenge"]["cpu"],
    }
    for label, value in ratios.items():
        if record and "credit" in label:
            ratio_record(label, value, target=1.0)
        else:
            print(f"{label}: {value:.2f}x")
    return med


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", choices=["challenge", "free", "credit", "reference"], default="")
    args = parser.parse_args()
    from a2a_service.scripts.bench.__main__ import ensure_postgres, ensure_redis
    from a2a_service.scripts.bench.servers import bench_env, stop
    from a2a_service.scripts.bench.targets import ratios_report

    env = bench_env()
    redis_proc = ensure_redis(env)
    ensure_postgres(env)
    try:
        cpu_scenario(env, profile_name=args.profile)
        return ratios_report()
    finally:
        if redis_proc is not None:
            # The service's Redis subscribers in this process would log the server's going away.
            logging.disable(logging.CRITICAL)
            stop(redis_proc)


if __name__ == "__main__":
    sys.exit(main())
