"""The RPC probe feed: the service's own measurements of JSON-RPC endpoints, for the RPC speed
index (/api/a2a/benchmarks/rpc) and the telemetry node map.

Endpoints: RPC_PROBE_URLS (`name|url` or `name|url|region|country`, comma-separated), the
service's own chain node when RPC_PROBE_OWN_CHAIN names it, and the enabled endpoints staff
add in the admin (an endpoint whose URL is already probed under another name is not probed
twice). Each pass keeps the RpcEndpoint rows of the setting in sync with it, then probes every
endpoint at once, each call bounded by RPC_PROBE_TIMEOUT_SECONDS:

- eth_blockNumber: the head, and the latency (one call as a client without a pooled connection
  sees it: DNS, TCP, TLS and the answer); a probe is ok when this call answered;
- eth_chainId, web3_clientVersion and the genesis block's hash (eth_getBlockByNumber 0x0),
  best effort (public endpoints often refuse web3_clientVersion);
- lag: the best head among the endpoints of the same network (chain id and genesis hash: a
  local chain may reuse a public chain's id) probed in this pass, minus this endpoint's head.

An endpoint that times out, refuses, answers garbage or a JSON-RPC error is a measurement
(ok=false with the error), not a failed pass. Each endpoint is also a TelemetryNode (node_id
its name, region/country from the setting or its row, version its client version, latency and
online from this probe, last_seen_at the probe's time).

Replay: each endpoint's stand-in is the replay server's /rpc_probe_urls/<name> (the endpoint's
own recorded answers in samples/rpc_probe_urls/<name>/, else the shared ones). In auto mode, a
live pass in which not a single endpoint answered raises the network error, so the runner
probes the replay stand-ins instead (logged, and noted on the source's FeedState)."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import requests
from django.conf import settings

from a2a_service.core.http import TargetRefused
from catalog.feeds.chain.parse import quantity
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.models import RpcEndpoint, RpcProbe, TelemetryNode

SOURCE = "rpc_probes"
REPLAY_KEY = "rpc_probe_urls"
ERROR_MAX_CHARS = 300
logger = logging.getLogger("catalog.feeds.rpcprobe")
# What an endpoint can do wrong, measured rather than raised: unreachable, refused by the
# outbound rules, timed out, a bad status, garbage, a JSON-RPC error.
PROBE_ERRORS: tuple[type[BaseException], ...] = (
    FeedError,
    requests.RequestException,
    TargetRefused,
    OSError,
    ValueError,
)


@dataclass(frozen=True, kw_only=True)
class EndpointConfig:
    name: str
    url: str
    region: str = ""
    country: str = ""


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


def _entry(fields: list[str], url: str) -> EndpointConfig | str:
    """An EndpointConfig from `name`, `region`, `country` and a URL, or why it is refused."""
    name = fields[0].strip()
    region = fields[1].strip() if len(fields) > 1 else ""
    country = fields[2].strip().upper() if len(fields) > 2 else ""
    if not name or len(name) > 120:
        return "a name of 1 to 120 characters is needed"
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname or len(url) > 500:
        return f"{url[:60]!r} is not an http(s) URL"
    if len(region) > 64:
        return "the region is longer than 64 characters"
    if country and (len(country) != 2 or not country.isalpha()):
        return f"{country[:10]!r} is not a two-letter country code"
    return EndpointConfig(name=name, url=url, region=region, country=country)


def endpoints_configured() -> tuple[list[EndpointConfig], list[str]]:
    """The endpoints the settings name (RPC_PROBE_URLS, then the own chain node), and the
    problems of the entries that were skipped."""
    found: list[EndpointConfig] = []
    problems: list[str] = []
    for raw in str(settings.RPC_PROBE_URLS).split(","):
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.split("|")]
        if len(fields) not in (2, 3, 4):
            problems.append(f"RPC_PROBE_URLS entry {raw.strip()[:60]!r} is not name|url[|region|country]")
            continue
        entry = _entry([fields[0], *fields[2:]], fields[1])
        if isinstance(entry, str):
            problems.append(f"RPC_PROBE_URLS entry {fields[0][:40]!r}: {entry}")
        else:
            found.append(entry)
    own = str(settings.RPC_PROBE_OWN_CHAIN).strip()
    if own:
        entry = _entry([f.strip() for f in own.split("|")], str(settings.CHAIN_RPC_URL))
        if isinstance(entry, str):
            problems.append(f"RPC_PROBE_OWN_CHAIN: {entry}")
        else:
            found.append(entry)
    unique: dict[str, EndpointConfig] = {}
    for entry in found:
        if entry.name in unique:
            problems.append(f"RPC probe endpoint {entry.name!r} is named twice; the first is kept")
            continue
        unique[entry.name] = entry
    return list(unique.values()), problems


def endpoints_sync(configured: list[EndpointConfig]) -> list[RpcEndpoint]:
    """Bring the setting's RpcEndpoint rows in line with it (a name the setting takes over
    becomes the setting's; one dropped from it is disabled; staff's affiliate links are kept),
    and return the endpoints to probe: the setting's in its order, then staff's enabled ones
    whose URL is not already among them."""
    rows = {r.name: r for r in RpcEndpoint.objects.filter(name__in=[c.name for c in configured])}
    probed: list[RpcEndpoint] = []
    for entry in configured:
        row = rows.get(entry.name) or RpcEndpoint(name=entry.name)
        wanted = {
            "url": entry.url,
            "region": entry.region,
            "country": entry.country,
            "origin": RpcEndpoint.Origin.SETTING,
            "enabled": True,
        }
        if row.pk is None or any(getattr(row, k) != v for k, v in wanted.items()):
            for key, value in wanted.items():
                setattr(row, key, value)
            row.save()
        probed.append(row)
    dropped = RpcEndpoint.objects.filter(origin=RpcEndpoint.Origin.SETTING, enabled=True).exclude(
        name__in=[c.name for c in configured]
    )
    for row in dropped:
        row.enabled = False
        row.save(update_fields=["enabled"])
        TelemetryNode.objects.filter(node_id=row.name, source=SOURCE).update(online=False)
    urls = {row.url for row in probed}
    for row in RpcEndpoint.objects.filter(enabled=True, origin=RpcEndpoint.Origin.STAFF).order_by("name"):
        if row.url not in urls:
            urls.add(row.url)
            probed.append(row)
    return probed


@dataclass(frozen=True, kw_only=True)
class Measurement:
    ok: bool
    latency_ms: float | None = None
    block_number: int | None = None
    chain_id: int | None = None
    client_version: str = ""
    genesis_hash: str = ""
    error: str = ""


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_MAX_CHARS]


def endpoint_probe(feed_pass: FeedPass, url: str, *, allow_private: bool) -> Measurement:
    """Probe one endpoint (runs on a worker thread: HTTP only, no database)."""
    timeout = settings.RPC_PROBE_TIMEOUT_SECONDS

    def call(method: str, params: list[Any] | None = None) -> Any:
        return feed_pass.rpc(url, method, params, timeout=timeout, allow_private=allow_private)

    started = time.perf_counter()
    try:
        head = quantity(call("eth_blockNumber"), what="eth_blockNumber")
    except PROBE_ERRORS as exc:
        return Measurement(ok=False, error=_reason(exc))
    latency_ms = round((time.perf_counter() - started) * 1000.0, 2)
    chain_id: int | None = None
    client_version = genesis_hash = ""
    try:
        chain_id = quantity(call("eth_chainId"), what="eth_chainId")
    except PROBE_ERRORS as exc:
        logger.info("rpc probe %s: eth_chainId: %s", url, _reason(exc))
    try:
        version = call("web3_clientVersion")
        client_version = version[:200] if isinstance(version, str) else ""
    except PROBE_ERRORS as exc:
        logger.info("rpc probe %s: web3_clientVersion: %s", url, _reason(exc))
    try:
        genesis = call("eth_getBlockByNumber", ["0x0", False])
        found = genesis.get("hash") if isinstance(genesis, dict) else None
        genesis_hash = found.lower()[:66] if isinstance(found, str) else ""
    except PROBE_ERRORS as exc:
        logger.info("rpc probe %s: genesis block: %s", url, _reason(exc))
    return Measurement(
        ok=True,
        latency_ms=latency_ms,
        block_number=head,
        chain_id=chain_id,
        client_version=client_version,
        genesis_hash=genesis_hash,
    )


def lags_compute(measurements: list[Measurement]) -> list[int | None]:
    """Each ok measurement's lag: the best head among the ok measurements of its network (chain
    id and genesis hash, either unknown counting as its own value) minus its head; None for a
    failed one."""
    best: dict[tuple[int | None, str], int] = {}
    for m in measurements:
        if m.ok and m.block_number is not None:
            key = (m.chain_id, m.genesis_hash)
            best[key] = max(best.get(key, m.block_number), m.block_number)
    return [
        best[(m.chain_id, m.genesis_hash)] - m.block_number if m.ok and m.block_number is not None else None
        for m in measurements
    ]


def _stand_in(feed_pass: FeedPass, endpoint: RpcEndpoint) -> str:
    return f"{feed_pass.replay_base(REPLAY_KEY)}/{quote(endpoint.name, safe='')}"


def run(feed_pass: FeedPass) -> int:
    configured, problems = endpoints_configured()
    for problem in problems:
        feed_pass.warn(problem)
    endpoints = endpoints_sync(configured)
    if not endpoints:
        feed_pass.warn("no RPC endpoint to probe (RPC_PROBE_URLS is empty and staff added none)")
        return 0
    own = _origin(str(settings.CHAIN_RPC_URL))
    targets = [
        (_stand_in(feed_pass, ep), False) if feed_pass.replay else (ep.url, _origin(ep.url) == own)
        for ep in endpoints
    ]
    workers = max(1, min(settings.RPC_PROBE_CONCURRENCY, len(targets)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rpc-probe") as pool:
        measurements = list(pool.map(lambda t: endpoint_probe(feed_pass, t[0], allow_private=t[1]), targets))
    if not feed_pass.replay and not any(m.ok for m in measurements) and settings.FEEDS_MODE == "auto":
        # Not one endpoint answered: this machine is offline. Auto mode probes the replay
        # stand-ins instead (the runner replays a pass that raised a network error).
        raise requests.ConnectionError(
            f"none of the {len(endpoints)} RPC endpoints answered (first: {measurements[0].error})"
        )
    lags = lags_compute(measurements)
    probed_at = feed_pass.started_at
    for endpoint, m, lag in zip(endpoints, measurements, lags, strict=True):
        RpcProbe.objects.create(
            endpoint=endpoint,
            ok=m.ok,
            latency_ms=m.latency_ms,
            block_number=m.block_number,
            lag_blocks=lag,
            chain_id=m.chain_id,
            client_version=m.client_version,
            error=m.error,
            replay=feed_pass.replay,
            probed_at=probed_at,
        )
        TelemetryNode.objects.update_or_create(
            node_id=endpoint.name,
            defaults={
                "region": endpoint.region,
                "country": endpoint.country,
                "version": m.client_version[:64],
                "latency_ms": m.latency_ms,
                "online": m.ok,
                "last_seen_at": probed_at,
                "source": SOURCE,
                "replay": feed_pass.replay,
            },
        )
    return len(measurements)


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=60,
        description="the service's own probes of JSON-RPC endpoints (latency, head, lag, client version)",
        url_settings=("RPC_PROBE_URLS",),
    )
)
