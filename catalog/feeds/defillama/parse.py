"""DefiLlama's yield pools (GET https://yields.llama.fi/pools), parsed and bounded.

The answer is {"status": "success", "data": [pool, ...]} with every pool DefiLlama tracks
(~20k). A pool: "pool" (its id, a UUID), "chain", "project", "symbol", "poolMeta", "tvlUsd",
"apy" (total, percent), "apyBase" and "apyReward" (its split; either may be null),
"apyMean30d", "stablecoin", "ilRisk" ("yes"/"no"), "exposure" ("single"/"multi"),
"outlier", "predictions" ({"predictedClass", "predictedProbability", "binnedConfidence"}),
"rewardTokens", "underlyingTokens"."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from catalog.feeds.jsonbody import number, text, usd
from catalog.feeds.registry import FeedError


@dataclass(frozen=True, kw_only=True)
class Pool:
    pool_id: str
    chain: str
    project: str
    symbol: str
    pool_meta: str
    tvl_usd: Decimal
    apy: float | None
    apy_base: float | None
    apy_reward: float | None
    apy_mean_30d: float | None
    stablecoin: bool
    il_risk: str
    exposure: str
    outlier: bool
    predicted_class: str
    predicted_probability: float | None
    reward_tokens: list[str] = field(default_factory=list)
    underlying_tokens: list[str] = field(default_factory=list)


def _tokens(value: Any) -> list[str]:
    return [str(t)[:100] for t in value if isinstance(t, str)][:20] if isinstance(value, list) else []


def pool_parse(raw: dict[str, Any]) -> Pool | None:
    pool_id = text(raw.get("pool"), max_length=100)
    tvl = usd(raw.get("tvlUsd"))
    if not pool_id or tvl is None:
        return None
    base, reward = number(raw.get("apyBase")), number(raw.get("apyReward"))
    apy = number(raw.get("apy"))
    if apy is None and (base is not None or reward is not None):
        apy = (base or 0.0) + (reward or 0.0)
    found = raw.get("predictions")
    predictions: dict[str, Any] = found if isinstance(found, dict) else {}
    return Pool(
        pool_id=pool_id,
        chain=text(raw.get("chain"), max_length=64),
        project=text(raw.get("project"), max_length=100),
        symbol=text(raw.get("symbol"), max_length=200),
        pool_meta=text(raw.get("poolMeta"), max_length=200),
        tvl_usd=tvl,
        apy=apy,
        apy_base=base,
        apy_reward=reward,
        apy_mean_30d=number(raw.get("apyMean30d")),
        stablecoin=raw.get("stablecoin") is True,
        il_risk=text(raw.get("ilRisk"), max_length=8),
        exposure=text(raw.get("exposure"), max_length=16),
        outlier=raw.get("outlier") is True,
        predicted_class=text(predictions.get("predictedClass"), max_length=32),
        predicted_probability=number(predictions.get("predictedProbability")),
        reward_tokens=_tokens(raw.get("rewardTokens")),
        underlying_tokens=_tokens(raw.get("underlyingTokens")),
    )


def pools_parse(payload: Any, *, min_tvl_usd: float, max_pools: int) -> list[Pool]:
    """The pools at or above the TVL floor, largest TVL first, at most `max_pools` (one row per
    pool id: the first, i.e. largest, wins)."""
    unique: dict[str, Pool] = {}
    for pool in pools_ranked(payload, min_tvl_usd=min_tvl_usd):
        if len(unique) >= max_pools:
            break
        unique.setdefault(pool.pool_id, pool)
    return list(unique.values())


def pools_ranked(payload: Any, *, min_tvl_usd: float) -> list[Pool]:
    """Every pool at or above the TVL floor, largest TVL first, a pool id the list repeats
    as many times as it does (the feed records that as an oddity)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        raise FeedError("DefiLlama pools answered no data list")
    if payload.get("status") not in (None, "success"):
        raise FeedError(f"DefiLlama pools answered status {str(payload.get('status'))[:40]!r}")
    floor = Decimal(str(min_tvl_usd))
    pools = [p for p in (pool_parse(x) for x in payload["data"] if isinstance(x, dict)) if p is not None]
    return sorted((p for p in pools if p.tvl_usd >= floor), key=lambda p: p.tvl_usd, reverse=True)
