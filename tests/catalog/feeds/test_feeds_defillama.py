"""The DefiLlama yields adapter (catalog/feeds/defillama): the pools list parsed with its APY
split and bounded (TVL floor, cap, largest first), the pass against a local server (live and
replay: the setting is the list's full URL, its replay stand-in the sample directory), idempotent
re-runs, and the outside failures that fail the pass and write nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
import requests
from django.db import transaction

import catalog.feeds.defillama as defillama
from catalog.feeds.defillama.parse import pools_parse
from catalog.feeds.registry import FeedError, FeedPass, feed_get
from catalog.models import YieldPool
from tests.support.sample_server import Answer, SampleServer, sample_json

pytestmark = pytest.mark.django_db

LIDO = "df893e3e-9d3d-b40f-6975-19363c76445f"
AAVE_USDT = "483b161d-c6e8-3958-6c76-a812efcbfecf"
SHADOW = "cfc21a17-0ee6-47c3-9b16-1fe6b1222c5f"


@pytest.fixture
def llama(settings):
    server = SampleServer()
    settings.OUTBOUND_ALLOW_PRIVATE_TARGETS = True
    settings.FEEDS_HTTP_TIMEOUT_SECONDS = 0.5
    settings.FEEDS_HTTP_DEADLINE_SECONDS = 3.0
    settings.DEFILLAMA_YIELDS_URL = f"{server.url}/defillama_yields_url/"  # the list's full URL
    yield server
    server.close()


def run_pass(*, replay: bool = False) -> int:
    with transaction.atomic():
        return defillama.run(FeedPass(source=defillama.SOURCE, replay=replay))


def test_pools_sample_parses_with_the_apy_split_and_the_bounds():
    payload = sample_json("defillama_yields_url")
    assert len(payload["data"]) == 24
    pools = pools_parse(payload, min_tvl_usd=1_000_000, max_pools=500)
    assert len(pools) == 20  # four pools are below the floor
    tvls = [p.tvl_usd for p in pools]
    assert tvls == sorted(tvls, reverse=True) and min(tvls) >= 1_000_000
    lido = pools[0]
    assert (lido.pool_id, lido.project, lido.chain, lido.symbol) == (LIDO, "lido", "Ethereum", "STETH")
    assert lido.tvl_usd == Decimal("24103221554.00") and lido.apy_reward is None and lido.apy == 2.71
    usdt = next(p for p in pools if p.pool_id == AAVE_USDT)
    assert (usdt.apy_base, usdt.apy_reward, usdt.apy) == (4.12, 0.35, 4.47)
    assert (
        usdt.apy_mean_30d == 4.41 and usdt.stablecoin and usdt.il_risk == "no" and usdt.exposure == "single"
    )
    assert usdt.reward_tokens == ["0x7Fc66500c84A76Ad7e9c93437bFc5Ac33E2DDaE9"]
    shadow = next(p for p in pools if p.pool_id == SHADOW)
    assert shadow.outlier and shadow.predicted_class == "Down" and shadow.predicted_probability == 91
    assert shadow.il_risk == "yes" and shadow.exposure == "multi"
    assert {p.pool_id for p in pools_parse(payload, min_tvl_usd=1_000_000, max_pools=3)} == {
        LIDO,
        "97ce0118-cfe0-d1bd-1bc0-23ef2bc66f58",
        "2acc82e4-bb55-79a7-158b-401c8b971c3c",
    }
    assert len(pools_parse(payload, min_tvl_usd=0, max_pools=500)) == 24


def test_apy_total_is_the_sum_when_missing_and_garbage_is_dropped():
    raw = {"pool": "p1", "tvlUsd": 5e6, "apyBase": 1.5, "apyReward": 2.0, "apy": None}
    bad = [{"pool": "p2", "tvlUsd": "lots"}, {"tvlUsd": 9e9}, "x", {"pool": "p3", "tvlUsd": float("inf")}]
    (pool,) = pools_parse({"status": "success", "data": [raw, *bad]}, min_tvl_usd=1e6, max_pools=10)
    assert pool.apy == 3.5
    for payload in ([], {"status": "error", "data": []}, {"data": "none"}):
        with pytest.raises(FeedError):
            pools_parse(payload, min_tvl_usd=0, max_pools=10)


def test_registered():
    assert feed_get("defillama").run is defillama.run
    assert feed_get("defillama").url_settings == ("DEFILLAMA_YIELDS_URL",)


def test_pass_writes_the_bounded_pools_and_reruns_in_place(llama, settings):
    settings.DEFILLAMA_MAX_POOLS = 10
    assert run_pass() == 10
    assert YieldPool.objects.count() == 10
    lido = YieldPool.objects.get(pool_id=LIDO)
    assert (lido.source, lido.replay, lido.tvl_usd) == ("defillama", False, Decimal("24103221554.00"))
    assert llama.paths() == ["/defillama_yields_url"]

    payload = sample_json("defillama_yields_url")
    next(p for p in payload["data"] if p["pool"] == LIDO).update(tvlUsd=25e9, apyBase=2.9, apy=2.9)
    llama.routes["/defillama_yields_url"] = Answer(body=payload)
    assert run_pass() == 10
    lido.refresh_from_db()
    assert YieldPool.objects.count() == 10 and lido.tvl_usd == Decimal("25000000000.00") and lido.apy == 2.9


def test_replay_pass_fetches_the_sample_directory(llama, settings):
    settings.FEEDS_REPLAY_URL = llama.url
    settings.DEFILLAMA_YIELDS_URL = "https://unreachable.invalid/pools"
    assert run_pass(replay=True) == 20
    assert set(YieldPool.objects.values_list("replay", flat=True)) == {True}
    assert llama.paths() == ["/defillama_yields_url"]  # the directory: the server answers its index.json


def test_a_list_larger_than_the_feed_limit_is_allowed_up_to_its_own(llama, settings):
    settings.FEEDS_MAX_BODY_BYTES = 1_000
    settings.DEFILLAMA_MAX_BODY_BYTES = 1_000_000
    assert run_pass() == 20
    settings.DEFILLAMA_MAX_BODY_BYTES = 2_000
    with transaction.atomic():
        YieldPool.objects.all().delete()
    with pytest.raises(FeedError, match="more than"):
        run_pass()
    assert YieldPool.objects.count() == 0


@pytest.mark.parametrize(
    "answer, error",
    [
        (Answer(status=500, body=b"oops"), FeedError),
        (Answer(body=b'{"status": "success", "data": [{"pool": '), FeedError),
        (Answer(body=b""), FeedError),
        (Answer(body=b"[]"), FeedError),
        (Answer(body=b"{}", delay=1.5), requests.exceptions.RequestException),
        (Answer(status=301, headers={"Location": "http://10.0.0.1/pools"}), FeedError),
    ],
    ids=["500", "malformed", "empty", "not an object", "timeout", "private redirect"],
)
def test_a_failing_source_fails_the_pass_and_writes_nothing(llama, answer, error):
    llama.routes["/defillama_yields_url"] = answer
    with pytest.raises(error):
        run_pass()
    assert YieldPool.objects.count() == 0
