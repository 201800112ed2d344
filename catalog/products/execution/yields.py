"""The DeFi yield scout: DefiLlama's pools ranked by a yield discounted for reward tokens,
impermanent loss and outliers, with risk notes."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, Field

from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.execution.books import since
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import YieldPool
from catalog.products.execution.common import _r, _rf
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# DefiLlama is ingested hourly: three missed passes and the yields are stale.
YIELD_MAX_AGE = timedelta(hours=3)
YIELD_REWARD_HAIRCUT = 0.5  # reward tokens are sold into their own emissions: count half
YIELD_IL_FACTOR = 0.7  # pools with impermanent-loss exposure keep 70 %
YIELD_OUTLIER_FACTOR = 0.5  # DefiLlama's statistical outliers keep half
YIELD_REWARD_HEAVY = 0.5  # more than half the APY paid in reward tokens
YIELD_ABOVE_MEAN = 1.5  # today's APY 1.5x its 30-day mean or more


class YieldParams(QueryModel):
    chain: Annotated[
        str | None, Field(min_length=1, max_length=64, description="only this chain (any case)")
    ] = None
    stablecoin: Annotated[bool, Field(description="stablecoin pools only")] = False
    min_tvl_usd: Annotated[float, Field(ge=0, le=1e13, description="TVL floor in USD")] = 1_000_000
    limit: int = Limit(20)


class YieldPoolOut(BaseModel):
    rank: int
    pool_id: str
    chain: str
    project: str
    symbol: str
    tvl_usd: float
    apy: float
    apy_base: float | None
    apy_reward: float | None
    reward_share: float = Field(description="share of the APY paid in reward tokens, 0-1")
    apy_mean_30d: float | None
    apy_vs_30d_mean: float | None = Field(description="today's APY over its 30-day mean")
    stablecoin: bool
    il_risk: bool = Field(description="exposed to impermanent loss (DefiLlama's ilRisk)")
    exposure: str
    outlier: bool
    sustainable: bool
    flags: list[Literal["reward_heavy", "above_30d_mean", "outlier", "il_risk", "no_base_yield"]]
    risk_adjusted_apy: float


class YieldScoutOut(Provenanced):
    chain: str | None
    stablecoin_only: bool
    min_tvl_usd: float
    matched: int = Field(description="pools that pass the filters (the first `limit` are listed)")
    pools: list[YieldPoolOut]


def _yield_row(p: YieldPool) -> dict[str, Any] | None:
    apy = p.apy
    if apy is None or not math.isfinite(apy):
        return None
    base = p.apy_base if p.apy_base is not None and math.isfinite(p.apy_base) else None
    reward = p.apy_reward if p.apy_reward is not None and math.isfinite(p.apy_reward) else None
    share = (reward or 0.0) / apy if apy > 0 else 0.0
    mean = p.apy_mean_30d if p.apy_mean_30d is not None and p.apy_mean_30d > 0 else None
    vs_mean = apy / mean if mean else None
    il = p.il_risk == "yes"
    flags = []
    if share > YIELD_REWARD_HEAVY:
        flags.append("reward_heavy")
    if vs_mean is not None and vs_mean >= YIELD_ABOVE_MEAN:
        flags.append("above_30d_mean")
    if p.outlier:
        flags.append("outlier")
    if il:
        flags.append("il_risk")
    if not base and reward:
        flags.append("no_base_yield")
    estimate = (base if base is not None else apy - (reward or 0.0)) + YIELD_REWARD_HAIRCUT * (reward or 0.0)
    if mean is not None:
        estimate = min(estimate, mean)
    adjusted = estimate * (YIELD_IL_FACTOR if il else 1.0) * (YIELD_OUTLIER_FACTOR if p.outlier else 1.0)
    return {
        "pool_id": p.pool_id,
        "chain": p.chain,
        "project": p.project,
        "symbol": p.symbol,
        "tvl_usd": float(p.tvl_usd),
        "apy": _rf(apy, 4),
        "apy_base": _r(base, 4),
        "apy_reward": _r(reward, 4),
        "reward_share": _rf(share, 4),
        "apy_mean_30d": _r(mean, 4),
        "apy_vs_30d_mean": _r(vs_mean, 4),
        "stablecoin": p.stablecoin,
        "il_risk": il,
        "exposure": p.exposure,
        "outlier": p.outlier,
        "sustainable": not ({"reward_heavy", "above_30d_mean", "outlier"} & set(flags)),
        "flags": flags,
        "risk_adjusted_apy": _rf(adjusted, 4),
    }


def defi_yield_scout(call: ProductCall) -> dict[str, Any]:
    params = cast(YieldParams, call.params)
    prov = Provenance(
        method=f"risk-adjusted APY = min(base + {YIELD_REWARD_HAIRCUT} x reward, 30-day mean APY) x "
        f"{YIELD_IL_FACTOR} if exposed to impermanent loss x {YIELD_OUTLIER_FACTOR} if an outlier; "
        f"unsustainable when rewards pay over {YIELD_REWARD_HEAVY:.0%} of the APY, the APY is "
        f"{YIELD_ABOVE_MEAN}x its 30-day mean or more, or DefiLlama flags an outlier; ranked by "
        "risk-adjusted APY, then TVL",
        max_age=YIELD_MAX_AGE,
    )
    fresh = YieldPool.objects.filter(observed_at__gte=since(YIELD_MAX_AGE))
    newest = fresh.order_by("-observed_at").first()
    if newest is None:
        raise ProductFailed("no DeFi yield pools ingested in the last 3 hours; nothing was charged")
    qs = fresh.filter(tvl_usd__gte=params.min_tvl_usd)
    if params.chain:
        qs = qs.filter(chain__iexact=params.chain)
    if params.stablecoin:
        qs = qs.filter(stablecoin=True)
    rows = [r for p in qs for r in [_yield_row(p)] if r is not None]
    replays = {bool(x) for x in fresh.values_list("replay", flat=True).distinct()}
    for replay in replays:
        part = fresh.filter(replay=replay)
        latest = part.order_by("-observed_at").first()
        prov.add(
            source=newest.source,
            replay=replay,
            as_of=latest.observed_at if latest else None,
            items=part.count(),
        )
    fresh_required(prov, "DeFi yields")
    rows.sort(key=lambda r: (-r["risk_adjusted_apy"], -r["tvl_usd"], r["pool_id"]))
    for i, row in enumerate(rows, 1):
        row["rank"] = i
    return {
        "chain": params.chain,
        "stablecoin_only": params.stablecoin,
        "min_tvl_usd": params.min_tvl_usd,
        "matched": len(rows),
        "pools": rows[: params.limit],
        **prov.out(),
    }


def _fresh_yields() -> tuple[bool, str]:
    if YieldPool.objects.filter(observed_at__gte=since(YIELD_MAX_AGE)).exists():
        return True, ""
    return False, "no DeFi yield pools ingested in the last 3 hours"


register(
    ProductSpec(
        sku="defi_yield_scout",
        path="/defi/yield-scout",
        headline="DeFi yield scout: ranked yields with risk notes",
        price="0.1",
        family="defi",
        tier="C",
        hero=True,
        rank=17,
        teaser="defi-yield-scout",
        teasers=(
            TeaserSpec(
                name="defi-yield-scout",
                title="DeFi yield scout",
                summary="Yields across lending and liquidity venues, ranked with risk notes.",
                highlights=("ranked yields", "risk notes per venue"),
            ),
            TeaserSpec(
                name="exchange-earn-desk",
                title="Exchange earn desk",
                summary="Earn products across exchanges and on-chain venues, compared.",
                highlights=("rates", "lockups"),
            ),
        ),
        run=defi_yield_scout,
        params=YieldParams,
        output=YieldScoutOut,
        available=_fresh_yields,
    )
)
