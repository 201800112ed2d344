"""Execution hints from the chain feed's fee history (eth_feeHistory) and the exchanges feed's
books and 1-minute candles: the MEV execution hint pack.

For a swap of `notional_usdc` of `symbol` on the service's chain: the base fee now and its
trend over the stored window, the next block's base fee by the EIP-1559 rule, the priority fee
(tip) for 70/90/99 % inclusion, a max fee per gas, a slippage tolerance from the symbol's
1-minute volatility and spread, whether to send it through private orderflow (and why), and
how to split it so each slice stays within a share of the top-of-book size."""

from __future__ import annotations

import math
from datetime import timedelta
from fractions import Fraction
from typing import Annotated, Any, Literal, cast

import numpy as np
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.inputs import QueryModel
from catalog.analytics.indicators import ATR_PERIOD, indicator_columns
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import VOL_HIGH_PCTL, regime_classify
from catalog.analytics.series import ohlcv
from catalog.models import Candle, ExchangeMarket, GasFeeBlock
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# Freshness. A fee estimate is for the next few blocks: a fee history whose newest reading is
# older than 10 minutes (50 blocks on Ethereum, 300 on Base) says little about them.
FEE_MAX_AGE = timedelta(minutes=10)
# Slippage and sizing read the book top and 1-minute bars: 15 minutes is already a long time
# for a 1-minute volatility figure or a top-of-book size.
MARKET_MAX_AGE = timedelta(minutes=15)
# 1-minute bars read for the volatility and its percentile (5 hours).
VOL_BARS = 300

# The inclusion targets sold, and the per-block tip they are read from: each block's median
# tip (50th reward percentile) is "what it took to be a typical transaction of that block".
INCLUSION_TARGETS = (70, 90, 99)
TIP_BASIS_PERCENTILE = 50
# The max fee covers this many consecutive full blocks of base-fee rise (EIP-1559 at most
# (1 + (elasticity - 1) / denominator) a block): 6 is the wallets' usual "2 x base fee" on
# Ethereum (1.125^6 = 2.03).
HEADROOM_BLOCKS = 6
# The max fee's tip is the 90 % inclusion one (99 % pays for the tail of the tail).
MAX_FEE_TIP_TARGET = 90
# A base fee moving less than this over the window (on its fitted line) is flat.
TREND_FLAT_PCT = 1.0

# Sizing. A slice of at most a quarter of the top-of-book size takes liquidity without
# clearing the level; an order above half of it clears the level (a visible price move) and
# is worth hiding. Slices are capped (beyond this many, the order is for a TWAP, not a split).
SPLIT_MAX_BOOK_SHARE = 0.25
PRIVATE_BOOK_SHARE = 0.5
MAX_SLICES = 50
# A sandwich is two swaps of the attacker's (a typical AMM swap: ~150k gas). When the value a
# sandwich can take within the swap's tolerance exceeds what those two cost, one is profitable.
SWAP_GAS = 150_000
# Quotes counted as dollars (the notional is in USDC).
USD_QUOTES = ("USDT", "USDC", "USD", "DAI", "FDUSD")
WEI_PER_GWEI = 10**9
WEI_PER_ETH = 10**18

METHOD = (
    "base fee now and trend from the last {n} blocks of eth_feeHistory (chain {chain}); next base fee "
    "by EIP-1559 (elasticity {e}, denominator {d}) from the newest block's gas used; priority fee for "
    "X% inclusion = the X-th percentile, over those blocks, of each block's median (p50) tip, i.e. a tip "
    "at or above the typical tip of X% of recent blocks; max fee = next base fee x "
    "(1+(e-1)/d)^{h} (that many full blocks of rise) + the 90% tip; slippage tolerance = half the "
    "spread + one 1-minute ATR({atr}) in bps; slices of at most {share:.0%} of the top-of-book size; "
    "private orderflow when the order exceeds {private:.0%} of the top, 1-minute volatility is at or "
    "above its {vol:.0f}th percentile, or a sandwich would out-earn its two swaps' gas ({gas} gas each)"
)


