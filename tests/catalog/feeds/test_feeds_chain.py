"""The chain feed (catalog/feeds/chain): eth_feeHistory parsed exactly (hex quantities, the
extra base fee, the reward percentiles), the pass on the recorded replay sample and on a real
local node (anvil), idempotent re-runs, retention, and the outside failures (timeout, 500,
garbage, a JSON-RPC error, a redirect to a private address, a broken part of the history) that
fail the pass with their reason and write nothing. Also FeedPass.rpc and the replay server's
JSON-RPC answers, which the feed stands on."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
import requests
from django.db import transaction
from django.utils import timezone

import catalog.feeds.chain as chain_feed
from catalog.feeds.chain.parse import fee_history_parse, quantity
from catalog.feeds.registry import FeedError, FeedPass, RpcError, feed_get
from catalog.feeds.replay import SAMPLES, replay_start, rpc_answer, rpc_sample_path
from catalog.feeds.retention import feeds_prune
from catalog.feeds.runner import feed_run
from catalog.models import FeedState, GasFeeBlock
from catalog.models.chain import REWARD_PERCENTILES
from tests.support.feedserver import closed_port
from tests.support.rpcstub import Error, Raw, Result, RpcStub

pytestmark = pytest.mark.django_db

SAMPLE = json.loads((SAMPLES / "chain_rpc_url" / "eth_feeHistory.json").read_text())["result"]
OLDEST = 0x1F922C4  # the sample's oldestBlock


@pytest.fixture
def replay(settings):
    server = replay_start(port=0)
    settings.FEEDS_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def node(settings):
    """A scripted node answering the sample, at CHAIN_RPC_URL (a loopback address: the
    operator's own node may be private, no OUTBOUND_ALLOW_PRIVATE_TARGETS needed)."""
    stub = RpcStub()
    stub.methods.update(
        eth_chainId=Result("0x2105"),
        eth_blockNumber=Result(hex(OLDEST + 19)),
        eth_feeHistory=Result(SAMPLE),
    )
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False
    settings.CHAIN_RPC_URL = stub.url
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.5
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 2.0
    yield stub
    stub.close()


def run_pass(*, replay: bool = False) -> int:
    with transaction.atomic():
        return chain_feed.run(FeedPass(source="chain", replay=replay))


# --- parsing ------------------------------------------------------------------------------------
def test_quantities_are_exact_hex_integers():
    assert quantity("0x0") == 0 and quantity("0x1b4") == 436 and quantity("0x01") == 1
    assert quantity("0x" + "f" * 64) == 2**256 - 1
    for bad in ("12", 12, "0x", "0xzz", None, "0x" + "1" * 65, " 0x1", 1.5, True):
        with pytest.raises(FeedError):
            quantity(bad)


def test_the_recorded_fee_history_parses_per_block():
    blocks = fee_history_parse(SAMPLE, percentiles=REWARD_PERCENTILES)
    assert len(blocks) == 20
    assert [b.block_number for b in blocks] == list(range(OLDEST, OLDEST + 20))
    first, last = blocks[0], blocks[-1]
    assert first.base_fee_wei == 0xB53135 == 11_874_613
    assert first.next_base_fee_wei == 0xB094F0 == blocks[1].base_fee_wei
    assert last.base_fee_wei == 0x10267A7 and last.next_base_fee_wei == 0x11095B0  # the node's projection
    assert first.gas_used_ratio == 0.39822
    assert first.rewards_wei == tuple(int(x, 16) for x in SAMPLE["reward"][0])
    assert all(list(b.rewards_wei) == sorted(b.rewards_wei) for b in blocks)  # percentiles ascend


def test_a_fee_history_of_the_wrong_shape_is_refused():
    def broken(**change):
        return {**SAMPLE, **change}

    cases = [
        [],
        broken(oldestBlock=33),
        broken(baseFeePerGas="0x1"),
        broken(baseFeePerGas=SAMPLE["baseFeePerGas"][:5]),
        broken(gasUsedRatio=[*SAMPLE["gasUsedRatio"][:-1], "half"]),
        broken(gasUsedRatio=[*SAMPLE["gasUsedRatio"][:-1], 1.5]),
        broken(reward=SAMPLE["reward"][:-1]),
        broken(reward=[*SAMPLE["reward"][:-1], ["0x1"]]),
        broken(reward=[*SAMPLE["reward"][:-1], ["0x1", "0x2", "0x3", "0x4", "0x5", "-0x6"]]),
    ]
    for payload in cases:
        with pytest.raises(FeedError):
            fee_history_parse(payload, percentiles=REWARD_PERCENTILES)
    # A young chain: fewer blocks than asked, and no block at all, are fine.
    assert (
        fee_history_parse(
            {"oldestBlock": "0x0", "baseFeePerGas": ["0x1"], "gasUsedRatio": []},
            percentiles=REWARD_PERCENTILES,
        )
        == []
    )


# --- FeedPass.rpc and the replay server's JSON-RPC ------------------------------------------------
def test_rpc_returns_the_result_and_refuses_everything_else(node):
    fp = FeedPass(source="chain")
    assert fp.rpc(node.url, "eth_chainId", allow_private=True) == "0x2105"
    node.methods["eth_call"] = Error(3, "execution reverted")
    with pytest.raises(RpcError, match="execution reverted") as caught:
        fp.rpc(node.url, "eth_call", allow_private=True)
    assert caught.value.code == 3
    broken = {
        "garbage": Raw(body=b"<html>not json</html>"),
        "empty": Raw(body=b""),
        "array": Raw(body=b"[1, 2]"),
        "wrong_id": Raw(body=b'{"jsonrpc": "2.0", "id": 999999999, "result": "0x1"}'),
        "no_result": lambda params: Raw(body=b'{"jsonrpc": "2.0", "id": null}'),
        "status_500": Raw(
            status=500, body=b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"overloaded"}}'
        ),
        "redirect": Raw(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data"}),
    }
    node.methods.update(broken)
    for method in broken:
        with pytest.raises(FeedError) as caught:
            fp.rpc(node.url, method, allow_private=True)
        assert not isinstance(caught.value, RpcError), method
    with pytest.raises(FeedError, match="overloaded"):
        fp.rpc(node.url, "status_500", allow_private=True)
    with pytest.raises(FeedError, match="redirect"):
        fp.rpc(node.url, "redirect", allow_private=True)


