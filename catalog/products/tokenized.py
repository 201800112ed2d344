"""Tokenized-asset desks computed from the feeds: the premium (or discount) of each tokenized
asset over its underlying's reference price (tokenized_premium), and the session desk that
reads it against the US cash session (tokenized_session_desk).

Inputs: the tokenized watchlist (catalog.models.TokenizedAsset: the token's price from the
exchanges feed, the underlying's reference quote from the equities feed), and the token's
exchange listing (catalog.models.ExchangeMarket: spread and 24h volume). Session times come
from catalog/analytics/market_hours.py (exchange holidays not modelled).

tokenized_signals and tokenized_scalp (catalog/products/tokenized_desks.py) apply the signal
scoring (catalog/analytics/signals.py) and the broker scalp setups (catalog/analytics/desks.py)
to the tokens' own exchange candles (e.g. PAXG/USDT), each with the token's premium and its
underlying's market state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.db.models import F
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.market_hours import (
    NEW_YORK,
    ReferenceState,
    quote_stale,
    reference_state,
    us_last_close,
    us_next_close,
    us_next_open,
    us_session_state,
)
from catalog.analytics.premium import Premium, premium
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import ExchangeMarket, TokenizedAsset
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    fresh_required,
    register,
)

# The exchanges feed rewrites a token's price every minute: a price older than a quarter of an
# hour means that feed is failing, and a premium on it would be a guess.
TOKEN_PRICE_MAX_AGE = timedelta(minutes=15)
# Plan thresholds of the session desk. A gap under 50 bps is inside a round trip's cost on a
# token venue (taker fees on both legs and the spread), so it is not worth a trade plan.
PREMIUM_PLAN_BPS = 50.0
# A spread this wide costs more than a typical taker fee: resting limit orders save it.
WIDE_SPREAD_BPS = 25.0
# Under this 24h dollar volume an order of a few thousand dollars moves the book.
THIN_VOLUME_USD = 250_000.0
DOLLAR_QUOTES = ("USD", "USDT", "USDC")
MARKET_LABEL = {"us_equities": "US cash market", "spot_metals": "spot metals market"}

ReferenceMarketOut = Literal["us_equities", "spot_metals"]
SessionStateOut = Literal["pre_market", "regular", "after_hours", "closed"]


def underlying_max_age() -> timedelta:
    return timedelta(minutes=settings.TOKENIZED_UNDERLYING_MAX_AGE_MINUTES)


# --- output models ---------------------------------------------------------------------------
class SkippedAssetOut(BaseModel):
    symbol: str
    reason: str


class PremiumAssetOut(BaseModel):
    symbol: str
    name: str
    underlying: str
    reference_market: ReferenceMarketOut = Field(description="the underlying's own market")
    reference_open: bool = Field(
        description="the underlying's market trades now (equities: the NYSE regular session)"
    )
    venue: str = Field(description="the exchange whose price is used (the deepest dollar market)")
    last_price: float
    price_as_of: str = Field(description="ISO 8601 UTC: when the token's price was observed")
    underlying_price: float
    underlying_source: str
    underlying_as_of: str = Field(description="ISO 8601 UTC: the underlying quote's own time")
    underlying_age_minutes: float
    underlying_stale: bool = Field(
        description="the quote is older than the limit (before the last close while its market is closed)"
    )
    premium_pct: float = Field(description="last price / underlying price - 1, in percent")
    premium_bps: float = Field(description="the same in basis points")
    direction: Literal["premium", "discount", "par"]
    replay: bool = Field(description="the token's price or the underlying quote came from the replay")


class TokenizedPremiumOut(Provenanced):
    us_session: SessionStateOut
    us_cash_market_open: bool = Field(description="NYSE regular hours, 09:30-16:00 America/New_York, Mon-Fri")
    underlying_max_age_minutes: int
    assets: list[PremiumAssetOut] = Field(description="ranked by absolute premium, largest first")
    count: int
    skipped: list[SkippedAssetOut] = Field(description="watchlist assets without a premium, and why")


class UsSessionOut(BaseModel):
    state: SessionStateOut = Field(
        description="pre-market 04:00, regular 09:30-16:00, after hours to 20:00 (New York)"
    )
    cash_market_open: bool
    now_new_york: str = Field(description="ISO 8601 with the New York offset")
    next_open: str = Field(description="ISO 8601 UTC: the next regular-session open")
    next_close: str = Field(
        description="ISO 8601 UTC: the close of the session in progress, else of the next"
    )
    last_close: str = Field(description="ISO 8601 UTC")
    minutes_to_open: int | None = Field(description="until the next open; null while the session is open")
    minutes_to_close: int | None = Field(description="until the close; null while the session is closed")


class DeskAssetOut(BaseModel):
    symbol: str
    name: str
    underlying: str
    reference_market: ReferenceMarketOut
    reference_open: bool
    venue: str
    last_price: float
    price_as_of: str
    change_24h_pct: float | None
    underlying_price: float | None
    underlying_as_of: str | None
    underlying_stale: bool | None
    premium_pct: float | None
    premium_bps: float | None
    listed: bool = Field(description="an exchange listing (ticker and book top) of the token was ingested")
    spread_bps: float | None = Field(description="the listing's book spread")
    volume_24h_usd: float | None
    plan: list[str] = Field(description="what the figures above suggest, one line each")


class DeskThresholdsOut(BaseModel):
    premium_bps: float = Field(
        description="a premium or discount at least this large gets a convergence plan"
    )
    wide_spread_bps: float
    thin_volume_usd: float
    underlying_max_age_minutes: int


class TokenizedSessionDeskOut(Provenanced):
    session: UsSessionOut
    thresholds: DeskThresholdsOut
    assets: list[DeskAssetOut] = Field(description="ranked by absolute premium; assets without one last")
    count: int
    skipped: list[SkippedAssetOut]


# --- shared reading of the watchlist -------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    asset: TokenizedAsset
    state: ReferenceState
    premium: Premium | None
    stale: bool | None
    listing: ExchangeMarket | None


def _f(value: Any) -> float | None:
    return float(value) if value is not None else None


def _listing(asset: TokenizedAsset) -> ExchangeMarket | None:
    """The token's dollar market on the venue whose price the watchlist shows, else its deepest."""
    markets = ExchangeMarket.objects.filter(base=asset.symbol, quote__in=DOLLAR_QUOTES)
    return (
        markets.filter(exchange=asset.venue).order_by(F("volume_24h_usd").desc(nulls_last=True)).first()
        or markets.order_by(F("volume_24h_usd").desc(nulls_last=True)).first()
    )