class MevExecHintParams(QueryModel):
    symbol: Annotated[
        str,
        Field(
            min_length=3,
            max_length=40,
            pattern=r"^[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,20}$",
            description="BASE/QUOTE with a dollar quote (USDT, USDC, USD, DAI, FDUSD)",
        ),
    ] = "ETH/USDT"
    notional_usdc: Annotated[
        float, Field(gt=0, le=1_000_000_000, allow_inf_nan=False, description="order size in USDC")
    ] = 10_000.0
    side: Annotated[Literal["buy", "sell"], Field(description="buy or sell the base asset")] = "buy"

    @field_validator("symbol")
    @classmethod
    def _dollar_quote(cls, value: str) -> str:
        value = value.upper()
        if value.split("/")[1] not in USD_QUOTES:
            raise ValueError(f"the quote must be one of {', '.join(USD_QUOTES)} (the notional is in USDC)")
        return value


class BaseFeeOut(BaseModel):
    now_wei: int = Field(description="base fee per gas of the newest stored block")
    now_gwei: float
    trend: Literal["rising", "falling", "flat"] = Field(description="direction of the fitted line")
    trend_pct: float = Field(description="change over the window along a least-squares line, percent")
    change_pct: float = Field(description="newest block's base fee against the oldest's, percent")
    mean_gas_used_ratio: float
    next_block_wei: int = Field(description="the next block's base fee by the EIP-1559 rule")
    next_block_gwei: float
    node_next_block_wei: int | None = Field(description="the next block's base fee as the node projected it")


class InclusionFeeOut(BaseModel):
    inclusion_pct: int
    priority_fee_wei: int
    priority_fee_gwei: float


class MaxFeeOut(BaseModel):
    max_fee_per_gas_wei: int
    max_fee_per_gas_gwei: float
    max_priority_fee_per_gas_wei: int
    headroom_blocks: int = Field(description="consecutive full blocks of base-fee rise the max fee covers")


class SlippageOut(BaseModel):
    tolerance_bps: float = Field(description="per slice: half the spread + one 1-minute ATR")
    half_spread_bps: float
    atr_1m_bps: float
    volatility_percentile: float | None = Field(
        description="where the 1-minute ATR% ranks among its values over the bars read, 0-100"
    )
    high_volatility: bool
    venue: str = Field(description="the venue with the deepest top of book on the order's side")
    top_price: float
    top_size_base: float
    top_size_usd: float
    book_share: float = Field(description="notional / top-of-book size in USD")


class PrivateOrderflowOut(BaseModel):
    recommended: bool
    reasons: list[str]
    max_extractable_usd: float = Field(description="the most a sandwich can take within the tolerance")
    attacker_gas_usd: float | None = Field(
        description="what a sandwich's two swaps cost in gas at the 90% tip; null without an ETH price"
    )


class SplitOut(BaseModel):
    slices: int
    slice_usdc: list[float] = Field(description="slice sizes in USDC, summing to the notional")
    max_book_share: float = Field(description="largest slice / top-of-book size in USD")
    capped: bool = Field(description="true when the slice count hit its cap and slices exceed the share")


class MevExecHintOut(Provenanced):
    symbol: str
    side: Literal["buy", "sell"]
    notional_usdc: float
    chain_id: int
    blocks: int = Field(description="blocks of fee history read")
    newest_block: int
    base_fee: BaseFeeOut
    priority_fees: list[InclusionFeeOut]
    max_fee: MaxFeeOut
    slippage: SlippageOut
    private_orderflow: PrivateOrderflowOut
    split: SplitOut


# --- the arithmetic (pure functions: the tests check them) -------------------------------------
def eip1559_next_base_fee(base_fee: int, gas_used_ratio: float, *, elasticity: int, denominator: int) -> int:
    """The next block's base fee by EIP-1559, from this block's base fee and gas used / gas
    limit: the target is limit / elasticity; above it the fee rises by base * (used - target) /
    target / denominator (at least 1 wei), below it falls by the same rule (floored, in wei)."""
    used_over_target = Fraction(gas_used_ratio) * elasticity  # exact: the float's own value
    if used_over_target == 1:
        return base_fee
    if used_over_target > 1:
        return base_fee + max(math.floor(base_fee * (used_over_target - 1) / denominator), 1)
    return base_fee - math.floor(base_fee * (1 - used_over_target) / denominator)


