"""The benchmark's reference server: the `x402` package's own FastAPI middleware guarding one
paid route, as its documentation sets it up. Run by `make bench` under uvicorn with the
same facilitator, network, asset and treasury as the service. It also serves one free JSON
document from a route (the body of the service's free news catalog, which the bench saves to
BENCH_FREE_JSON), to compare a free read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fastapi import FastAPI
from x402 import x402ResourceServer
from x402.http import FacilitatorConfig, HTTPFacilitatorClient
from x402.http.middleware.fastapi import payment_middleware
from x402.mechanisms.evm.exact.register import register_exact_evm_server

server = register_exact_evm_server(
    x402ResourceServer(HTTPFacilitatorClient(FacilitatorConfig(url=os.environ["FACILITATOR_URL"]))),
    networks=os.environ.get("X402_NETWORK", "eip155:8453"),
)
routes = {
    "GET /paid": {
        "accepts": {
            "scheme": "exact",
            "payTo": os.environ["TREASURY_ADDRESS"],
            "price": "$0.08",
            "network": os.environ.get("X402_NETWORK", "eip155:8453"),
        },
        "description": "one paid route",
        "mimeType": "application/json",
    }
}
app = FastAPI()
# x402 parses the dict form of a route config at runtime; its hint names only the RouteConfig class.
_middleware = payment_middleware(routes, server)  # type: ignore[arg-type]


@app.middleware("http")
async def x402_middleware(request, call_next):
    return await _middleware(request, call_next)


@app.get("/paid")
async def paid() -> dict:
    return {"content": "paid content"}


# The same document as the service's (same items, same size), rendered by FastAPI per request
# as a minimal route does.
_free_document = (
    json.loads(Path(os.environ["BENCH_FREE_JSON"]).read_text()) if os.environ.get("BENCH_FREE_JSON") else {}
)


@app.get("/free")
async def free() -> dict:
    return _free_document


# The same route in a bare FastAPI app (no x402 middleware): the floor of a minimal route.
plain_app = FastAPI()
plain_app.get("/free")(free)
