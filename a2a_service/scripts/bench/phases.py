"""Where one `exact` paid call's time goes (`BENCH_ONLY=phases make bench`), beside the
reference stack's whole call in the same run (issue 27 item 2).

The service runs in this process (local settings, DEBUG off, in-process facilitator, as
`make run` settles; one request at a time behind wsgiref), so its steps can be timed from
inside: the reads before the payment is checked (the SKU on sale, the proof's earlier
payment), the claim (the durable row that makes a proof usable once, committed before
anything is settled), the facilitator's verify and settle (the SDK's scheme: requests to the
chain and web3's work around them), and the settlement's durable record. The SDK's official
client pays each call on the local chain; calls alternate with the same client paying the
reference stack (the SDK's FastAPI middleware and the SDK's facilitator, schemes.py), which
keeps no record of what it was paid.

What it prints is how much of our call is the chain's work that both stacks do, and how much
is the bookkeeping only ours does (the money rules: a proof used once, every settlement
recorded before the answer), to read the ≤ 0.8x target against."""

from __future__ import annotations

import logging
import os
import statistics
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

CALLS = int(os.environ.get("BENCH_PHASE_CALLS", "100"))

# (module, function, label, kind): what is timed, as the paid call looks it up.
TIMED = (
    ("billing.paid_call", "sku_on_sale", "read: the SKU on sale", "bookkeeping"),
    ("billing.rails.x402", "x402_payment_of", "read: the proof's earlier payment", "bookkeeping"),
    ("billing.rails.x402", "payment_claim", "write: the claim (committed)", "bookkeeping"),
    ("billing.rails.x402", "payment_settle", "write: the settlement's record (committed)", "bookkeeping"),
    ("billing.rails.x402", "facilitator_verify", "chain: the facilitator's verify", "chain"),
    ("billing.rails.x402", "facilitator_settle", "chain: the facilitator's settle", "chain"),
)


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def _time(times: dict[str, list[float]], label: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            times[label].append((time.perf_counter() - started) * 1000)

    return timed


def phases_scenario(env: dict[str, str]) -> None:
    import importlib

    from a2a_service.scripts.bench.schemes import PATH, Agent, reference_stack
    from a2a_service.scripts.bench.servers import free_port, prepare, stop
    from billing.chain.localchain import FACILITATOR, anvil_start, dev_account, rpc_wait, stack_install

    chain_port = free_port()
    procs: list[subprocess.Popen] = [anvil_start(port=chain_port)]
    try:
        rpc = f"http://127.0.0.1:{chain_port}"
        stack_install(rpc_wait(rpc), usdc_address="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
        env = {
            **env,
            "CHAIN_RPC_URL": rpc,
            "FACILITATOR_URL": "",  # in process, as `make run` settles
            "FACILITATOR_PRIVATE_KEY": "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x"),
            "TREASURY_ADDRESS": "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
        }
        os.environ.update(env)
        prepare(env)
        import django

        django.setup()
        logging.disable(logging.INFO)  # the money events' lines: on a terminal they cost more than a file
        from a2a_service.wsgi import application

        times: dict[str, list[float]] = defaultdict(list)
        for module_name, name, label, _kind in TIMED:
            module = importlib.import_module(module_name)
            setattr(module, name, _time(times, label, getattr(module, name)))

        def served(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            started = time.perf_counter()
            try:
                return application(environ, start_response)
            finally:
                if environ.get("HTTP_PAYMENT_SIGNATURE"):
                    times["the paid request, in the server"].append((time.perf_counter() - started) * 1000)

        port = free_port()
        server = make_server("127.0.0.1", port, served, handler_class=_Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        reference = reference_stack(env, rpc, procs)
        from eth_account import Account

        agent = Agent(url=f"http://127.0.0.1:{port}{PATH}", rpc=rpc, wallet_key=Account.create().key.hex(), api_key="")
        for _ in range(5):
            agent.call_exact()
            agent.call_exact_reference(reference)
        times.clear()
        ours, theirs = [], []
        for _ in range(CALLS):
            ours.append(agent.call_exact())
            theirs.append(agent.call_exact_reference(reference))
        server.shutdown()
        _report(times, statistics.median(ours), statistics.median(theirs))
    finally:
        for proc in reversed(procs):
            stop(proc)


def _report(times: dict[str, list[float]], ours: float, theirs: float) -> None:
    p50 = {label: statistics.median(values) for label, values in times.items()}
    print(
        f"\n== one exact paid call, its steps (in process behind wsgiref, p50 of {CALLS} calls "
        "alternating with the reference stack's)"
    )
    print(f"  the paid request, client-timed: ours {ours:.2f} ms, the reference stack {theirs:.2f} ms ({ours / theirs:.2f}x)")
    server = p50.pop("the paid request, in the server")
    print(f"  the paid request, in the server: {server:.2f} ms")
    share = {"bookkeeping": 0.0, "chain": 0.0}
    for _module, _name, label, kind in TIMED:
        print(f"    {label:46} {p50[label]:6.2f} ms")
        share[kind] += p50[label]
    rest = server - share["bookkeeping"] - share["chain"]
    print(f"    {'the rest (Django, the proof check, the product)':46} {rest:6.2f} ms")
    print(
        f"  the chain's work (both stacks do it): {share['chain']:.2f} ms; our durable bookkeeping (the reference "
        f"keeps none): {share['bookkeeping']:.2f} ms. 0.8x of the reference is {0.8 * theirs:.2f} ms; ours with "
        f"no bookkeeping at all would be about {ours - share['bookkeeping']:.2f} ms "
        f"({(ours - share['bookkeeping']) / theirs:.2f}x)"
    )
