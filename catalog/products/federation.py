"""Federation signal resale: the signals federated partner agents publish (ingested by
catalog/feeds/federation/ from the partner URLs staff set in the admin), resold with
attribution and checked against our own ingested prices: how far the market has moved from
the partner's entry and whether its stop or target has been touched since."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Any

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import ExchangeMarket, PartnerSignal
from catalog.products.registry import ProductCall, ProductFailed, TeaserSpec, fresh_required, product


class FederationParams(QueryModel):
    symbol: Annotated[str | None, Field(max_length=40, description="only this symbol, e.g. BTC/USDT")] = None
    partner: Annotated[str | None, Field(max_length=64, description="only this partner (its slug)")] = None
    limit: int = Limit(40)


class AttributionOut(BaseModel):
    partner: str = Field(description="the partner's slug")
    name: str
    url: str
    agent_card_url: str | None
    signal_id: str = Field(description="the partner's own id for the signal")


class FederatedSignalOut(BaseModel):
    symbol: str
    side: str = Field(description="long or short")
    entry: float
    stop: float | None
    target: float | None
    timeframe: str | None
    partner_confidence: float | None = Field(description="the partner's own confidence, 0..1, if it gave one")
    published_at: str
    age_minutes: float
    market_price: float | None = Field(description="the newest ingested price of the symbol (mean of venues)")
    market_venues: int
    move_from_entry_pct: float | None = Field(
        description="market price against entry, in the signal's favour (+)"
    )
    status: str = Field(description="open, target_touched, stop_touched or unpriced (no ingested price)")
    attribution: AttributionOut


class FederationOut(Provenanced):
    signals: list[FederatedSignalOut]
    count: int
    partners: int = Field(description="partners with signals in the answer")
    max_age_hours: float


def _max_age() -> timedelta:
    return timedelta(hours=settings.FEDERATION_SIGNAL_MAX_AGE_HOURS)


def _fresh_signals() -> Any:
    since = timezone.now() - _max_age()
    return PartnerSignal.objects.filter(partner__enabled=True, published_at__gte=since).select_related(
        "partner"
    )


def _available() -> tuple[bool, str]:
    if _fresh_signals().exists():
        return True, ""
    return False, "no federated partner has published a signal recently"


def _status(
    side: str, entry: Decimal, price: float | None, stop: Decimal | None, target: Decimal | None
) -> str:
    # Judged on the newest price only: a touch between two ingested prices is not seen.
    if price is None:
        return "unpriced"
    long = side == PartnerSignal.Side.LONG
    if target is not None and (price >= float(target) if long else price <= float(target)):
        return "target_touched"
    if stop is not None and (price <= float(stop) if long else price >= float(stop)):
        return "stop_touched"
    return "open"


@product(
    sku="federation_signal_resale",
    path="/federation/signal-resale",
    headline="Federated partner signals, resold with attribution",
    price="0.15",
    family="federation",
    tier="C",
    intel_only=True,
    rank=15,
    teaser="federation-signal-resale",
    teasers=(
        TeaserSpec(
            name="federation-signal-resale",
            title="Federation signal resale",
            summary="Federated partner signals with attribution.",
            highlights=("partner", "signal"),
        ),
    ),
    params=FederationParams,
    output=FederationOut,
    available=_available,
)
def federation_signal_resale(call: ProductCall) -> dict[str, Any]:
    params = call.params
    assert isinstance(params, FederationParams)
    now = timezone.now()
    qs = _fresh_signals()
    if params.symbol:
        qs = qs.filter(symbol=params.symbol.upper())
    if params.partner:
        qs = qs.filter(partner__slug=params.partner)
    rows = list(qs.order_by("-published_at")[: params.limit])
    if not rows:
        raise ProductFailed(
            "no federated partner signal matches within the freshness window; nothing was charged"
        )
    prov = Provenance(
        method=(
            "partner signals as published (attributed), checked against the mean of the newest ingested "
            "venue prices: move from entry in the signal's favour, stop/target touched on the newest price"
        ),
        max_age=_max_age(),
    )
    symbols = {r.symbol for r in rows}
    markets = list(
        ExchangeMarket.objects.filter(symbol__in=symbols, last_price__isnull=False).values(
            "symbol", "exchange", "last_price", "updated_at", "replay", "source"
        )
    )
    prices: dict[str, list[float]] = {}
    for m in markets:
        if m["last_price"] is not None:  # filtered by the query; the check narrows the type
            prices.setdefault(m["symbol"], []).append(float(m["last_price"]))
        prov.add(
            source=m["source"] or "manual", venue=m["exchange"], replay=m["replay"], as_of=m["updated_at"]
        )
    out = []
    for r in rows:
        prov.add(source=r.source, venue=r.partner.slug, replay=r.replay, as_of=r.observed_at)
        venue_prices = prices.get(r.symbol, [])
        price = sum(venue_prices) / len(venue_prices) if venue_prices else None
        entry = float(r.entry_price)
        move = None
        if price is not None:
            move = (price - entry) / entry * 100.0 * (1 if r.side == PartnerSignal.Side.LONG else -1)
        out.append(
            FederatedSignalOut(
                symbol=r.symbol,
                side=r.side,
                entry=entry,
                stop=float(r.stop_price) if r.stop_price is not None else None,
                target=float(r.target_price) if r.target_price is not None else None,
                timeframe=r.timeframe or None,
                partner_confidence=r.confidence,
                published_at=iso(r.published_at) or "",
                age_minutes=round((now - r.published_at).total_seconds() / 60.0, 1),
                market_price=round(price, 10) if price is not None else None,
                market_venues=len(venue_prices),
                move_from_entry_pct=round(move, 4) if move is not None else None,
                status=_status(r.side, r.entry_price, price, r.stop_price, r.target_price),
                attribution=AttributionOut(
                    partner=r.partner.slug,
                    name=r.partner.name,
                    url=r.partner.url,
                    agent_card_url=r.partner.agent_card_url or None,
                    signal_id=r.external_id,
                ),
            ).model_dump()
        )
    fresh_required(prov, "federated partner signal")
    return {
        "signals": out,
        "count": len(out),
        "partners": len({r.partner_id for r in rows}),
        "max_age_hours": _max_age().total_seconds() / 3600.0,
        **prov.out(),
    }
