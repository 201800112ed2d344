"""The cross-venue prediction products (their specs are in catalog/products/prediction.py):
divergence alerts over the matched pairs (catalog/analytics/prediction_match.py), the day's
top 3 markets, and the resolution calendar. Every figure comes from the Polymarket and Kalshi
feeds' rows (PredictionMarket, PredictionPrice, PredictionMatch); with nothing fresh a product
answers 503 and charges nothing."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.prediction_match import fee_per_contract, fee_rate, gap_of, match_counts
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import PredictionMarket, PredictionMatch, PredictionPrice
from catalog.products.registry import ProductCall, fresh_required

# Both venues are polled every 300 s: markets older than six passes are not today's prices.
PREDICTION_MAX_AGE = timedelta(minutes=30)
# Top 3 score weights (stated in the method): how much money stands behind the price, how far
# it moved in a day, and how soon it settles.
TOP3_WEIGHTS = {"liquidity": 0.4, "move_24h": 0.4, "time_to_close": 0.2}
# Time-to-close urgency = 1 / (1 + days / TOP3_CLOSE_DAYS): a market closing within the week
# weighs about twice one closing in a month.
TOP3_CLOSE_DAYS = 7.0
MOVE_WINDOW = timedelta(hours=24)
RULES_EXCERPT = 300


def _fresh_since(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - PREDICTION_MAX_AGE


def _fresh_markets() -> Any:
    return PredictionMarket.objects.filter(observed_at__gte=_fresh_since())


def markets_available() -> tuple[bool, str]:
    if _fresh_markets().exists():
        return True, ""
    return False, "no prediction markets newer than 30 minutes"


def divergence_available() -> tuple[bool, str]:
    since = _fresh_since()
    pairs = PredictionMatch.objects.exclude(status=PredictionMatch.Status.REJECTED).filter(
        market_a__observed_at__gte=since, market_b__observed_at__gte=since
    )
    if pairs.filter(
        Q(status=PredictionMatch.Status.CONFIRMED)
        | Q(confidence__gte=settings.PREDICTION_MATCH_MIN_CONFIDENCE)
    ).exists():
        return True, ""
    return False, "no cross-venue pairs with prices newer than 30 minutes"


def _f(value: Any) -> float | None:
    return float(value) if value is not None else None


def _prov_add(prov: Provenance, markets: list[PredictionMarket]) -> None:
    for m in markets:
        prov.add(source=m.source or m.venue, venue=m.venue, replay=m.replay, as_of=m.observed_at)


class MarketRefOut(BaseModel):
    venue: str
    market_id: str = Field(description="the venue's market id (Polymarket id, Kalshi ticker)")
    question: str
    yes_price: float | None = Field(
        description="the yes price in [0, 1] (the venue's midpoint or last trade)"
    )
    liquidity_usd: float | None
    volume_usd: float | None
    closes_at: str | None
    resolution_source: str = Field(description="the venue's named resolution source ('' when it names none)")
    url: str


def _ref(m: PredictionMarket) -> dict[str, Any]:
    return {
        "venue": m.venue,
        "market_id": m.external_id,
        "question": m.question,
        "yes_price": _f(m.yes_price),
        "liquidity_usd": _f(m.liquidity_usd),
        "volume_usd": _f(m.volume_usd),
        "closes_at": iso(m.closes_at),
        "resolution_source": m.resolution_source,
        "url": m.url,
    }


# === divergence alerts =========================================================================
class DivergenceQuery(QueryModel):
    limit: int = Limit(20)
    min_confidence: Annotated[
        float | None,
        Field(
            ge=0,
            le=1,
            description="only pairs at or over this confidence (default PREDICTION_MATCH_MIN_CONFIDENCE)",
        ),
    ] = None


class FeeLegOut(BaseModel):
    venue: str
    side: Literal["yes", "no"] = Field(description="buy yes where it is cheaper, no where it is dearer")
    price: float = Field(description="the price paid for the contract (no = 1 - yes)")
    fee_rate: float = Field(description="the venue's rate in fee = rate x P x (1 - P) per contract")
    fee: float = Field(description="the fee per contract")


class DivergenceOut(BaseModel):
    match_id: int
    a: MarketRefOut
    b: MarketRefOut
    gap: float = Field(description="|yes_a - yes_b| in probability points (gross)")
    fees: float = Field(description="both legs' fees per contract")
    net_gap: float = Field(description="gap minus fees: what buying both sides locks in per contract")
    legs: list[FeeLegOut]
    confidence: float = Field(description="match confidence in [0, 1] (1: confirmed by staff)")
    confirmed: bool
    question_similarity: float
    close_gap_hours: float | None
    rules_mismatch: list[str] = Field(
        description="how the two settle differently (threshold, date, close, source)"
    )
    open_since: str | None = Field(description="when the matching pass first saw this gap net of fees")


class DivergenceAlertsOut(Provenanced):
    generated_at: str
    pairs_checked: int = Field(description="matched pairs (not rejected) with both prices fresh")
    count: int
    divergences: list[DivergenceOut] = Field(
        description="pairs whose gap exceeds both venues' fees, widest net first"
    )


def divergence_alerts_run(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, DivergenceQuery) else DivergenceQuery()
    now = timezone.now()
    since = _fresh_since(now)
    floor = (
        params.min_confidence
        if params.min_confidence is not None
        else settings.PREDICTION_MATCH_MIN_CONFIDENCE
    )
    prov = Provenance(
        method=(
            "question similarity (IDF-weighted token Jaccard + difflib ratio) and close time match markets "
            "across venues; gap = |yes_a - yes_b|, net of fees rate x P x (1 - P) per contract on each leg "
            f"(kalshi {fee_rate('kalshi')}, polymarket {fee_rate('polymarket')}); prices are midpoints, "
            "book depth is not checked"
        ),
        max_age=PREDICTION_MAX_AGE,
        now=now,
    )
    pairs = [
        m
        for m in PredictionMatch.objects.select_related("market_a", "market_b").exclude(
            status=PredictionMatch.Status.REJECTED
        )
        if match_counts(m)
        and (m.status == PredictionMatch.Status.CONFIRMED or m.confidence >= floor)
        and m.market_a.observed_at >= since
        and m.market_b.observed_at >= since
        and m.market_a.status == m.market_b.status == PredictionMarket.Status.OPEN
    ]
    _prov_add(prov, [x for m in pairs for x in (m.market_a, m.market_b)])
    fresh_required(prov, "cross-venue pair with prediction prices")
    rows: list[dict[str, Any]] = []
    for m in pairs:
        a, b = m.market_a, m.market_b
        pa, pb = _f(a.yes_price), _f(b.yes_price)
        if pa is None or pb is None or not (0 < pa < 1 and 0 < pb < 1):
            continue
        # Computed from the markets' current prices (the stored gap is the last pass's).
        gap = gap_of(a.venue, pa, b.venue, pb)
        if gap.net <= 0:
            continue
        cheap_price = min(pa, pb)
        dear_price = max(pa, pb)
        rows.append(
            {
                "match_id": m.pk,
                "a": _ref(a),
                "b": _ref(b),
                "gap": round(gap.gross, 6),
                "fees": round(gap.fee_cheap + gap.fee_dear, 6),
                "net_gap": round(gap.net, 6),
                "legs": [
                    {
                        "venue": gap.buy_yes_venue,
                        "side": "yes",
                        "price": round(cheap_price, 6),
                        "fee_rate": fee_rate(gap.buy_yes_venue),
                        "fee": round(fee_per_contract(gap.buy_yes_venue, cheap_price), 6),
                    },
                    {
                        "venue": gap.buy_no_venue,
                        "side": "no",
                        "price": round(1 - dear_price, 6),
                        "fee_rate": fee_rate(gap.buy_no_venue),
                        "fee": round(fee_per_contract(gap.buy_no_venue, dear_price), 6),
                    },
                ],
                "confidence": round(m.confidence, 4),
                "confirmed": m.status == PredictionMatch.Status.CONFIRMED,
                "question_similarity": round(m.question_similarity, 4),
                "close_gap_hours": m.close_gap_hours,
                "rules_mismatch": [str(x) for x in m.rules_mismatch or []],
                "open_since": iso(m.divergent_since),
            }
        )
    rows.sort(key=lambda r: (-r["net_gap"], r["match_id"]))
    rows = rows[: params.limit]
    return {
        "generated_at": iso(now) or "",
        "pairs_checked": len(pairs),
        "count": len(rows),
        "divergences": rows,
        **prov.out(),
    }


# === top 3 daily ==============================================================================
class Top3ComponentsOut(BaseModel):
    liquidity: float = Field(description="log(1 + liquidity) / the largest among the candidates, in [0, 1]")
    move_24h: float = Field(description="|24 h move| / the largest among the candidates, in [0, 1]")
    time_to_close: float = Field(description=f"1 / (1 + days to close / {TOP3_CLOSE_DAYS:g})")


class Top3MarketOut(MarketRefOut):
    rank: int
    score: float = Field(description="weighted sum of the components (weights in `method`)")
    components: Top3ComponentsOut
    move_24h: float | None = Field(description="yes price now minus 24 h ago (None: no reading that old)")
    hours_to_close: float | None
    why: str


class Top3Out(Provenanced):
    generated_at: str
    candidates: int = Field(description="open, priced, fresh markets scored")
    markets: list[Top3MarketOut]


def _move_24h(market: PredictionMarket, now: datetime) -> float | None:
    """Yes price now minus the reading in force 24 h ago (the newest at or before then), else
    the oldest reading within the day; None without any earlier reading."""
    if market.yes_price is None:
        return None
    start = now - MOVE_WINDOW
    prices = PredictionPrice.objects.filter(market=market)
    before = prices.filter(observed_at__lte=start).order_by("-observed_at", "-id").first()
    if before is None:
        # The oldest reading of the day, if it predates the current one (a single reading is
        # no move on record).
        before = (
            prices.filter(observed_at__gt=start, observed_at__lt=market.observed_at)
            .order_by("observed_at", "id")
            .first()
        )
    if before is None:
        return None
    return float(market.yes_price) - float(before.yes_price)


def top3_daily_run(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    prov = Provenance(
        method=(
            "score = 0.4 x log-liquidity share + 0.4 x |24 h yes move| share (PredictionPrice history) "
            f"+ 0.2 x 1/(1 + days to close/{TOP3_CLOSE_DAYS:g}) over open priced markets; top 3"
        ),
        max_age=PREDICTION_MAX_AGE,
        now=now,
    )
    markets = list(
        _fresh_markets().filter(
            status=PredictionMarket.Status.OPEN, yes_price__isnull=False, closes_at__gt=now
        )
    )
    _prov_add(prov, markets)
    fresh_required(prov, "prediction markets")
    moves = {m.pk: _move_24h(m, now) for m in markets}
    liq_max = max((math.log1p(float(m.liquidity_usd or 0)) for m in markets), default=0.0)
    move_max = max((abs(v) for v in moves.values() if v is not None), default=0.0)
    scored: list[tuple[float, PredictionMarket, dict[str, float]]] = []
    for m in markets:
        move = moves[m.pk]
        days = ((m.closes_at - now).total_seconds() / 86400) if m.closes_at else math.inf
        comp = {
            "liquidity": math.log1p(float(m.liquidity_usd or 0)) / liq_max if liq_max > 0 else 0.0,
            "move_24h": abs(move) / move_max if move is not None and move_max > 0 else 0.0,
            "time_to_close": 1 / (1 + days / TOP3_CLOSE_DAYS) if math.isfinite(days) else 0.0,
        }
        score = sum(TOP3_WEIGHTS[k] * v for k, v in comp.items())
        scored.append((score, m, comp))
    scored.sort(key=lambda x: (-x[0], x[1].pk))
    out: list[dict[str, Any]] = []
    for rank, (score, m, comp) in enumerate(scored[:3], start=1):
        move = moves[m.pk]
        hours = (m.closes_at - now).total_seconds() / 3600 if m.closes_at else None
        lead = max(comp, key=lambda k: TOP3_WEIGHTS[k] * comp[k])
        reasons = {
            "liquidity": f"${float(m.liquidity_usd or 0):,.0f} of liquidity",
            "move_24h": f"moved {move:+.3f} in 24 h" if move is not None else "no move on record",
            "time_to_close": f"closes in {hours / 24:.1f} days" if hours is not None else "no close time",
        }
        why = f"led by {lead.replace('_', ' ')}: " + "; ".join(
            reasons[k] for k in sorted(comp, key=lambda k: -TOP3_WEIGHTS[k] * comp[k])
        )
        out.append(
            {
                **_ref(m),
                "rank": rank,
                "score": round(score, 4),
                "components": {k: round(v, 4) for k, v in comp.items()},
                "move_24h": round(move, 6) if move is not None else None,
                "hours_to_close": round(hours, 2) if hours is not None else None,
                "why": why,
            }
        )
    return {"generated_at": iso(now) or "", "candidates": len(markets), "markets": out, **prov.out()}


# === resolution calendar ======================================================================
class ResolutionCalendarQuery(QueryModel):
    days: int = Field(7, ge=1, le=90, description="markets closing within this many days, 1..90")
    limit: int = Limit(40)
    venue: Annotated[str | None, Field(max_length=64, description="only this venue")] = None


class ResolutionEntryOut(MarketRefOut):
    status: str = Field(description="open, closed (trading ended, not settled) or resolved")
    hours_to_close: float
    rules: str = Field(description=f"the venue's resolution rules, first {RULES_EXCERPT} characters")


class ResolutionCalendarOut(Provenanced):
    generated_at: str
    days: int
    count: int
    markets: list[ResolutionEntryOut] = Field(description="by close time, soonest first")


def resolution_calendar_run(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, ResolutionCalendarQuery) else ResolutionCalendarQuery()
    now = timezone.now()
    prov = Provenance(
        method="markets of the prediction feeds whose close time falls within the window, by close time",
        max_age=PREDICTION_MAX_AGE,
        now=now,
    )
    fresh = _fresh_markets()
    if params.venue:
        fresh = fresh.filter(venue=params.venue)
    # Freshness is the feeds' (any market seen recently), not the window's: an empty window
    # on fresh data is an honest answer.
    _prov_add(prov, list(fresh.order_by("-observed_at")[:1]))
    fresh_required(prov, "prediction markets")
    rows = list(
        fresh.filter(closes_at__gte=now, closes_at__lte=now + timedelta(days=params.days)).order_by(
            "closes_at", "venue", "id"
        )[: params.limit]
    )
    prov = Provenance(method=prov.method, max_age=PREDICTION_MAX_AGE, now=now)
    _prov_add(prov, rows or list(fresh.order_by("-observed_at")[:1]))
    out = [
        {
            **_ref(m),
            "status": m.status,
            "hours_to_close": round((m.closes_at - now).total_seconds() / 3600, 2) if m.closes_at else 0.0,
            "rules": m.rules[:RULES_EXCERPT],
        }
        for m in rows
    ]
    return {
        "generated_at": iso(now) or "",
        "days": params.days,
        "count": len(out),
        "markets": out,
        **prov.out(),
    }