def test_rpc_keeps_the_outbound_rule_for_urls_that_are_not_the_operators(node):
    from a2a_service.core.http import TargetRefused

    with pytest.raises(TargetRefused):
        FeedPass(source="chain").rpc(node.url, "eth_chainId")


def test_the_replay_server_answers_json_rpc_from_the_samples(replay, settings):
    assert rpc_sample_path("/chain_rpc_url", "eth_chainId") == SAMPLES / "chain_rpc_url" / "eth_chainId.json"
    # An endpoint's own answer first, then its parents' (the shared one).
    probe = SAMPLES / "rpc_probe_urls"
    assert (
        rpc_sample_path("/rpc_probe_urls/llamarpc", "eth_blockNumber")
        == probe / "llamarpc" / "eth_blockNumber.json"
    )
    assert rpc_sample_path("/rpc_probe_urls/llamarpc", "eth_chainId") == probe / "eth_chainId.json"
    assert rpc_sample_path("/rpc_probe_urls/unknown-name", "eth_chainId") == probe / "eth_chainId.json"
    for path, method in [("/../catalog", "eth_chainId"), ("/chain_rpc_url", "../eth_chainId"), ("/", "x")]:
        assert rpc_sample_path(path, method) is None
    assert rpc_answer("/chain_rpc_url", b'{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}') == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": "0x2105",
    }
    assert rpc_answer("/chain_rpc_url", b'{"id":8,"method":"eth_nothing"}')["error"]["code"] == -32601
    assert rpc_answer("/chain_rpc_url", b"not json")["error"]["code"] == -32700
    assert rpc_answer("/chain_rpc_url", b"[]")["error"]["code"] == -32600
    # Over HTTP, through FeedPass.rpc (the request's own id comes back).
    fp = FeedPass(source="chain", replay=True)
    assert fp.rpc(fp.replay_base("chain_rpc_url"), "eth_blockNumber") == hex(OLDEST + 19)
    resp = requests.post(fp.replay_base("chain_rpc_url"), data=b"", timeout=5)
    assert resp.status_code == 400


