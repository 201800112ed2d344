"""The RPC probe feed (catalog/feeds/rpcprobe): the endpoints of the setting (parsed, kept in
sync with their rows) and of staff; probes against a real local node (anvil) and scripted
endpoints (slow, broken, erroring, ahead, another network); the lag per network; failures are
measurements, not failed passes; replay and auto mode; the telemetry nodes they keep."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

import catalog.feeds.rpcprobe as rpcprobe
from catalog.feeds.registry import FeedPass
from catalog.feeds.replay import replay_start
from catalog.feeds.rpcprobe import (
    EndpointConfig,
    Measurement,
    endpoints_configured,
    endpoints_sync,
    lags_compute,
)
from catalog.feeds.runner import feed_run
from catalog.models import RpcEndpoint, RpcProbe, TelemetryNode
from tests.support.feedserver import closed_port
from tests.support.rpcstub import Error, Raw, Result, RpcStub

pytestmark = pytest.mark.django_db


@pytest.fixture
def replay(settings):
    server = replay_start(port=0)
    settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def stubs(settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True  # scripted endpoints live on loopback
    settings.RPC_PROBE_TIMEOUT_SECONDS = 0.5
    settings.RPC_PROBE_OWN_CHAIN = ""
    made: list[RpcStub] = []

    def make() -> RpcStub:
        made.append(RpcStub())
        return made[-1]

    yield make
    for stub in made:
        stub.close()


def probes() -> dict[str, RpcProbe]:
    return {p.endpoint.name: p for p in RpcProbe.objects.select_related("endpoint")}


# --- the endpoints ------------------------------------------------------------------------------
def test_the_setting_is_parsed_with_regions_and_the_own_chain(settings):
    settings.RPC_PROBE_URLS = (
        "a|https://a.example.com, b|https://b.example.com/rpc|eu-west|de,"
        " bad-entry, c|ftp://c.example.com, d|https://d.example.com|eu|Germany, a|https://dup.example.com,"
    )
    settings.RPC_PROBE_OWN_CHAIN = "own|local"
    settings.CHAIN_RPC_URL = "http://127.0.0.1:8545"
    found, problems = endpoints_configured()
    assert found == [
        EndpointConfig(name="a", url="https://a.example.com"),
        EndpointConfig(name="b", url="https://b.example.com/rpc", region="eu-west", country="DE"),
        EndpointConfig(name="own", url="http://127.0.0.1:8545", region="local"),
    ]
    assert len(problems) == 4
    assert any("bad-entry" in p for p in problems) and any("ftp" in p for p in problems)
    assert any("two-letter" in p for p in problems) and any("named twice" in p for p in problems)


def test_the_default_setting_names_public_base_endpoints(settings):
    found, problems = endpoints_configured()
    assert problems == [] and len(found) >= 3
    assert all(e.url.startswith("https://") for e in found)


def test_rows_follow_the_setting_and_staff_rows_are_left_alone(settings):
    staff = RpcEndpoint.objects.create(name="staff-node", url="https://staff.example.com", region="us")
    twin = RpcEndpoint.objects.create(name="staff-twin", url="https://a.example.com")  # same URL as "a"
    off = RpcEndpoint.objects.create(name="staff-off", url="https://off.example.com", enabled=False)
    taken = RpcEndpoint.objects.create(
        name="b", url="https://old.example.com", affiliate_url="https://ref.example.com"
    )
    first = [
        EndpointConfig(name="a", url="https://a.example.com"),
        EndpointConfig(name="b", url="https://b.example.com", region="eu", country="DE"),
    ]
    probed = endpoints_sync(first)
    assert [e.name for e in probed] == ["a", "b", "staff-node"]  # the twin's URL is probed as "a"
    b = RpcEndpoint.objects.get(name="b")
    assert (b.url, b.region, b.country, b.origin, b.affiliate_url) == (
        "https://b.example.com",
        "eu",
        "DE",
        "setting",
        "https://ref.example.com",
    )
    TelemetryNode.objects.create(node_id="a", source="rpc_probes", online=True)
    probed = endpoints_sync(
        [EndpointConfig(name="b", url="https://b.example.com", region="eu", country="DE")]
    )
    assert [e.name for e in probed] == ["b", "staff-node", "staff-twin"]
    assert RpcEndpoint.objects.get(name="a").enabled is False  # dropped from the setting
    assert TelemetryNode.objects.get(node_id="a").online is False
    for row in (staff, twin, off):
        fresh = RpcEndpoint.objects.get(pk=row.pk)
        assert (fresh.enabled, fresh.origin, fresh.url) == (row.enabled, "staff", row.url)
    assert taken.pk == b.pk


def test_lag_is_the_best_head_of_the_same_network_minus_this_one():
    a, b = ("0x" + "aa" * 32), ("0x" + "bb" * 32)
    ms = [
        Measurement(ok=True, block_number=100, chain_id=8453, genesis_hash=a),
        Measurement(ok=True, block_number=97, chain_id=8453, genesis_hash=a),
        Measurement(ok=False, error="Timeout"),
        Measurement(ok=True, block_number=12, chain_id=8453, genesis_hash=b),  # same id, another chain
        Measurement(ok=True, block_number=50, chain_id=1, genesis_hash=a),
        Measurement(ok=True, block_number=105, chain_id=8453, genesis_hash=a),
    ]
    assert lags_compute(ms) == [5, 8, None, 0, 0, 0]


# --- probing ------------------------------------------------------------------------------------
def test_a_pass_probes_real_and_broken_endpoints_and_measures_each(chain, stubs, settings):
    """anvil (a real node), one endpoint ahead of it on the same network, one on another
    network, a slow one, one answering 500, one answering garbage, one erroring, one refusing
    the connection: every one is a measurement; the pass succeeds."""
    genesis = chain.w3.eth.get_block(0)["hash"].hex()
    genesis = genesis if genesis.startswith("0x") else "0x" + genesis
    head = chain.w3.eth.block_number
    ahead = stubs().node(head=head + 5, genesis=genesis, version="ahead/v2")
    other = stubs().node(head=7, genesis="0x" + "cd" * 32)
    slow = stubs().node(head=head)
    slow.methods["eth_blockNumber"] = Result(hex(head), delay=2.0)
    broken = stubs()
    broken.methods["eth_blockNumber"] = Raw(status=500, body=b"oops")
    garbage = stubs()
    garbage.methods["eth_blockNumber"] = Raw(body=b"<html>")
    erroring = stubs()
    erroring.methods["eth_blockNumber"] = Error(-32005, "rate limited")
    no_version = stubs().node(head=head + 5, genesis=genesis)
    no_version.methods["web3_clientVersion"] = Error(-32601, "Method not found")
    settings.RPC_PROBE_URLS = ",".join(
        [
            f"anvil|{chain.url}|local|",
            f"ahead|{ahead.url}|eu|DE",
            f"other|{other.url}",
            f"slow|{slow.url}",
            f"broken|{broken.url}",
            f"garbage|{garbage.url}",
            f"erroring|{erroring.url}",
            f"no-version|{no_version.url}",
            f"closed|http://127.0.0.1:{closed_port()}",
        ]
    )
    started = timezone.now()
    state = feed_run(name="rpc_probes", mode="live")
    assert state.outcome == "ok" and state.rows_written == 9, state.last_error
    got = probes()
    anvil = got["anvil"]
    assert anvil.ok and anvil.block_number == head and anvil.lag_blocks == 5
    assert anvil.chain_id == chain.w3.eth.chain_id and anvil.client_version.startswith("anvil/")
    assert 0 < anvil.latency_ms < 500 and anvil.error == "" and anvil.replay is False
    assert (got["ahead"].lag_blocks, got["ahead"].client_version) == (0, "ahead/v2")
    assert (got["other"].lag_blocks, got["other"].block_number) == (0, 7)  # its own network
    assert (
        got["no-version"].ok and got["no-version"].client_version == "" and got["no-version"].lag_blocks == 0
    )
    for name, reason in [
        ("slow", "deadline"),
        ("broken", "answered 500"),
        ("garbage", "not JSON"),
        ("erroring", "rate limited"),
        ("closed", "ConnectionError"),
    ]:
        probe = got[name]
        assert not probe.ok and reason in probe.error, (name, probe.error)
        assert probe.latency_ms is None and probe.block_number is None and probe.lag_blocks is None
    assert all(p.probed_at >= started for p in got.values())

    nodes = {n.node_id: n for n in TelemetryNode.objects.all()}
    assert set(nodes) == set(got)
    assert (
        nodes["anvil"].online
        and nodes["anvil"].version.startswith("anvil/")
        and nodes["anvil"].region == "local"
    )
    assert (nodes["ahead"].region, nodes["ahead"].country, nodes["ahead"].latency_ms) == (
        "eu",
        "DE",
        got["ahead"].latency_ms,
    )
    assert not nodes["slow"].online and nodes["slow"].latency_ms is None
    assert {n.source for n in nodes.values()} == {"rpc_probes"}

    # Probes concurrently: nine endpoints, one of them slow, in about one timeout, not the sum.
    assert state.last_duration_ms < 4000
    # A second pass adds a probe per endpoint and updates the nodes in place.
    assert feed_run(name="rpc_probes", mode="live", force=True).outcome == "ok"
    assert RpcProbe.objects.count() == 18 and TelemetryNode.objects.count() == 9


def test_the_own_chain_node_is_probed_though_private(chain, settings):
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    settings.CHAIN_RPC_URL = chain.url
    settings.RPC_PROBE_OWN_CHAIN = "local-anvil|local"
    settings.RPC_PROBE_URLS = f"not-mine|http://127.0.0.1:{closed_port()}"  # a private URL of anyone else
    state = feed_run(name="rpc_probes", mode="live")
    assert state.outcome == "ok"
    got = probes()
    assert got["local-anvil"].ok and got["local-anvil"].client_version.startswith("anvil/")
    assert not got["not-mine"].ok and "non-public" in got["not-mine"].error


def test_live_mode_records_every_endpoint_down_as_measurements(stubs, settings):
    settings.FEEDS_MODE = "live"
    settings.RPC_PROBE_URLS = f"x|http://127.0.0.1:{closed_port()},y|http://127.0.0.1:{closed_port()}"
    state = feed_run(name="rpc_probes", mode="live")
    assert state.outcome == "ok" and state.rows_written == 2
    assert [p.ok for p in RpcProbe.objects.all()] == [False, False]
    assert TelemetryNode.objects.filter(online=False).count() == 2


def test_auto_mode_falls_back_to_the_replay_when_no_endpoint_answers(stubs, replay, settings):
    settings.FEEDS_MODE = "auto"
    settings.RPC_PROBE_URLS = (
        f"base-official|http://127.0.0.1:{closed_port()},llamarpc|http://127.0.0.1:{closed_port()}"
    )
    state = feed_run(name="rpc_probes", mode="auto")
    assert state.outcome == "ok" and state.last_replay is True
    assert "live unreachable" in state.last_note and "none of the 2 RPC endpoints answered" in state.last_note
    got = probes()
    assert RpcProbe.objects.count() == 2  # the failed live attempt wrote nothing
    assert got["base-official"].ok and got["base-official"].replay and got["llamarpc"].lag_blocks == 3
    assert set(TelemetryNode.objects.values_list("replay", "online")) == {(True, True)}


def test_auto_mode_with_one_endpoint_answering_stays_live(stubs, settings):
    settings.FEEDS_MODE = "auto"
    up = stubs().node(head=10)
    settings.RPC_PROBE_URLS = f"up|{up.url},down|http://127.0.0.1:{closed_port()}"
    state = feed_run(name="rpc_probes", mode="auto")
    assert state.outcome == "ok" and state.last_replay is False
    assert {n: p.ok for n, p in probes().items()} == {"up": True, "down": False}


def test_a_replay_pass_probes_each_endpoint_s_stand_in(replay, settings):
    settings.RPC_PROBE_URLS = (
        "base-official|https://mainnet.base.org,publicnode|https://base-rpc.publicnode.com,"
        "llamarpc|https://base.llamarpc.com,1rpc|https://1rpc.io/base,drpc|https://base.drpc.org,"
        "someone-else|https://rpc.example.com"
    )
    settings.RPC_PROBE_OWN_CHAIN = "local-anvil|local"
    with_rows = rpcprobe.run(FeedPass(source="rpc_probes", replay=True))
    assert with_rows == 7
    got = probes()
    assert {n: p.lag_blocks for n, p in got.items()} == {
        "base-official": 0,
        "publicnode": 1,
        "llamarpc": 3,
        "1rpc": 0,
        "drpc": 1,
        "someone-else": 0,  # the shared recorded answers
        "local-anvil": 0,  # its own network (chain id 8453 too, another genesis)
    }
    assert got["1rpc"].ok and got["1rpc"].client_version == ""  # refuses web3_clientVersion
    assert got["publicnode"].client_version.startswith("reth/")
    assert got["local-anvil"].block_number == 1842 and got["local-anvil"].client_version == "anvil/v1.7.1"
    assert all(p.replay and p.chain_id == 8453 for p in got.values())
    # The endpoints keep their real URLs; only the probes went to the stand-ins.
    assert RpcEndpoint.objects.get(name="llamarpc").url == "https://base.llamarpc.com"


def test_no_endpoint_at_all_is_a_quiet_pass(settings):
    settings.RPC_PROBE_URLS = ""
    settings.RPC_PROBE_OWN_CHAIN = ""
    state = feed_run(name="rpc_probes", mode="live")
    assert state.outcome == "ok" and state.rows_written == 0 and "no RPC endpoint" in state.last_note


# --- the free reads -------------------------------------------------------------------------------
def _probe(
    ep, *, ok=True, latency=None, head=None, lag=None, minutes=1.0, replay=False, error="", version="v"
):
    from datetime import timedelta

    return RpcProbe.objects.create(
        endpoint=ep,
        ok=ok,
        latency_ms=latency,
        block_number=head,
        lag_blocks=lag,
        chain_id=8453 if ok else None,
        client_version=version if ok else "",
        error=error,
        replay=replay,
        probed_at=timezone.now() - timedelta(minutes=minutes),
    )


def test_the_speed_index_computes_each_endpoint_s_figures_and_ranks_them(api):
    fast = RpcEndpoint.objects.create(name="fast", url="https://fast.example.com", region="eu", country="DE")
    slow = RpcEndpoint.objects.create(
        name="slow", url="https://slow.example.com", affiliate_url="https://ref.example.com"
    )
    dead = RpcEndpoint.objects.create(name="dead", url="https://dead.example.com")
    off = RpcEndpoint.objects.create(name="off", url="https://off.example.com", enabled=False)
    for i, ms in enumerate([10.0, 20.0, 30.0, 40.0, 1000.0]):
        _probe(fast, latency=ms, head=100 + i, lag=i % 2, minutes=10 - i, version=f"geth/{i}")
    _probe(fast, ok=False, error="Timeout: read timed out", minutes=0.5)
    for ms in (80.0, 90.0):
        _probe(slow, latency=ms, head=100, lag=3)
    _probe(slow, latency=5.0, head=90, minutes=60 * 25)  # outside the window
    _probe(dead, ok=False, error="ConnectionError: refused")
    _probe(off, latency=1.0, head=1)
    body = api.get("/api/a2a/benchmarks/rpc").json()
    entries = {e["name"]: e for e in body["endpoints"]}
    assert set(entries) == {"fast", "slow", "dead"}  # enabled endpoints only
    f = entries["fast"]
    assert (f["probes_24h"], f["success_rate_24h"]) == (6, 83.3)
    assert f["median_latency_ms_24h"] == 30.0
    assert f["p95_latency_ms_24h"] == round(float(np.percentile([10, 20, 30, 40, 1000], 95)), 2) == 808.0
    assert (f["last_ok"], f["last_error"], f["last_lag_blocks"]) == (False, "Timeout: read timed out", None)
    assert (f["last_block"], f["client_version"], f["chain_id"]) == (104, "geth/4", 8453)  # newest ok probe
    assert f["median_lag_blocks_24h"] == 0.0 and (f["region"], f["country"]) == ("eu", "DE")
    s = entries["slow"]
    assert (s["probes_24h"], s["success_rate_24h"], s["median_latency_ms_24h"]) == (2, 100.0, 85.0)
    assert s["affiliate_url"] == "https://ref.example.com" and s["last_lag_blocks"] == 3
    d = entries["dead"]
    assert (d["success_rate_24h"], d["median_latency_ms_24h"], d["last_ok"]) == (0.0, None, False)
    assert body["ranking"] == ["fast", "slow"]  # by median latency; no successful probe: unranked
    assert body["window_hours"] == 24 and "median latency" in body["method"]
    assert body["sources"] == [
        {"name": "rpc_probes", "items": 9, "replay": False, "venue": None, "as_of": body["as_of"]}
    ]


def test_the_speed_index_and_telemetry_after_a_replay_pass(api, replay, settings):
    settings.RPC_PROBE_URLS = (
        "base-official|https://mainnet.base.org|us-east|US,llamarpc|https://base.llamarpc.com|eu|NL"
    )
    settings.RPC_PROBE_OWN_CHAIN = ""
    assert feed_run(name="rpc_probes", mode="replay").outcome == "ok"
    index = api.get("/api/a2a/benchmarks/rpc").json()
    assert {e["name"] for e in index["endpoints"]} == {"base-official", "llamarpc"}
    assert all(e["replay"] and e["probes_24h"] == 1 for e in index["endpoints"])
    assert index["sources"][0]["replay"] is True and index["sources"][0]["items"] == 2
    assert {e["name"]: e["last_lag_blocks"] for e in index["endpoints"]} == {
        "base-official": 0,
        "llamarpc": 3,
    }

    status = api.get("/api/a2a/telemetry/status").json()
    assert (status["nodes_total"], status["nodes_online"], status["regions"], status["countries"]) == (
        2,
        2,
        2,
        2,
    )
    assert status["median_latency_ms"] is not None and status["as_of"] == status["last_seen_at"]
    assert status["sources"] == [
        {"name": "rpc_probes", "items": 2, "replay": True, "venue": None, "as_of": status["as_of"]}
    ]
    nodes = api.get("/api/a2a/telemetry/nodes").json()
    assert nodes["count"] == 2 and {(n["region"], n["country"]) for n in nodes["nodes"]} == {
        ("us-east", "US"),
        ("eu", "NL"),
    }
    assert nodes["sources"][0]["replay"] is True and nodes["as_of"] == status["as_of"]


def test_telemetry_detail_is_sold_with_its_provenance_and_503_when_stale(api, replay, settings):
    from datetime import timedelta

    from eth_account import Account as EthAccount

    from billing.credits import credit_add
    from billing.models import Account, LedgerEntry
    from catalog.services import catalog_seed
    from tests.support.wallets import register_over_http

    catalog_seed()
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(
        account_id=account.id, amount_atomic=1_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    settings.RPC_PROBE_URLS = "llamarpc|https://base.llamarpc.com|eu|NL"
    feed_run(name="rpc_probes", mode="replay")
    TelemetryNode.objects.create(node_id="staff-node", region="us", country="US", latency_ms=20.0)
    body = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key).json()
    assert body["count"] == 2 and body["replay"] is True and body["stale"] is False
    assert {(x["name"], x["replay"]) for x in body["sources"]} == {("rpc_probes", True), ("manual", False)}
    llama = next(n for n in body["nodes"] if n["node_id"] == "llamarpc")
    probe = RpcProbe.objects.get(endpoint__name="llamarpc")
    assert (llama["latency_ms"], llama["online"], llama["replay"]) == (probe.latency_ms, True, True)
    assert llama["version"] == probe.client_version[:64]
    assert body["mean_latency_ms_online"] == round((probe.latency_ms + 20.0) / 2, 2)
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    TelemetryNode.objects.update(last_seen_at=timezone.now() - timedelta(hours=2))
    resp = api.get("/api/a2a/telemetry/detail", HTTP_X_API_KEY=key)
    assert resp.status_code == 503
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == before


def test_make_run_probes_the_local_chain_it_started():
    from a2a_service.scripts.devstack import local_chain_probed

    env: dict[str, str] = {}
    local_chain_probed(env)
    assert env == {"RPC_PROBE_OWN_CHAIN": "local-anvil|local"}
    env = {"RPC_PROBE_OWN_CHAIN": ""}  # the operator's choice stands
    local_chain_probed(env)
    assert env == {"RPC_PROBE_OWN_CHAIN": ""}