def _watchlist(now: datetime, *, listings: bool) -> tuple[list[Row], list[SkippedAssetOut]]:
    rows: list[Row] = []
    skipped: list[SkippedAssetOut] = []
    for asset in TokenizedAsset.objects.filter(on_watchlist=True).order_by("symbol"):
        if asset.last_price is None:
            skipped.append(SkippedAssetOut(symbol=asset.symbol, reason="no price from any exchange yet"))
            continue
        if now - asset.updated_at > TOKEN_PRICE_MAX_AGE:
            skipped.append(
                SkippedAssetOut(
                    symbol=asset.symbol,
                    reason=f"price older than {int(TOKEN_PRICE_MAX_AGE.total_seconds() // 60)} min",
                )
            )
            continue
        state = reference_state(asset.underlying or asset.symbol, now)
        prem = premium(asset.last_price, asset.underlying_price)
        stale = (
            quote_stale(quoted_at=asset.underlying_as_of, state=state, now=now, max_age=underlying_max_age())
            if prem is not None and asset.underlying_as_of is not None
            else None
        )
        rows.append(
            Row(
                asset=asset,
                state=state,
                premium=prem,
                stale=stale,
                listing=_listing(asset) if listings else None,
            )
        )
    return rows, skipped


def _rank(rows: list[Row]) -> list[Row]:
    return sorted(
        rows, key=lambda r: (r.premium is None, -abs(r.premium.bps) if r.premium else 0, r.asset.symbol)
    )


def _provenance(rows: list[Row], *, method: str, now: datetime, listings: bool) -> Provenance:
    prov = Provenance(method=method, max_age=TOKEN_PRICE_MAX_AGE, now=now)
    for r in rows:
        a = r.asset
        prov.add(source=a.source or "manual", venue=a.venue or None, replay=a.replay, as_of=a.updated_at)
        if r.premium is not None:
            prov.add(
                source=a.underlying_source or "manual", replay=a.underlying_replay, as_of=a.underlying_as_of
            )
        if listings and r.listing is not None:
            m = r.listing
            prov.add(source=m.source or "manual", venue=m.exchange, replay=m.replay, as_of=m.updated_at)
    return prov


def _age_minutes(now: datetime, then: datetime) -> float:
    return round(max((now - then).total_seconds(), 0.0) / 60, 1)


def _has_fresh_tokens(*, with_underlying: bool) -> tuple[bool, str]:
    fresh = TokenizedAsset.objects.filter(
        on_watchlist=True, last_price__isnull=False, updated_at__gte=timezone.now() - TOKEN_PRICE_MAX_AGE
    )
    if with_underlying:
        fresh = fresh.filter(underlying_price__isnull=False)
    if fresh.exists():
        return True, ""
    what = "with an underlying reference price " if with_underlying else ""
    return (
        False,
        f"no tokenized asset {what}was priced in the last {int(TOKEN_PRICE_MAX_AGE.total_seconds() // 60)} min",
    )