# --- the pass -----------------------------------------------------------------------------------
def test_registered():
    source = feed_get("chain")
    assert source.run is chain_feed.run and source.url_settings == ("CHAIN_RPC_URL",)


def test_a_pass_writes_one_row_per_block_and_reruns_in_place(node):
    assert run_pass() == 20
    assert GasFeeBlock.objects.count() == 20
    row = GasFeeBlock.objects.get(chain_id=8453, block_number=OLDEST)
    assert row.base_fee_wei == Decimal(11_874_613) and row.next_base_fee_wei == Decimal(0xB094F0)
    assert row.gas_used_ratio == 0.39822 and (row.source, row.replay) == ("chain", False)
    assert [row.priority_fee_wei(p) for p in REWARD_PERCENTILES] == [int(x, 16) for x in SAMPLE["reward"][0]]
    calls = list(node.calls)
    assert calls == ["eth_chainId", "eth_blockNumber", "eth_feeHistory"]

    # The chain moves on by two blocks; the window overlaps: the old rows are updated, not doubled.
    moved = json.loads(json.dumps(SAMPLE))
    moved["oldestBlock"] = hex(OLDEST + 2)
    moved["reward"][0] = ["0x1", "0x2", "0x3", "0x4", "0x5", "0x6"]  # block OLDEST+2 re-read, changed
    node.methods.update(eth_feeHistory=Result(moved), eth_blockNumber=Result(hex(OLDEST + 21)))
    assert run_pass() == 20
    assert GasFeeBlock.objects.count() == 22
    changed = GasFeeBlock.objects.get(block_number=OLDEST + 2)
    assert [changed.priority_fee_wei(p) for p in REWARD_PERCENTILES] == [1, 2, 3, 4, 5, 6]
    assert run_pass() == 20 and GasFeeBlock.objects.count() == 22


def test_the_request_asks_for_the_setting_s_blocks_and_percentiles(node, settings):
    seen = []

    def history(params):
        seen.append(params)
        return Result(SAMPLE)

    node.methods["eth_feeHistory"] = history
    settings.CHAIN_FEE_HISTORY_BLOCKS = 7
    run_pass()
    assert seen == [["0x7", "latest", [10, 25, 50, 70, 90, 99]]]


def test_a_replay_pass_reads_the_recorded_sample(replay, settings):
    settings.CHAIN_RPC_URL = "https://unreachable.invalid"
    assert run_pass(replay=True) == 20
    assert set(GasFeeBlock.objects.values_list("replay", flat=True)) == {True}
    assert run_pass(replay=True) == 20 and GasFeeBlock.objects.count() == 20


def test_auto_mode_replays_an_unreachable_node_and_notes_it(replay, settings):
    settings.CHAIN_RPC_URL = f"http://127.0.0.1:{closed_port()}"
    state = feed_run(name="chain", mode="auto")
    assert state.outcome == "ok" and state.last_replay and "live unreachable" in state.last_note
    assert GasFeeBlock.objects.filter(replay=True).count() == 20


