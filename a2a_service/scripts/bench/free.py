"""Free reads: the free news catalog against the x402 FastAPI reference app, and the same
Django endpoint under granian and gunicorn (the web server)."""

from __future__ import annotations

import json
import statistics
import urllib.request

from a2a_service.scripts.bench.servers import (
    CONNECTIONS,
    DURATION,
    ROOT,
    ROUNDS,
    WORKERS,
    free_port,
    manage_shell,
    print_table,
    raw_ceiling,
    run_wrk,
    start,
    stop,
    wait_ready,
)
from a2a_service.scripts.bench.targets import ratio_record

NEWS_ITEMS = 40


def free_news_scenario(env: dict[str, str]) -> None:
    """The free news catalog with 40 items: this service (granian, the free document served
    in front of Django) against the x402 FastAPI reference app (uvicorn) serving the same JSON
    document from a route, same worker count, both up while wrk rounds alternate."""
    manage_shell(
        "from catalog.models import NewsItem\n"
        f"missing = {NEWS_ITEMS} - NewsItem.objects.count()\n"
        "for n in range(max(missing, 0)):\n"
        "    NewsItem.objects.create(title=f'Bench headline {n}: markets move on macro data',"
        " teaser='A two-sentence teaser of the item, as the catalog shows it to agents before they pay.',"
        " body='Full text.', category='crypto', source='bench')\n"
        "print(NewsItem.objects.count())",
        env,
    )
    ours_port, ref_port = free_port(), free_port()
    doc = ROOT / ".run" / "bench" / "free_news_catalog.json"
    env = {
        **env,
        # The reference app's x402 middleware needs these to start; the free route never pays.
        "FACILITATOR_URL": env.get("FACILITATOR_URL", "http://127.0.0.1:9/facilitator"),
        "TREASURY_ADDRESS": env.get("TREASURY_ADDRESS", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"),
        "BENCH_FREE_JSON": str(doc),
    }
    plain_port = free_port()
    procs = [start("granian", ours_port, env)]
    try:
        ours = f"http://127.0.0.1:{ours_port}/api/a2a/news/catalog"
        wait_ready(ours)
        with urllib.request.urlopen(ours, timeout=10) as r:
            body = r.read()
        items = len(json.loads(body)["items"])
        doc.write_bytes(body)
        procs.append(start("x402-fastapi", ref_port, env))
        ref = f"http://127.0.0.1:{ref_port}/free"
        wait_ready(ref)
        with urllib.request.urlopen(ref, timeout=10) as r:
            ref_size = len(r.read())
        # Also without the x402 middleware (which the reference app runs on every route).
        procs.append(start("fastapi-plain", plain_port, env))
        plain = f"http://127.0.0.1:{plain_port}/free"
        wait_ready(plain)
        # The raw-WSGI ceiling (issue 27 item 3): granian serving our catalog's bytes from constants.
        raw_proc, raw = raw_ceiling(ours, env, "free-catalog", status=200)
        procs.append(raw_proc)
        print(f"\nfree news catalog: {items} items, {len(body)} bytes (reference route: {ref_size} bytes)")
        contenders = (
            ("granian (ours)", ours),
            ("x402-fastapi", ref),
            ("fastapi (no middleware)", plain),
            ("granian (fixed bytes)", raw),
        )
        results: dict[str, list[dict[str, float]]] = {kind: [] for kind, _ in contenders}
        for _ in range(ROUNDS):
            for kind, url in contenders:
                run_wrk(url)  # warm-up
                results[kind].append(run_wrk(url))
        med = print_table(
            "free news catalog",
            results,
            f"  ({WORKERS} worker processes each, wrk -c{CONNECTIONS} -d{DURATION}s, "
            f"median of {ROUNDS} alternating rounds)",
        )
        ratio = med["granian (ours)"]["rps"] / med["x402-fastapi"]["rps"]
        ratio_record("free news catalog, ours / x402 reference req/s", ratio, target=1.0)
        ceiling = med["granian (ours)"]["rps"] / med["granian (fixed bytes)"]["rps"]
        ratio_record("free news catalog, ours / granian serving its bytes req/s", ceiling, target=0.85)
        plain_ratio = med["granian (ours)"]["rps"] / med["fastapi (no middleware)"]["rps"]
        print(f"ratio ours/bare FastAPI route req/s: {plain_ratio:.2f}x")
    finally:
        for proc in reversed(procs):
            stop(proc)


def scenario(name: str, path: str, contenders: list[str], env: dict[str, str]) -> None:
    results: dict[str, list[dict[str, float]]] = {c: [] for c in contenders}
    for _ in range(ROUNDS):
        for kind in contenders:
            port = free_port()
            proc = start(kind, port, env)
            try:
                url = f"http://127.0.0.1:{port}{path}"
                wait_ready(url)
                run_wrk(url)  # warm-up, not counted
                results[kind].append(run_wrk(url))
            finally:
                stop(proc)
    print(
        f"\n== {name}: GET {path}  ({WORKERS} worker processes each, wrk -c{CONNECTIONS} -d{DURATION}s, "
        f"median of {ROUNDS} alternating rounds)"
    )
    print(f"{'server':<12}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>10}")
    med = {}
    for kind, runs in results.items():
        med[kind] = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "non2xx")}
        m = med[kind]
        print(f"{kind:<12}{m['rps']:>10.0f}{m['p50']:>10.2f}{m['p99']:>10.2f}{m['non2xx']:>10.0f}")
    ours, ref = contenders
    print(f"ratio {ours}/{ref} req/s: {med[ours]['rps'] / med[ref]['rps']:.2f}x")