# --- tokenized_premium --------------------------------------------------------------------------
PREMIUM_METHOD = (
    "premium = token last price (deepest dollar-stablecoin market) / underlying reference quote - 1, "
    "one token = one unit of the underlying; US cash market open = NYSE regular hours 09:30-16:00 "
    "America/New_York Mon-Fri (exchange holidays not modelled); an underlying quote is stale when older "
    "than {max_age} min (older than {max_age} min before the last close while its market is closed)"
)


def premium_payload(now: datetime) -> dict[str, Any]:
    rows, skipped = _watchlist(now, listings=False)
    priced = []
    for r in rows:
        if r.premium is None:
            reason = (
                "no underlying set" if not r.asset.underlying else "no reference price for the underlying yet"
            )
            skipped.append(SkippedAssetOut(symbol=r.asset.symbol, reason=reason))
        else:
            priced.append(r)
    if not priced:
        raise ProductFailed(
            "no tokenized asset has a fresh price and an underlying reference; nothing was charged"
        )
    max_age = settings.TOKENIZED_UNDERLYING_MAX_AGE_MINUTES
    prov = _provenance(priced, method=PREMIUM_METHOD.format(max_age=max_age), now=now, listings=False)
    fresh_required(prov, "fresh tokenized prices")
    assets = []
    for r in _rank(priced):
        a, p = r.asset, r.premium
        assert p is not None and a.last_price is not None and a.underlying_price is not None
        assert a.underlying_as_of is not None
        assets.append(
            PremiumAssetOut(
                symbol=a.symbol,
                name=a.name,
                underlying=a.underlying,
                reference_market=r.state.market,
                reference_open=r.state.open,
                venue=a.venue,
                last_price=float(a.last_price),
                price_as_of=iso(a.updated_at) or "",
                underlying_price=float(a.underlying_price),
                underlying_source=a.underlying_source,
                underlying_as_of=iso(a.underlying_as_of) or "",
                underlying_age_minutes=_age_minutes(now, a.underlying_as_of),
                underlying_stale=bool(r.stale),
                premium_pct=p.pct,
                premium_bps=p.bps,
                direction=p.direction,
                replay=a.replay or a.underlying_replay,
            ).model_dump()
        )
    state = us_session_state(now)
    return {
        "us_session": state,
        "us_cash_market_open": state == "regular",
        "underlying_max_age_minutes": max_age,
        "assets": assets,
        "count": len(assets),
        "skipped": [s.model_dump() for s in skipped],
        **prov.out(),
    }


def tokenized_premium(call: ProductCall) -> dict[str, Any]:
    return premium_payload(timezone.now())


register(
    ProductSpec(
        sku="tokenized_premium",
        path="/tokenized/premium",
        headline="Tokenized premium: premium/discount of tokenized assets over their underlying",
        price="0.08",
        family="tokenized",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=47,
        credit_routes=(
            CreditRoute(
                route="api/a2a/tokenized/premium",
                operation_id="tokenized_premium",
                summary="Tokenized premium digest",
            ),
        ),
        run=tokenized_premium,
        output=TokenizedPremiumOut,
        pure=True,
        available=lambda: _has_fresh_tokens(with_underlying=True),
    )
)


