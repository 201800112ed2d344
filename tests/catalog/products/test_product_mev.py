"""The MEV execution hint pack (catalog/products/gas.py) on a fee history and a market of
known shape: the EIP-1559 next base fee, the inclusion tips as percentiles of the blocks'
median tips, the max fee, slippage from the spread and the 1-minute ATR, private-orderflow
advice and the split; bought with credits, 503 uncharged without fresh fee history, 404 for a
symbol the service has no market for, 422 for bad parameters."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from django.utils import timezone

from billing.models import Account
from catalog.analytics.indicators import indicator_columns
from catalog.analytics.series import ohlcv
from catalog.models import GasFeeBlock
from catalog.products.gas import (
    MAX_SLICES,
    eip1559_next_base_fee,
    inclusion_tips,
    split_slices,
)
from catalog.services import catalog_seed
from tests.support.marketdata import candles_write, fee_history_write, market_write, mev_market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

PATH = "/api/a2a/x402/trading/mev-exec-hint-pack"
GWEI = 10**9
PRICE_ATOMIC = 180_000  # 0.18 USDC


@pytest.fixture
def buyer(api):
    catalog_seed()
    key, account = funded_buyer(api, 5_000_000)

    def balance() -> int:
        return Account.objects.get(pk=account.pk).credit_balance_atomic

    return key, balance


# --- the arithmetic -------------------------------------------------------------------------------
def test_eip1559_next_base_fee():
    base = 10 * GWEI
    kw = {"elasticity": 2, "denominator": 8}
    assert eip1559_next_base_fee(base, 1.0, **kw) == base + base // 8  # full: +12.5 %
    assert eip1559_next_base_fee(base, 0.0, **kw) == base - base // 8  # empty: -12.5 %
    assert eip1559_next_base_fee(base, 0.5, **kw) == base  # at target
    assert eip1559_next_base_fee(base, 0.75, **kw) == base + base // 16
    assert eip1559_next_base_fee(875_000_000, 0.0, **kw) == 765_625_000  # anvil's idle chain
    assert eip1559_next_base_fee(7, 0.51, **kw) == 8  # a rise is at least 1 wei
    assert eip1559_next_base_fee(7, 0.49, **kw) == 7  # a fall is floored
    # Base (OP stack): elasticity 6, denominator 250: a full block raises it by 2 %.
    assert eip1559_next_base_fee(base, 1.0, elasticity=6, denominator=250) == base + base * 5 // 250
    assert eip1559_next_base_fee(base, 1 / 6, elasticity=6, denominator=250) in (base, base - 1, base + 1)


def test_inclusion_tips_are_percentiles_of_the_blocks_tips():
    tips = [i * GWEI for i in range(1, 21)]
    got = inclusion_tips(tips)
    assert got == {x: math.ceil(np.percentile(tips, x)) for x in (70, 90, 99)}
    assert got == {70: 14_300_000_000, 90: 18_100_000_000, 99: 19_810_000_000}
    assert inclusion_tips([0] * 20) == {70: 0, 90: 0, 99: 0}  # an idle chain: no tip needed


def test_slices_stay_within_a_share_of_the_top_and_sum_to_the_notional():
    slices, capped = split_slices(10_000, top_size_usd=8_000)  # cap 2 000
    assert slices == [2_000.0] * 5 and not capped
    slices, capped = split_slices(10_000.01, top_size_usd=16_000)  # cap 4 000: 3 slices
    assert slices == [3333.34, 3333.34, 3333.33] and not capped
    assert sum(Decimal(str(x)) for x in slices) == Decimal("10000.01")
    slices, capped = split_slices(1_000, top_size_usd=1_000_000)
    assert slices == [1_000.0] and not capped
    slices, capped = split_slices(1_000_000, top_size_usd=100)
    assert len(slices) == MAX_SLICES and capped
    assert sum(Decimal(str(x)) for x in slices) == Decimal("1000000")


# --- the product ----------------------------------------------------------------------------------
def test_bought_with_credits_the_numbers_follow_the_fee_history_and_the_market(api, buyer):
    key, balance = buyer
    tips = [i * GWEI for i in range(1, 21)]
    rows = fee_history_write(ratios=[0.75] * 20, tips=tips, base_fee=10 * GWEI)  # blocks 3/4 full
    mev_market_write(symbol="ETH/USDT", price=3000.0, size=10.0)
    before = balance()
    resp = api.get(PATH, {"symbol": "eth/usdt", "notional_usdc": "10000", "side": "buy"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert before - balance() == PRICE_ATOMIC
    assert (body["symbol"], body["side"], body["chain_id"], body["blocks"]) == ("ETH/USDT", "buy", 8453, 20)
    assert body["newest_block"] == rows[-1].block_number == 1000

    base = body["base_fee"]
    newest = int(rows[-1].base_fee_wei)
    assert base["now_wei"] == newest and base["now_gwei"] == pytest.approx(newest / GWEI)
    assert base["trend"] == "rising" and base["change_pct"] == pytest.approx(
        (newest - 10 * GWEI) / (10 * GWEI) * 100, abs=1e-3
    )
    assert base["next_block_wei"] == newest + newest // 16  # 3/4 full: +1/16
    assert base["node_next_block_wei"] == int(rows[-1].next_base_fee_wei) == base["next_block_wei"]
    assert base["mean_gas_used_ratio"] == 0.75

    fees = {f["inclusion_pct"]: f["priority_fee_wei"] for f in body["priority_fees"]}
    assert fees == {70: 14_300_000_000, 90: 18_100_000_000, 99: 19_810_000_000}
    expected_max = math.ceil(base["next_block_wei"] * Fraction(9, 8) ** 6) + fees[90]
    assert body["max_fee"] == {
        "max_fee_per_gas_wei": expected_max,
        "max_fee_per_gas_gwei": pytest.approx(expected_max / GWEI),
        "max_priority_fee_per_gas_wei": fees[90],
        "headroom_blocks": 6,
    }

    slip = body["slippage"]
    series = ohlcv("ETH/USDT", "1m")
    atr_bps = float(indicator_columns(series).atr_pct[-1]) * 100
    assert slip["atr_1m_bps"] == pytest.approx(atr_bps, abs=0.01) and atr_bps > 0
    assert slip["half_spread_bps"] == pytest.approx(0.5, abs=0.01)  # bid and ask 1 bp apart
    assert slip["tolerance_bps"] == pytest.approx(slip["half_spread_bps"] + slip["atr_1m_bps"], abs=0.02)
    assert (slip["venue"], slip["top_size_base"]) == ("binance", 10.0)
    assert slip["top_price"] == pytest.approx(3000.15) and slip["top_size_usd"] == pytest.approx(30001.5)
    assert slip["book_share"] == pytest.approx(10_000 / 30001.5, abs=1e-4)

    # 10 000 USDC against a 30 001.50 USD top: slices of at most a quarter of it (7 500.38).
    assert body["split"] == {
        "slices": 2,
        "slice_usdc": [5000.0, 5000.0],
        "max_book_share": 0.1667,
        "capped": False,
    }
    flow = body["private_orderflow"]
    assert flow["max_extractable_usd"] == pytest.approx(10_000 * slip["tolerance_bps"] / 10_000, abs=0.01)
    eth_gas = 2 * 150_000 * (base["next_block_wei"] + fees[90]) / 10**18 * 3000.0
    assert flow["attacker_gas_usd"] == pytest.approx(eth_gas, rel=1e-4)
    assert flow["recommended"] is bool(flow["reasons"])

    assert body["replay"] is False and body["stale"] is False and "EIP-1559" in body["method"]
    assert {(x["name"], x["venue"]) for x in body["sources"]} == {("chain", None), ("exchanges", "binance")}
    chain_source = next(x for x in body["sources"] if x["name"] == "chain")
    assert chain_source["items"] == 20


def test_a_large_order_gets_private_orderflow_and_more_slices(api, buyer):
    key, _ = buyer
    fee_history_write()
    mev_market_write(price=3000.0, size=10.0)
    body = api.get(PATH, {"notional_usdc": 100_000, "side": "sell"}, HTTP_X_API_KEY=key).json()
    top = body["slippage"]["top_size_usd"]
    assert top == pytest.approx(2999.85 * 10)
    assert body["slippage"]["book_share"] == pytest.approx(100_000 / top, abs=1e-4)
    flow = body["private_orderflow"]
    assert flow["recommended"] and any("top-of-book size on binance" in r for r in flow["reasons"])
    split = body["split"]
    assert split["slices"] == math.ceil(100_000 / (0.25 * top)) == 14
    assert sum(Decimal(str(x)) for x in split["slice_usdc"]) == Decimal("100000")
    assert split["max_book_share"] <= 0.25


def test_a_volatility_spike_is_high_volatility_and_a_profitable_sandwich_is_said(api, buyer):
    key, _ = buyer
    fee_history_write(base_fee=GWEI // 100, tips=[0] * 20)  # a cheap chain: sandwiches cost little
    market_write(exchange="binance", symbol="SOL/USDT", bid=149.99, ask=150.01, size=5_000.0)
    market_write(exchange="okx", symbol="ETH/USDT", bid=2999.0, ask=3001.0)  # the gas token's price

    def calm_then_wild(i: int) -> float:
        amplitude = 0.0005 if i < 190 else 0.02
        return 150.0 * (1 + amplitude * math.sin(i * 1.3))

    candles_write(symbol="SOL/USDT", shape=calm_then_wild, timeframe="1m", bars=200)
    body = api.get(PATH, {"symbol": "SOL/USDT", "notional_usdc": 5_000}, HTTP_X_API_KEY=key).json()
    slip, flow = body["slippage"], body["private_orderflow"]
    assert slip["high_volatility"] and slip["volatility_percentile"] >= 90
    assert any("volatility is at its" in r for r in flow["reasons"])
    assert flow["attacker_gas_usd"] < flow["max_extractable_usd"]
    assert any("a sandwich would pay" in r for r in flow["reasons"]) and flow["recommended"]
    assert {x["venue"] for x in body["sources"] if x["name"] == "exchanges"} == {"binance", "okx"}


def test_no_fresh_fee_history_is_503_and_nothing_is_charged(api, buyer):
    key, balance = buyer
    mev_market_write()
    before = balance()
    resp = api.get(PATH, HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and "fee history" in resp.json()["detail"]
    fee_history_write(observed_at=timezone.now() - timedelta(minutes=20))
    resp = api.get(PATH, HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and "newer than" in resp.json()["detail"]
    assert balance() == before


def test_no_fresh_market_is_503_and_an_unknown_symbol_404_both_uncharged(api, buyer):
    key, balance = buyer
    fee_history_write()
    before = balance()
    assert api.get(PATH, {"symbol": "DOGE/USDT"}, HTTP_X_API_KEY=key).status_code == 404
    candles_write(symbol="ADA/USDT", shape=lambda i: 1.0, timeframe="1m", bars=200)  # candles, no book
    resp = api.get(PATH, {"symbol": "ADA/USDT"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and "book top" in resp.json()["detail"]
    assert balance() == before


@pytest.mark.parametrize(
    "params,field",
    [
        ({"side": "hold"}, "side"),
        ({"symbol": "ETHUSDT"}, "symbol"),
        ({"symbol": "ETH/BTC"}, "symbol"),
        ({"notional_usdc": "0"}, "notional_usdc"),
        ({"notional_usdc": "nan"}, "notional_usdc"),
        ({"notional_usdc": "1e12"}, "notional_usdc"),
    ],
)
def test_bad_parameters_are_422(api, buyer, params, field):
    key, balance = buyer
    before = balance()
    resp = api.get(PATH, params, HTTP_X_API_KEY=key)
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"] == ["query", field]
    assert balance() == before


def test_replayed_fee_history_is_marked_replay(api, buyer):
    key, _ = buyer
    fee_history_write(replay=True)
    mev_market_write()
    body = api.get(PATH, HTTP_X_API_KEY=key).json()
    assert body["replay"] is True
    assert next(x for x in body["sources"] if x["name"] == "chain")["replay"] is True
    assert GasFeeBlock.objects.filter(replay=True).count() == 20