def inclusion_tips(tips: list[int], targets: tuple[int, ...] = INCLUSION_TARGETS) -> dict[int, int]:
    """For each target X, the X-th percentile (numpy, linear) of the blocks' tips, rounded up
    to a whole wei (a tip a fraction of a wei short of the level is below it)."""
    values = np.asarray(tips, dtype=np.float64)
    return {x: int(math.ceil(float(np.percentile(values, x)))) for x in targets}


def split_slices(notional: float, *, top_size_usd: float) -> tuple[list[float], bool]:
    """Equal slices, each at most SPLIT_MAX_BOOK_SHARE of the top-of-book size (at most
    MAX_SLICES of them), in whole cents summing exactly to the notional; and whether capped."""
    cap = SPLIT_MAX_BOOK_SHARE * top_size_usd
    wanted = max(1, math.ceil(notional / cap)) if cap > 0 else MAX_SLICES
    count = min(wanted, MAX_SLICES)
    cents = round(notional * 100)
    count = max(1, min(count, cents))  # never a slice of zero cents
    each, extra = divmod(cents, count)
    return [(each + (1 if i < extra else 0)) / 100 for i in range(count)], wanted > MAX_SLICES


def _gwei(wei: int) -> float:
    return round(wei / WEI_PER_GWEI, 9)


# --- the inputs ----------------------------------------------------------------------------------
def _fee_window() -> list[GasFeeBlock]:
    """The newest CHAIN_FEE_HISTORY_BLOCKS blocks of the chain the feed wrote last, oldest first."""
    newest = GasFeeBlock.objects.order_by("-observed_at", "-block_number").first()
    if newest is None:
        raise ProductFailed("no fee history has been ingested yet; nothing was charged")
    if timezone.now() - newest.observed_at > FEE_MAX_AGE:
        raise ProductFailed(
            f"no fee history newer than {int(FEE_MAX_AGE.total_seconds())} s; nothing was charged"
        )
    count = max(settings.CHAIN_FEE_HISTORY_BLOCKS, 2)
    rows = list(GasFeeBlock.objects.filter(chain_id=newest.chain_id).order_by("-block_number")[:count])
    rows.reverse()
    return rows


def _symbol_known(symbol: str) -> bool:
    return (
        ExchangeMarket.objects.filter(symbol=symbol).exists()
        or Candle.objects.filter(symbol=symbol, timeframe="1m").exists()
    )


def _book_top(symbol: str, side: str) -> ExchangeMarket:
    """The fresh ticker of `symbol` with the deepest top of book on the order's side (the ask
    for a buy, the bid for a sell)."""
    since = timezone.now() - MARKET_MAX_AGE
    price_f, size_f = ("ask", "ask_size") if side == "buy" else ("bid", "bid_size")
    rows = ExchangeMarket.objects.filter(
        Q(symbol=symbol, updated_at__gte=since, bid__gt=0, ask__gt=0)
        & Q(**{f"{size_f}__gt": 0, f"{price_f}__isnull": False})
    )
    best = max(rows, key=lambda m: float(getattr(m, price_f)) * float(getattr(m, size_f)), default=None)
    if best is None:
        raise ProductFailed(f"no fresh book top for {symbol}; nothing was charged")
    return best


def _eth_usd() -> ExchangeMarket | None:
    """The freshest dollar price of ETH, the gas token (for the attacker's gas in USD)."""
    since = timezone.now() - MARKET_MAX_AGE
    return (
        ExchangeMarket.objects.filter(
            base__in=("ETH", "WETH"), quote__in=USD_QUOTES, last_price__gt=0, updated_at__gte=since
        )
        .order_by("-updated_at")
        .first()
    )


def _available() -> tuple[bool, str]:
    newest = GasFeeBlock.objects.order_by("-observed_at").values_list("observed_at", flat=True).first()
    if newest is None or timezone.now() - newest > FEE_MAX_AGE:
        return False, "no fresh fee history"
    return True, ""


