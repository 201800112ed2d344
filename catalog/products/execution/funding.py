"""The funding hedge desk: funding-rate carry per venue and across venues, with its hedge legs
and the fees that break it even."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from catalog.analytics.execution.books import BPS, quotes_fresh, since
from catalog.analytics.execution.fees import taker_bps
from catalog.analytics.execution.funding import funding_annualized_pct, funding_hours
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import FundingRate
from catalog.products.execution.common import BOOK_MAX_AGE, FeeOut, _fees_out, _r, _rf
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)

# Funding is read by the same pass (the rate changes each funding period, the reading each pass).
FUNDING_MAX_AGE = timedelta(minutes=30)


class CarryOut(BaseModel):
    venue: str
    perp: str
    spot: str | None = Field(description="the venue's spot market of the same base, when ingested")
    rate: float = Field(description="the funding rate of the current period (longs pay shorts when positive)")
    period_hours: float
    annualized_pct: float
    legs: Literal["long spot, short perp", "short spot, long perp"]
    basis_bps: float | None = Field(description="perp mark against the venue's spot mid")
    round_trip_fee_bps: float | None = Field(description="four taker legs: open and close spot and perp")
    breakeven_days: float | None


class CrossCarryOut(BaseModel):
    base: str
    short_venue: str = Field(description="short the perp here (the higher funding: receive it)")
    long_venue: str = Field(description="long the perp here (the lower funding)")
    short_perp: str
    long_perp: str
    short_annualized_pct: float
    long_annualized_pct: float
    differential_annualized_pct: float = Field(description="what the pair collects a year, before fees")
    round_trip_fee_bps: float | None
    breakeven_days: float | None


class FundingHedgeOut(Provenanced):
    cross_venue: list[CrossCarryOut] = Field(description="largest funding differential first")
    cash_and_carry: list[CarryOut] = Field(description="largest |annualized funding| first")
    fees: list[FeeOut]


def _funding_latest() -> list[FundingRate]:
    rows = FundingRate.objects.filter(observed_at__gte=since(FUNDING_MAX_AGE)).order_by(
        "exchange", "symbol", "-observed_at", "-funding_at"
    )
    latest: dict[tuple[str, str], FundingRate] = {}
    for row in rows:
        latest.setdefault((row.exchange, row.symbol), row)
    return list(latest.values())


def _breakeven(fee_bps: float | None, annualized_pct: float) -> float | None:
    daily_bps = abs(annualized_pct) * 100 / 365
    if fee_bps is None or daily_bps <= 0:
        return None
    return _r(fee_bps / daily_bps, 2)


def funding_hedge_desk(call: ProductCall) -> dict[str, Any]:
    prov = Provenance(
        method="latest funding rate per venue perpetual, annualized as rate x periods a year (period "
        "from the venue's funding times, else 8 h); cash-and-carry per venue, cross-venue carry = short "
        "the higher-funding perp, long the lower; breakeven = round-trip taker fees / daily carry",
        max_age=FUNDING_MAX_AGE,
    )
    readings = _funding_latest()
    if not readings:
        raise ProductFailed("no funding rates newer than 30 minutes; nothing was charged")
    for f in readings:
        prov.add(source=f.source, venue=f.exchange, replay=f.replay, as_of=f.observed_at)
    fresh_required(prov, "funding rates")
    spots = {
        (q.exchange, q.symbol): q
        for q in quotes_fresh(
            seen_since=since(BOOK_MAX_AGE), symbols={f.symbol.split(":")[0] for f in readings}
        )
    }
    carries: list[dict[str, Any]] = []
    by_base: dict[str, list[tuple[FundingRate, float]]] = {}
    for f in readings:
        hours = funding_hours(f.funding_at, f.next_funding_at)
        rate = float(f.rate)
        annual = funding_annualized_pct(rate, hours)
        spot_symbol = f.symbol.split(":")[0]
        spot = spots.get((f.exchange, spot_symbol))
        taker = taker_bps(f.exchange)
        basis = None
        if spot is not None and f.mark_price is not None:
            basis = (float(f.mark_price) - spot.mid) / spot.mid * BPS
        fee = 4 * taker if taker is not None else None
        carries.append(
            {
                "venue": f.exchange,
                "perp": f.symbol,
                "spot": spot_symbol if spot is not None else None,
                "rate": rate,
                "period_hours": _rf(hours, 3),
                "annualized_pct": _rf(annual, 4),
                "legs": "long spot, short perp" if rate >= 0 else "short spot, long perp",
                "basis_bps": _r(basis, 3),
                "round_trip_fee_bps": _r(fee, 3),
                "breakeven_days": _breakeven(fee, annual),
            }
        )
        by_base.setdefault(spot_symbol.split("/")[0], []).append((f, annual))
    carries.sort(key=lambda c: abs(c["annualized_pct"]), reverse=True)
    cross: list[dict[str, Any]] = []
    for base, legs in by_base.items():
        for i, (fa, aa) in enumerate(legs):
            for fb, ab in legs[i + 1 :]:
                if fa.exchange == fb.exchange:
                    continue
                (hi, hi_ann), (lo, lo_ann) = ((fa, aa), (fb, ab)) if aa >= ab else ((fb, ab), (fa, aa))
                ta, tb = taker_bps(hi.exchange), taker_bps(lo.exchange)
                fee = 2 * (ta + tb) if ta is not None and tb is not None else None
                diff = hi_ann - lo_ann
                cross.append(
                    {
                        "base": base,
                        "short_venue": hi.exchange,
                        "long_venue": lo.exchange,
                        "short_perp": hi.symbol,
                        "long_perp": lo.symbol,
                        "short_annualized_pct": _rf(hi_ann, 4),
                        "long_annualized_pct": _rf(lo_ann, 4),
                        "differential_annualized_pct": _rf(diff, 4),
                        "round_trip_fee_bps": _r(fee, 3),
                        "breakeven_days": _breakeven(fee, diff),
                    }
                )
    cross.sort(key=lambda c: c["differential_annualized_pct"], reverse=True)
    return {
        "cross_venue": cross[:50],
        "cash_and_carry": carries[:50],
        "fees": _fees_out([f.exchange for f in readings]),
        **prov.out(),
    }


def _fresh_funding() -> tuple[bool, str]:
    if FundingRate.objects.filter(observed_at__gte=since(FUNDING_MAX_AGE)).exists():
        return True, ""
    return False, "no funding rates newer than 30 minutes"


register(
    ProductSpec(
        sku="funding_hedge_desk",
        path="/trading/funding-hedge-desk",
        headline="Funding hedge desk: funding-rate carry and hedge legs",
        price="0.15",
        family="trading",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=26,
        session_callable=True,
        teaser="funding-hedge-desk",
        teasers=(
            TeaserSpec(
                name="funding-hedge-desk",
                title="Funding hedge desk",
                summary="Funding-rate carry opportunities with their hedge legs.",
                highlights=("carry", "hedge legs"),
            ),
        ),
        run=funding_hedge_desk,
        output=FundingHedgeOut,
        pure=True,
        available=_fresh_funding,
    )
)
