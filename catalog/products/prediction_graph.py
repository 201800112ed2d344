"""Prediction products computed from the Polymarket and Kalshi feeds: the event graph (markets
linked by shared entities and co-moving prices) and the starter bundle (a catalog snapshot,
the day's top 3 and the next closing markets). The maths is in catalog/analytics/prediction_graph.py;
the alert subscription pack, which has effects, is in webhooks/products.py."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Annotated, Any, cast

from django.db.models import F, QuerySet
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.prediction_graph import (
    CORRELATION_WINDOW,
    PREDICTION_MAX_AGE,
    GraphNode,
    edges,
    entities,
    hourly_moves,
    move_24h,
)
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import PredictionMarket, PredictionPrice
from catalog.products.registry import (
    ProductCall,
    TeaserSpec,
    fresh_required,
    product,
    product_get,
)

# The starter bundle's cuts: markets per venue in the snapshot, and the next closings.
SNAPSHOT_PER_VENUE = 5
CLOSING_NEXT = 10


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def open_markets() -> QuerySet[PredictionMarket]:
    return PredictionMarket.objects.filter(status=PredictionMarket.Status.OPEN)


def prediction_fresh() -> tuple[bool, str]:
    """Some open market observed within PREDICTION_MAX_AGE (the teasers' cheap check)."""
    if open_markets().filter(observed_at__gte=timezone.now() - PREDICTION_MAX_AGE).exists():
        return True, ""
    return False, "no prediction market observed by the feeds recently"


def _add(prov: Provenance, markets: list[PredictionMarket]) -> None:
    for m in markets:
        prov.add(source=m.source, venue=m.venue, replay=m.replay, as_of=m.observed_at)


def _history(ids: list[int], since: datetime) -> dict[int, list[tuple[datetime, float]]]:
    out: dict[int, list[tuple[datetime, float]]] = defaultdict(list)
    rows = PredictionPrice.objects.filter(market_id__in=ids, observed_at__gte=since).values_list(
        "market_id", "observed_at", "yes_price"
    )
    for market_id, at, price in rows.order_by():
        out[market_id].append((at, float(price)))
    return out


# --- the event graph -------------------------------------------------------------------------


class EventGraphParams(QueryModel):
    category: Annotated[
        str, Field(max_length=64, description="only markets of this category; empty for all")
    ] = ""
    min_weight: float = Field(0.1, ge=0.0, le=1.0, description="drop links lighter than this (0..1)")
    limit: int = Limit(40)


class GraphNodeOut(BaseModel):
    id: str = Field(description="venue:market id")
    venue: str
    market_id: str
    event_id: str = Field(description="the venue's grouping of markets (may be empty)")
    question: str
    category: str
    yes_price: float | None
    volume_usd: float | None
    closes_at: str | None
    entities: list[str] = Field(description="the named entities extracted from the question")


class GraphEdgeOut(BaseModel):
    source: str = Field(description="a node id")
    target: str = Field(description="a node id")
    weight: float = Field(
        description="0..1: the entity Jaccard overlap, averaged with |correlation| when there is one"
    )
    jaccard: float = Field(description="shared entities / all entities of the two questions")
    shared_entities: list[str]
    same_category: bool
    correlation: float | None = Field(
        description="Pearson correlation of the two markets' hourly yes-price moves (None: too little history)"
    )
    points: int = Field(description="hourly moves the two markets have in common")


class EventGraphOut(Provenanced):
    category: str | None
    min_weight: float
    nodes: list[GraphNodeOut] = Field(description="open markets, most traded first")
    edges: list[GraphEdgeOut] = Field(description="links at or above min_weight, heaviest first")


def _node_id(m: PredictionMarket) -> str:
    return f"{m.venue}:{m.external_id}"


@product(
    sku="prediction_event_graph",
    path="/prediction/event-graph",
    headline="Prediction event graph: linked markets and their implied probabilities",
    price="0.1",
    family="prediction",
    rank=31,
    teaser="event-graph",
    teasers=(
        TeaserSpec(
            name="event-graph",
            title="Event graph",
            summary="Linked prediction markets and their implied probabilities.",
            highlights=("links", "implied odds"),
        ),
    ),
    params=EventGraphParams,
    output=EventGraphOut,
    available=prediction_fresh,
)
def prediction_event_graph(call: ProductCall) -> dict[str, Any]:
    params = cast(EventGraphParams, call.params)
    prov = Provenance(
        method="markets linked by shared question entities (capitalized names, tickers, numbers with units; "
        "Jaccard) averaged with |corr| of hourly yes-price moves (numpy) where both have history",
        max_age=PREDICTION_MAX_AGE,
    )
    qs = open_markets()
    if params.category:
        qs = qs.filter(category__iexact=params.category)
    markets = list(qs.order_by(F("volume_usd").desc(nulls_last=True), "id")[: params.limit])
    _add(prov, markets)
    fresh_required(prov, "prediction market observed by the feeds")
    history = _history([m.id for m in markets], prov.now - CORRELATION_WINDOW)
    nodes = [
        GraphNode(
            key=m.id,
            entities=entities(m.question),
            category=m.category,
            moves=hourly_moves(history.get(m.id, [])),
        )
        for m in markets
    ]
    by_id = {m.id: m for m in markets}
    links = edges(nodes, min_weight=params.min_weight)
    return {
        "category": params.category or None,
        "min_weight": params.min_weight,
        "nodes": [
            {
                "id": _node_id(m),
                "venue": m.venue,
                "market_id": m.external_id,
                "event_id": m.event_id,
                "question": m.question,
                "category": m.category,
                "yes_price": _f(m.yes_price),
                "volume_usd": _f(m.volume_usd),
                "closes_at": iso(m.closes_at),
                "entities": sorted(n.entities),
            }
            for m, n in zip(markets, nodes, strict=True)
        ],
        "edges": [
            {
                "source": _node_id(by_id[e.a]),
                "target": _node_id(by_id[e.b]),
                "weight": e.weight,
                "jaccard": e.jaccard,
                "shared_entities": e.shared,
                "same_category": e.same_category,
                "correlation": e.correlation,
                "points": e.points,
            }
            for e in links
        ],
        **prov.out(),
    }


# --- the starter bundle ----------------------------------------------------------------------


class MarketRowOut(BaseModel):
    venue: str
    market_id: str
    question: str
    category: str
    yes_price: float | None
    volume_usd: float | None
    liquidity_usd: float | None
    closes_at: str | None
    url: str


class Top3RowOut(MarketRowOut):
    move_24h: float | None = Field(description="yes-price change over 24 h (from the price history)")
    score: float = Field(description="liquidity (volume when the venue gives none) x |24 h move|")


class StarterBundleOut(Provenanced):
    note: str = Field(description="what 'first purchase' means here")
    snapshot: dict[str, list[MarketRowOut]] = Field(
        description=f"per venue, its {SNAPSHOT_PER_VENUE} most traded open markets"
    )
    top3_source: str = Field(
        description="prediction_top3_daily when that product is built (its content as is), else starter_bundle_score"
    )
    top3: dict[str, Any] = Field(
        description="the day's top 3: prediction_top3_daily's content, or {markets: [Top3Row], method}"
    )
    closing_next: list[MarketRowOut] = Field(description=f"the next {CLOSING_NEXT} open markets to close")


def _row(m: PredictionMarket) -> dict[str, Any]:
    return {
        "venue": m.venue,
        "market_id": m.external_id,
        "question": m.question,
        "category": m.category,
        "yes_price": _f(m.yes_price),
        "volume_usd": _f(m.volume_usd),
        "liquidity_usd": _f(m.liquidity_usd),
        "closes_at": iso(m.closes_at),
        "url": m.url,
    }


TOP3_METHOD = "score = liquidity (volume if none) x |24 h yes-price move|, the three highest with a move"


def top3_own(markets: list[PredictionMarket], *, now: datetime) -> list[dict[str, Any]]:
    """The three open markets with the largest liquidity x |24 h move| (none without history)."""
    history = _history([m.id for m in markets], now - CORRELATION_WINDOW)
    scored = []
    for m in markets:
        move = move_24h(_f(m.yes_price), history.get(m.id, []), now=now)
        size = _f(m.liquidity_usd) or _f(m.volume_usd) or 0.0
        if move is None or move == 0 or size <= 0:
            continue
        scored.append({**_row(m), "move_24h": round(move, 6), "score": round(size * abs(move), 2)})
    scored.sort(key=lambda r: (-r["score"], r["venue"], r["market_id"]))
    return scored[:3]


def _top3(call: ProductCall, markets: list[PredictionMarket], now: datetime) -> tuple[str, dict[str, Any]]:
    # Composes with the top3 product once it is built (another change builds it): its content
    # as it sells it, validated by its own model; until then, this bundle's own documented score.
    spec = product_get("prediction_top3_daily")
    if spec is not None:
        params = spec.params.model_validate({}) if spec.params is not None else None
        sub = ProductCall(
            sku=None, params=params, base_url=call.base_url, payer=call.payer, account=call.account
        )
        content = spec.run(sub)
        if spec.output is not None:
            content = spec.output.model_validate(content).model_dump(mode="json")
        return "prediction_top3_daily", content
    return "starter_bundle_score", {"markets": top3_own(markets, now=now), "method": TOP3_METHOD}


@product(
    sku="prediction_starter_bundle",
    path="/prediction/starter-bundle",
    headline="Prediction starter bundle: top markets, resolution calendar and event graph",
    price="0.39",
    family="prediction",
    tier="A",
    hero=True,
    rank=4,
    teaser="prediction-top3-daily",
    teasers=(
        TeaserSpec(
            name="prediction-partner-feed",
            title="Partner prediction feed",
            summary="Multi-venue prediction markets from partner venues.",
            highlights=("venues", "markets"),
        ),
    ),
    output=StarterBundleOut,
    available=prediction_fresh,
)
def prediction_starter_bundle(call: ProductCall) -> dict[str, Any]:
    prov = Provenance(
        method="open markets per venue by volume, the top 3 ("
        + TOP3_METHOD
        + " unless prediction_top3_daily "
        "is built), and the next closings by close time",
        max_age=PREDICTION_MAX_AGE,
    )
    markets = list(open_markets().order_by(F("volume_usd").desc(nulls_last=True), "id"))
    _add(prov, markets)
    fresh_required(prov, "prediction market observed by the feeds")
    snapshot: dict[str, list[dict[str, Any]]] = {}
    for m in markets:
        rows = snapshot.setdefault(m.venue, [])
        if len(rows) < SNAPSHOT_PER_VENUE:
            rows.append(_row(m))
    closing = sorted(
        (m for m in markets if m.closes_at is not None and m.closes_at >= prov.now),
        key=lambda m: (m.closes_at, m.id),
    )[:CLOSING_NEXT]
    top3_source, top3 = _top3(call, markets, prov.now)
    return {
        "note": "the entry bundle for a first purchase: any buyer may buy it, at its SKU price, as often as "
        "they like; nothing checks earlier purchases",
        "snapshot": dict(sorted(snapshot.items())),
        "top3_source": top3_source,
        "top3": top3,
        "closing_next": [_row(m) for m in closing],
        **prov.out(),
    }