def mev_exec_hint_pack(call: ProductCall) -> dict[str, Any]:
    params = cast(MevExecHintParams, call.params)
    elasticity, denominator = settings.CHAIN_EIP1559_ELASTICITY, settings.CHAIN_EIP1559_DENOMINATOR
    blocks = _fee_window()
    newest = blocks[-1]
    prov = Provenance(
        method=METHOD.format(
            n=len(blocks),
            chain=newest.chain_id,
            e=elasticity,
            d=denominator,
            h=HEADROOM_BLOCKS,
            atr=ATR_PERIOD,
            share=SPLIT_MAX_BOOK_SHARE,
            private=PRIVATE_BOOK_SHARE,
            vol=VOL_HIGH_PCTL,
            gas=SWAP_GAS,
        ),
        max_age=FEE_MAX_AGE,
    )
    for replay in sorted({b.replay for b in blocks}):
        part = [b for b in blocks if b.replay == replay]
        prov.add(
            source=part[-1].source, replay=replay, as_of=max(b.observed_at for b in part), items=len(part)
        )

    # Base fee: now, trend, next block.
    fees = np.array([float(b.base_fee_wei) for b in blocks])
    now_wei = int(newest.base_fee_wei)
    slope = float(np.polyfit(np.arange(len(fees)), fees, 1)[0]) if len(fees) > 1 else 0.0
    mean_fee = float(np.mean(fees))
    trend_pct = slope * (len(fees) - 1) / mean_fee * 100.0 if mean_fee > 0 else 0.0
    trend = "flat" if abs(trend_pct) < TREND_FLAT_PCT else "rising" if trend_pct > 0 else "falling"
    first_fee = float(blocks[0].base_fee_wei)
    next_wei = eip1559_next_base_fee(
        now_wei, newest.gas_used_ratio, elasticity=elasticity, denominator=denominator
    )
    node_next = int(newest.next_base_fee_wei) if newest.next_base_fee_wei is not None else None

    # Tips for each inclusion target.
    tips = [t for t in (b.priority_fee_wei(TIP_BASIS_PERCENTILE) for b in blocks) if t is not None]
    if not tips:
        raise ProductFailed("the stored fee history has no priority-fee percentiles; nothing was charged")
    by_target = inclusion_tips(tips)
    headroom = (1 + Fraction(elasticity - 1, denominator)) ** HEADROOM_BLOCKS
    max_tip = by_target[MAX_FEE_TIP_TARGET]
    max_fee = math.ceil(max(next_wei, node_next or 0) * headroom) + max_tip

    # The market: book top, volatility, tolerance. A symbol the service has no market for at
    # all is 404 (the hold is released: nothing is charged), one gone quiet is 503.
    if not _symbol_known(params.symbol):
        raise NotFound(f"no market data for {params.symbol}; nothing was charged")
    top = _book_top(params.symbol, params.side)
    prov.add(source=top.source, venue=top.exchange, replay=top.replay, as_of=top.updated_at)
    series = ohlcv(params.symbol, "1m", limit=VOL_BARS)
    if series is None or len(series) <= ATR_PERIOD or series.last_at is None:
        raise ProductFailed(f"not enough 1-minute candles of {params.symbol}; nothing was charged")
    if timezone.now() - series.last_at > MARKET_MAX_AGE:
        raise ProductFailed(f"no fresh 1-minute candles of {params.symbol}; nothing was charged")
    prov.add(
        source=series.source,
        venue=series.exchange,
        replay=series.replay,
        as_of=series.last_at,
        items=len(series),
    )
    regime = regime_classify(series, indicator_columns(series))
    if regime.atr_pct is None:
        raise ProductFailed(
            f"the 1-minute volatility of {params.symbol} is not computable; nothing was charged"
        )
    atr_bps = regime.atr_pct * 100.0
    bid, ask = float(top.bid or 0), float(top.ask or 0)
    half_spread_bps = (ask - bid) / ((ask + bid) / 2) / 2 * 10_000
    tolerance_bps = half_spread_bps + atr_bps
    price = ask if params.side == "buy" else bid
    size = float((top.ask_size if params.side == "buy" else top.bid_size) or 0)
    top_usd = price * size
    book_share = params.notional_usdc / top_usd
    high_vol = regime.vol_percentile is not None and regime.vol_percentile >= VOL_HIGH_PCTL

    # Private orderflow: why, if at all.
    extractable = params.notional_usdc * tolerance_bps / 10_000
    eth = _eth_usd()
    attacker_gas_usd = None
    if eth is not None and eth.last_price is not None:
        prov.add(source=eth.source, venue=eth.exchange, replay=eth.replay, as_of=eth.updated_at)
        attacker_gas_usd = 2 * SWAP_GAS * (next_wei + max_tip) / WEI_PER_ETH * float(eth.last_price)
    reasons = []
    if book_share > PRIVATE_BOOK_SHARE:
        reasons.append(
            f"the order is {book_share:.2f}x the top-of-book size on {top.exchange} "
            f"(over {PRIVATE_BOOK_SHARE:.0%}): it moves the price, and a public pending swap shows searchers which way"
        )
    if high_vol:
        reasons.append(
            f"1-minute volatility is at its {regime.vol_percentile:.0f}th percentile of the last {len(series)} "
            "minutes: a tolerance wide enough to fill in a fast market is what sandwiches feed on"
        )
    if attacker_gas_usd is not None and extractable > attacker_gas_usd:
        reasons.append(
            f"a sandwich would pay: up to ${extractable:,.2f} is extractable within a {tolerance_bps:.1f} bps "
            f"tolerance against about ${attacker_gas_usd:,.4f} of gas for the attacker's two swaps"
        )

    slices, capped = split_slices(params.notional_usdc, top_size_usd=top_usd)
    fresh_required(prov, "fresh fee history")
    return {
        "symbol": params.symbol,
        "side": params.side,
        "notional_usdc": params.notional_usdc,
        "chain_id": newest.chain_id,
        "blocks": len(blocks),
        "newest_block": newest.block_number,
        "base_fee": {
            "now_wei": now_wei,
            "now_gwei": _gwei(now_wei),
            "trend": trend,
            "trend_pct": round(trend_pct, 3),
            "change_pct": round((now_wei - first_fee) / first_fee * 100.0, 3) if first_fee > 0 else 0.0,
            "mean_gas_used_ratio": round(float(np.mean([b.gas_used_ratio for b in blocks])), 6),
            "next_block_wei": next_wei,
            "next_block_gwei": _gwei(next_wei),
            "node_next_block_wei": node_next,
        },
        "priority_fees": [
            {"inclusion_pct": x, "priority_fee_wei": wei, "priority_fee_gwei": _gwei(wei)}
            for x, wei in by_target.items()
        ],
        "max_fee": {
            "max_fee_per_gas_wei": max_fee,
            "max_fee_per_gas_gwei": _gwei(max_fee),
            "max_priority_fee_per_gas_wei": max_tip,
            "headroom_blocks": HEADROOM_BLOCKS,
        },
        "slippage": {
            "tolerance_bps": round(tolerance_bps, 2),
            "half_spread_bps": round(half_spread_bps, 2),
            "atr_1m_bps": round(atr_bps, 2),
            "volatility_percentile": round(regime.vol_percentile, 1)
            if regime.vol_percentile is not None
            else None,
            "high_volatility": high_vol,
            "venue": top.exchange,
            "top_price": price,
            "top_size_base": size,
            "top_size_usd": round(top_usd, 2),
            "book_share": round(book_share, 4),
        },
        "private_orderflow": {
            "recommended": bool(reasons),
            "reasons": reasons,
            "max_extractable_usd": round(extractable, 2),
            "attacker_gas_usd": round(attacker_gas_usd, 6) if attacker_gas_usd is not None else None,
        },
        "split": {
            "slices": len(slices),
            "slice_usdc": slices,
            "max_book_share": round(max(slices) / top_usd, 4),
            "capped": capped,
        },
        **prov.out(),
    }


register(
    ProductSpec(
        sku="mev_exec_hint_pack",
        path="/trading/mev-exec-hint-pack",
        headline="MEV execution hints: private routing and slippage guidance",
        price="0.18",
        family="trading",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=14,
        teaser="mev-exec-hint-pack",
        teasers=(
            TeaserSpec(
                name="mev-exec-hint-pack",
                title="MEV execution hint pack",
                summary="Private routing and slippage guidance.",
                highlights=("route", "slippage"),
            ),
        ),
        run=mev_exec_hint_pack,
        params=MevExecHintParams,
        output=MevExecHintOut,
        available=_available,
    )
)