# --- tokenized_session_desk ----------------------------------------------------------------------
def us_session(now: datetime) -> UsSessionOut:
    state = us_session_state(now)
    is_open = state == "regular"
    next_open, next_close = us_next_open(now), us_next_close(now)
    return UsSessionOut(
        state=state,
        cash_market_open=is_open,
        now_new_york=now.astimezone(NEW_YORK).isoformat(timespec="seconds"),
        next_open=iso(next_open) or "",
        next_close=iso(next_close) or "",
        last_close=iso(us_last_close(now)) or "",
        minutes_to_open=None if is_open else int((next_open - now).total_seconds() // 60),
        minutes_to_close=int((next_close - now).total_seconds() // 60) if is_open else None,
    )


def plan_lines(r: Row, *, max_age: timedelta) -> list[str]:
    """The desk's plan for one token, from its premium, its market's state, its book and volume."""
    market = MARKET_LABEL[r.state.market]
    lines: list[str] = []
    if r.premium is None:
        lines.append("no reference price for the underlying: the token's own book is the only price")
    elif r.stale:
        lines.append(
            f"the underlying quote is older than {int(max_age.total_seconds() // 60)} min: "
            "the premium is unreliable until it refreshes"
        )
    else:
        gap, word = abs(r.premium.bps), r.premium.direction
        if gap >= PREMIUM_PLAN_BPS and not r.state.open:
            side = (
                "avoid buying the token before then; holders may sell into the premium"
                if r.premium.bps > 0
                else "avoid selling the token before then; buyers get it below the underlying"
            )
            lines.append(
                f"{word} of {gap:.0f} bps while the {market} is closed: expect convergence toward the "
                f"underlying at the open ({iso(r.state.next_open)}); {side}"
            )
        elif gap >= PREMIUM_PLAN_BPS:
            lines.append(
                f"{word} of {gap:.0f} bps with the {market} open: a gap that persists in session; "
                "trade it only net of both legs' fees and spreads"
            )
        else:
            lines.append(f"{r.premium.bps:+.0f} bps from the underlying: the token tracks its reference")
    m = r.listing
    if m is None or m.spread_bps is None:
        lines.append("no book top ingested for the token: check the venue's book before trading")
    elif float(m.spread_bps) >= WIDE_SPREAD_BPS:
        lines.append(
            f"wide spread ({float(m.spread_bps):.1f} bps on {m.exchange}): use limit orders inside it"
        )
    else:
        half = float(m.spread_bps) / 2
        lines.append(
            f"tight spread ({float(m.spread_bps):.1f} bps on {m.exchange}): a market order costs about "
            f"{half:.1f} bps plus the venue's fee"
        )
    if m is not None and m.volume_24h_usd is not None and float(m.volume_24h_usd) < THIN_VOLUME_USD:
        lines.append(f"thin 24h volume (${float(m.volume_24h_usd):,.0f}): keep orders small and split them")
    return lines


SESSION_METHOD = (
    "US session from the New York clock (pre-market 04:00, regular 09:30-16:00, after hours to 20:00, "
    "Mon-Fri; exchange holidays not modelled); per token: premium over its underlying's reference quote, "
    "24h change, book spread and 24h volume of its exchange listing; plan lines from thresholds "
    f"(premium {PREMIUM_PLAN_BPS:.0f} bps, spread {WIDE_SPREAD_BPS:.0f} bps, volume ${THIN_VOLUME_USD:,.0f})"
)


def session_desk_payload(now: datetime) -> dict[str, Any]:
    rows, skipped = _watchlist(now, listings=True)
    if not rows:
        raise ProductFailed("no tokenized asset has a fresh price; nothing was charged")
    prov = _provenance(rows, method=SESSION_METHOD, now=now, listings=True)
    fresh_required(prov, "fresh tokenized prices")
    max_age = underlying_max_age()
    assets = []
    for r in _rank(rows):
        a, p, m = r.asset, r.premium, r.listing
        assert a.last_price is not None
        assets.append(
            DeskAssetOut(
                symbol=a.symbol,
                name=a.name,
                underlying=a.underlying,
                reference_market=r.state.market,
                reference_open=r.state.open,
                venue=a.venue,
                last_price=float(a.last_price),
                price_as_of=iso(a.updated_at) or "",
                change_24h_pct=_f(a.change_24h_pct),
                underlying_price=_f(a.underlying_price) if p is not None else None,
                underlying_as_of=iso(a.underlying_as_of) if p is not None else None,
                underlying_stale=r.stale,
                premium_pct=p.pct if p else None,
                premium_bps=p.bps if p else None,
                listed=m is not None,
                spread_bps=_f(m.spread_bps) if m else None,
                volume_24h_usd=_f(m.volume_24h_usd) if m else None,
                plan=plan_lines(r, max_age=max_age),
            ).model_dump()
        )
    return {
        "session": us_session(now).model_dump(),
        "thresholds": DeskThresholdsOut(
            premium_bps=PREMIUM_PLAN_BPS,
            wide_spread_bps=WIDE_SPREAD_BPS,
            thin_volume_usd=THIN_VOLUME_USD,
            underlying_max_age_minutes=settings.TOKENIZED_UNDERLYING_MAX_AGE_MINUTES,
        ).model_dump(),
        "assets": assets,
        "count": len(assets),
        "skipped": [s.model_dump() for s in skipped],
        **prov.out(),
    }


def tokenized_session_desk(call: ProductCall) -> dict[str, Any]:
    return session_desk_payload(timezone.now())


register(
    ProductSpec(
        sku="tokenized_session_desk",
        path="/tokenized/session-desk",
        headline="Tokenized session desk: market-hours plan for tokenized equities",
        price="0.2",
        family="tokenized",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=38,
        run=tokenized_session_desk,
        output=TokenizedSessionDeskOut,
        pure=True,
        available=lambda: _has_fresh_tokens(with_underlying=False),
    )
)
