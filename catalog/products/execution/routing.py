"""Routing: the intent solver (a notional filled across the venues' books at the best price after
fees) and the tokenized auto-route (the same for the tokenized assets' listings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, cast

from django.db.models import Q
from pydantic import AfterValidator, BaseModel, Field

from a2a_service.core.errors import NotFound
from a2a_service.core.inputs import QueryModel
from catalog.analytics.execution.books import BPS, Book, Side, books_fresh, since
from catalog.analytics.execution.fees import fees_for
from catalog.analytics.execution.routing import consolidated_mid, route_best
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import ExchangeMarket, OrderBook, TokenizedAsset
from catalog.products.execution.common import (
    BOOK_MAX_AGE,
    Notional,
    Symbol,
    _books_for,
    _fresh_books,
    _known_symbol,
    _price,
    _r,
    _rf,
)
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)


class IntentParams(QueryModel):
    symbol: Symbol = "BTC/USDT"
    side: Literal["buy", "sell"] = "buy"
    notional_usdc: Notional = 10000


class RouteLegOut(BaseModel):
    venue: str
    symbol: str
    notional_quote: float
    share_pct: float
    base_qty: float
    avg_price: float
    taker_fee_bps: float
    fee_quote: float
    levels_used: int


class SingleVenueOut(BaseModel):
    venue: str
    symbol: str
    avg_price: float | None
    cost_bps: float | None = Field(description="all-in (price impact + fee) against the reference mid")
    unfilled_quote: float
    complete: bool


class RouteOut(BaseModel):
    reference_mid: float = Field(description="mid of the best bid and best ask across the venues")
    legs: list[RouteLegOut]
    split: bool = Field(description="more than one venue is cheaper than any single one")
    filled_quote: float
    filled_base: float
    unfilled_quote: float = Field(description="notional the ingested books could not absorb")
    expected_avg_price: float | None = Field(description="before fees")
    all_in_avg_price: float | None = Field(description="with the taker fees in")
    cost_bps: float | None = Field(description="all-in against the reference mid; positive costs")
    fees_quote: float
    best_single_venue: SingleVenueOut | None
    split_saves_bps: float | None = Field(description="the best single venue's cost minus the split's")
    alternatives: list[SingleVenueOut]


class IntentOut(Provenanced, RouteOut):
    symbol: str
    side: Literal["buy", "sell"]
    notional_usdc: float


def _route(books: Sequence[Book], side: Side, notional: float) -> dict[str, Any]:
    fees = {b.exchange: f for b in books if (f := fees_for(b.exchange).taker) is not None}
    cmid = consolidated_mid(books)
    if cmid is None or not fees:
        raise ProductFailed("no order book with both sides and a known fee; nothing was charged")
    route = route_best(books, side=side, notional=notional, fees=fees)
    symbols = {b.exchange: b.symbol for b in books}
    singles: list[tuple[float | None, dict[str, Any]]] = []
    for book in books:
        if book.exchange not in fees:
            continue
        single = route_best([book], side=side, notional=notional, fees=fees)
        complete = single.unfilled_quote <= notional * 1e-9
        single_cost = single.cost_bps(cmid) if complete else None
        singles.append(
            (
                single_cost,
                {
                    "venue": book.exchange,
                    "symbol": book.symbol,
                    "avg_price": _price(single.avg_price),
                    "cost_bps": _r(single_cost, 3),
                    "unfilled_quote": _rf(single.unfilled_quote, 2),
                    "complete": complete,
                },
            )
        )
    # Cheapest complete fill first; venues whose book cannot absorb the notional last.
    singles.sort(key=lambda x: (x[0] is None, x[0] if x[0] is not None else 0.0))
    best_cost, best = singles[0] if singles and singles[0][0] is not None else (None, None)
    cost = route.cost_bps(cmid)
    filled = route.filled_quote
    return {
        "reference_mid": _price(cmid),
        "legs": [
            {
                "venue": leg.exchange,
                "symbol": symbols[leg.exchange],
                "notional_quote": _rf(leg.quote, 2),
                "share_pct": _rf(leg.quote / filled * 100 if filled else 0.0, 2),
                "base_qty": _rf(leg.base, 8),
                "avg_price": _price(leg.avg_price),
                "taker_fee_bps": _rf(fees[leg.exchange] * BPS, 3),
                "fee_quote": _rf(leg.fee_quote, 4),
                "levels_used": leg.levels_used,
            }
            for leg in route.legs
        ],
        "split": len(route.legs) > 1,
        "filled_quote": _rf(filled, 2),
        "filled_base": _rf(route.filled_base, 8),
        "unfilled_quote": _rf(route.unfilled_quote, 2),
        "expected_avg_price": _price(route.avg_price),
        "all_in_avg_price": _price(route.all_in_price),
        "cost_bps": _r(cost, 3),
        "fees_quote": _rf(route.fees_quote, 4),
        "best_single_venue": best,
        "split_saves_bps": _r(best_cost - cost, 3) if best_cost is not None and cost is not None else None,
        "alternatives": [out for _cost, out in singles],
    }


def intent_solver(call: ProductCall) -> dict[str, Any]:
    params = cast(IntentParams, call.params)
    prov = Provenance(
        method="every level of every venue's order book ranked by its price after the venue's taker fee "
        "and taken best first until the notional is filled (the cheapest split); cost against the "
        "consolidated mid",
        max_age=BOOK_MAX_AGE,
    )
    books = _books_for(params.symbol, prov)
    return {
        "symbol": params.symbol,
        "side": params.side,
        "notional_usdc": params.notional_usdc,
        **_route(books, params.side, params.notional_usdc),
        **prov.out(),
    }


register(
    ProductSpec(
        sku="intent_solver_desk",
        path="/trading/intent-solver",
        headline="Intent solver desk: solver quotes for a trading intent",
        price="0.25",
        family="trading",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=16,
        teaser="intent-solver",
        teasers=(
            TeaserSpec(
                name="intent-solver",
                title="Intent solver",
                summary="Solver quotes for a trading intent.",
                highlights=("quotes", "best route"),
            ),
        ),
        run=intent_solver,
        params=IntentParams,
        output=IntentOut,
        price_for=_known_symbol,
        available=_fresh_books,
    )
)


AUTO_ROUTE_NOTICE = (
    "Advice for manual routing only: this service places no orders and holds no funds; check each "
    "venue's book before you trade."
)


class AutoRouteParams(QueryModel):
    symbol: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=40,
            pattern=r"^[A-Za-z0-9]+$",
            description="a tokenized asset of the watchlist (e.g. PAXG); empty for every one",
        ),
        AfterValidator(lambda v: v.upper() if v else v),
    ] = None
    side: Literal["buy", "sell"] = "buy"
    notional_usdc: Notional = 10000


class TokenizedRouteOut(RouteOut):
    asset: str
    name: str
    underlying: str
    listings: int = Field(description="venue markets of the asset (dollar quotes) with a fresh book")


class AutoRouteOut(Provenanced):
    manual_routing_only: Literal[True]
    notice: str
    side: Literal["buy", "sell"]
    notional_usdc: float
    routes: list[TokenizedRouteOut]


def _tokenized_assets(symbol: str | None) -> list[TokenizedAsset]:
    qs = TokenizedAsset.objects.filter(on_watchlist=True)
    if symbol:
        qs = qs.filter(symbol=symbol)
    return list(qs.order_by("symbol"))


def _known_tokenized(call: ProductCall) -> int | None:
    symbol = getattr(call.params, "symbol", None)
    if symbol and not TokenizedAsset.objects.filter(symbol=symbol, on_watchlist=True).exists():
        raise NotFound(f"{symbol} is not a tokenized asset of the watchlist")
    return None


def tokenized_auto_route(call: ProductCall) -> dict[str, Any]:
    params = cast(AutoRouteParams, call.params)
    prov = Provenance(
        method="per tokenized asset, its dollar-quoted listings' order books ranked level by level by "
        "price after each venue's taker fee and taken best first (the cheapest split); advice only",
        max_age=BOOK_MAX_AGE,
    )
    routes = []
    for asset in _tokenized_assets(params.symbol):
        listings = ExchangeMarket.objects.filter(base=asset.symbol).filter(
            Q(quote="USDT") | Q(quote="USDC") | Q(quote="USD")
        )
        books = books_fresh(
            seen_since=since(BOOK_MAX_AGE), symbols=set(listings.values_list("symbol", flat=True))
        )
        if not books:
            continue
        for b in books:
            prov.add(source=b.source, venue=b.exchange, replay=b.replay, as_of=b.at)
        try:
            route = _route(books, params.side, params.notional_usdc)
        except ProductFailed:
            continue
        routes.append(
            {
                "asset": asset.symbol,
                "name": asset.name,
                "underlying": asset.underlying,
                "listings": len(books),
                **route,
            }
        )
    if not routes:
        raise ProductFailed("no order book of a tokenized asset newer than 5 minutes; nothing was charged")
    fresh_required(prov, "order books")
    return {
        "manual_routing_only": True,
        "notice": AUTO_ROUTE_NOTICE,
        "side": params.side,
        "notional_usdc": params.notional_usdc,
        "routes": routes,
        **prov.out(),
    }


def _fresh_tokenized_books() -> tuple[bool, str]:
    bases = list(TokenizedAsset.objects.filter(on_watchlist=True).values_list("symbol", flat=True))
    symbols = ExchangeMarket.objects.filter(base__in=bases).values_list("symbol", flat=True)
    if OrderBook.objects.filter(observed_at__gte=since(BOOK_MAX_AGE), symbol__in=symbols).exists():
        return True, ""
    return False, "no order books of tokenized assets newer than 5 minutes"


register(
    ProductSpec(
        sku="tokenized_auto_route",
        path="/tokenized/auto-route",
        headline="Tokenized auto-route: venue routing for tokenized assets (manual routing only)",
        price="0.2",
        family="tokenized",
        tier="D",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=18,
        run=tokenized_auto_route,
        params=AutoRouteParams,
        output=AutoRouteOut,
        price_for=_known_tokenized,
        available=_fresh_tokenized_books,
    )
)