def test_a_pass_against_a_real_local_node(chain, settings):
    """anvil: real eth_feeHistory answers (an idle chain's empty blocks: base fee falling by
    1/8 a block, zero tips)."""
    settings.CHAIN_RPC_URL = chain.url
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = False  # the operator's own node: allowed anyway
    settings.CHAIN_FEE_HISTORY_BLOCKS = 4
    for _ in range(4):
        chain.w3.provider.make_request("evm_mine", [])
    head = chain.w3.eth.block_number
    state = feed_run(name="chain", mode="live")
    assert state.outcome == "ok", state.last_error
    rows = list(GasFeeBlock.objects.order_by("block_number"))
    assert [r.block_number for r in rows] == list(range(head - 3, head + 1))
    assert {r.chain_id for r in rows} == {chain.w3.eth.chain_id}
    for row in rows:
        block = chain.w3.eth.get_block(row.block_number)
        assert int(row.base_fee_wei) == block["baseFeePerGas"]
        assert row.gas_used_ratio == pytest.approx(block["gasUsed"] / block["gasLimit"])
        assert row.priority_fee_wei(50) is not None and row.replay is False
    empty = [r for r in rows if r.gas_used_ratio == 0]
    for row in empty:  # EIP-1559: an empty block lowers the next base fee by 1/8
        assert int(row.next_base_fee_wei) == int(row.base_fee_wei) - int(row.base_fee_wei) // 8


@pytest.mark.parametrize(
    "method,answer,reason",
    [
        ("eth_chainId", Result("0x2105", delay=1.5), "Timeout"),
        ("eth_feeHistory", Raw(status=500, body=b"upstream down"), "answered 500"),
        ("eth_feeHistory", Raw(body=b"\x00\xffgarbage"), "not JSON"),
        ("eth_feeHistory", Error(-32000, "header not found"), "header not found"),
        ("eth_feeHistory", Raw(status=307, headers={"Location": "http://10.0.0.7:8545/"}), "redirect"),
        ("eth_blockNumber", Result("12345"), "not a hex quantity"),
        ("eth_feeHistory", Raw(body=b"{" + b" " * 200_000 + b"}"), "more than"),
    ],
)
def test_outside_failures_fail_the_pass_with_their_reason_and_write_nothing(
    node, settings, method, answer, reason
):
    settings.FEEDS_MAX_BODY_BYTES = 100_000
    assert run_pass() == 20
    before = list(GasFeeBlock.objects.order_by("block_number").values_list("block_number", "observed_at"))
    node.methods[method] = answer
    state = feed_run(name="chain", mode="live")
    assert state.outcome == "failed" and reason in state.last_error, state.last_error
    after = list(GasFeeBlock.objects.order_by("block_number").values_list("block_number", "observed_at"))
    assert after == before
    assert FeedState.objects.get(name="chain").consecutive_failures == 1


def test_a_history_broken_late_writes_none_of_its_blocks(node):
    broken = json.loads(json.dumps(SAMPLE))
    broken["reward"][15] = ["0x1", "0x2", "oops", "0x4", "0x5", "0x6"]
    node.methods["eth_feeHistory"] = Result(broken)
    state = feed_run(name="chain", mode="live")
    assert state.outcome == "failed" and "reward" in state.last_error
    assert GasFeeBlock.objects.count() == 0


def test_a_history_for_another_chain_far_ahead_of_the_head_is_refused(node):
    node.methods["eth_blockNumber"] = Result("0x10")
    state = feed_run(name="chain", mode="live")
    assert state.outcome == "failed" and "far past the head" in state.last_error
    assert GasFeeBlock.objects.count() == 0


def test_a_chain_other_than_the_configured_one_is_noted(node, settings):
    settings.CHAIN_ID = 1
    state = feed_run(name="chain", mode="live")
    assert state.outcome == "ok" and "chain 8453, not CHAIN_ID 1" in state.last_note


def test_old_blocks_are_pruned_by_the_retention_schedule(node, settings):
    settings.CHAIN_FEE_RETENTION_DAYS = 7
    run_pass()
    GasFeeBlock.objects.filter(block_number__lt=OLDEST + 5).update(
        observed_at=timezone.now() - timedelta(days=8)
    )
    assert feeds_prune()["catalog.GasFeeBlock"] == 5
    assert GasFeeBlock.objects.count() == 15
