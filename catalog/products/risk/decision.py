"""The risk decision pack: one symbol's checks before a trade (regime, market, funding, events),
each passed, warned or failed (the checks are catalog/analytics/desks.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics import desks
from catalog.analytics.macro import calendar_sources, macro_gate
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.regime import regime_classify
from catalog.analytics.series import ohlcv, timeframe_delta
from catalog.models import Candle, ExchangeMarket
from catalog.products.registry import ProductCall, ProductFailed, ProductSpec, TeaserSpec, register

# ccxt unified spot symbols: "BTC/USDT" (a perpetual's ":USDT" settle suffix allowed).
SYMBOL_PATTERN = r"^[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,12}(:[A-Za-z0-9]{1,12})?$"


class DecisionPackParams(QueryModel):
    symbol: Annotated[
        str, Field(max_length=40, pattern=SYMBOL_PATTERN, description="the symbol to trade (e.g. BTC/USDT)")
    ] = "BTC/USDT"
    side: Literal["long", "short"] = Field("long", description="long or short")
    notional_usdc: float = Field(10000.0, gt=0, le=1e10, description="the order's size in USDC")

    @field_validator("symbol")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class DecisionCheckOut(BaseModel):
    name: Literal["regime", "volatility", "liquidity", "spread", "funding", "macro"]
    status: Literal["pass", "warn", "fail"]
    value: float | str | None = Field(
        description=(
            "regime: the label; volatility: ATR% percentile; liquidity: notional as % of 24h volume; "
            "spread: bps; funding: annualized %, positive when longs pay; macro: high-impact events"
        )
    )
    threshold: str
    detail: str = Field(description="one sentence")


class DecisionRegimeOut(BaseModel):
    exchange: str
    label: str
    since: str | None
    bars: int
    adx: float | None
    trend_atrs: float | None
    vol_percentile: float | None
    atr_pct: float | None


class DecisionMarketOut(BaseModel):
    exchange: str = Field(description="the deepest venue with a fresh ticker")
    last_price: float | None
    bid: float
    ask: float
    spread_bps: float
    volume_24h_usd: float
    book_top_usd: float = Field(description="the size at the touch the side would take (ask for a long)")
    updated_at: str | None


class DecisionFundingOut(BaseModel):
    exchange: str
    symbol: str
    rate: float = Field(description="per funding period, a fraction")
    period_hours: float
    apr_pct: float = Field(description="annualized, %; positive: longs pay shorts")
    funding_at: str | None


class DecisionEventOut(BaseModel):
    title: str
    starts_at: str | None
    impact: str
    country: str
    category: str
    source: str


class RiskDecisionPackOut(Provenanced):
    symbol: str
    side: Literal["long", "short"]
    notional_usdc: float
    verdict: Literal["go", "caution", "no_go"] = Field(description="no_go on any fail, caution on any warn")
    summary: str
    checks: list[DecisionCheckOut]
    passes: int
    warnings: int
    failures: int
    regime: DecisionRegimeOut | None
    market: DecisionMarketOut | None
    funding: list[DecisionFundingOut]
    macro_window_hours: float
    macro_events: list[DecisionEventOut] = Field(description="high-impact events in the window")


def _has_fresh_1h() -> tuple[bool, str]:
    # The newest bar's close time (open + 1h) within the freshness limit.
    since = timezone.now() - desks.CANDLES_1H_MAX_AGE - timeframe_delta("1h")
    if Candle.objects.filter(timeframe="1h", open_time__gte=since).exists():
        return True, ""
    return False, "no fresh 1h candles have been ingested"


def _symbol_known(call: ProductCall) -> int | None:
    """price_for: a symbol the feeds do not carry (neither candles nor a ticker, while others
    have them) is a 404 before any payment. Before anything is ingested no symbol is known to
    be wrong: the call is offered (402) and, paid, answers 503 uncharged."""
    symbol = getattr(call.params, "symbol", "")
    if (
        not Candle.objects.filter(symbol=symbol, timeframe="1h").exists()
        and not ExchangeMarket.objects.filter(symbol=symbol).exists()
        and (Candle.objects.exists() or ExchangeMarket.objects.exists())
    ):
        raise NotFound(f"no market data for symbol {symbol}")
    return None


def risk_decision_pack(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, DecisionPackParams) else DecisionPackParams()
    now = timezone.now()
    symbol, side, notional = params.symbol, params.side, params.notional_usdc
    gate = macro_gate(now=now)
    hours = gate.hours
    prov = Provenance(
        method=(
            "pass/warn/fail checks: 1h regime vs side, ATR% percentile, notional vs 24h volume and "
            "book top, spread, perp funding annualized vs side, the macro gate (high-impact "
            f"calendar events within ±{hours:g} h); no_go on a fail, caution on a warn"
        ),
        max_age=desks.CANDLES_1H_MAX_AGE,
        now=now,
    )
    series = ohlcv(symbol, "1h")
    if not desks.series_fresh(series, max_age=desks.CANDLES_1H_MAX_AGE, now=now) or series is None:
        raise ProductFailed(f"no fresh 1h candles of {symbol}; nothing was charged")
    prov.add(
        source=series.source,
        venue=series.exchange,
        replay=series.replay,
        as_of=series.last_at,
        items=len(series),
    )
    regime = regime_classify(series)
    markets = desks.markets_fresh(since=now - desks.TICKER_MAX_AGE, symbol=symbol)
    market = markets[0] if markets else None
    if market is not None:
        prov.add(
            source=market.source or "manual",
            venue=market.exchange,
            replay=market.replay,
            as_of=market.updated_at,
        )
    funding = desks.funding_latest(symbol, now=now)
    for f in funding:
        prov.add(source=f.source, venue=f.exchange, replay=f.replay, as_of=f.observed_at)
    if gate.calendar_rows:
        calendar_sources(prov)
    inputs = desks.DecisionInputs(
        regime=regime,
        market=market,
        funding=funding,
        macro=gate,
    )
    checks = desks.decision_checks(inputs, side=side, notional=notional, now=now)
    outcome = desks.verdict(checks)
    failing = [c.name for c in checks if c.status == "fail"]
    warning = [c.name for c in checks if c.status == "warn"]
    summary = {
        "no_go": f"No go for a {side} of {notional:,.0f} USDC in {symbol}: {', '.join(failing)} failed.",
        "caution": f"Caution for a {side} of {notional:,.0f} USDC in {symbol}: check {', '.join(warning)}.",
        "go": f"Go for a {side} of {notional:,.0f} USDC in {symbol}: every check passed.",
    }[outcome]
    top = None
    if market is not None:
        price = (market.ask if side == "long" else market.bid) or 0
        size = (market.ask_size if side == "long" else market.bid_size) or 0
        top = {
            "exchange": market.exchange,
            "last_price": float(market.last_price) if market.last_price is not None else None,
            "bid": float(market.bid or 0),
            "ask": float(market.ask or 0),
            "spread_bps": desks.spread_bps(market),
            "volume_24h_usd": float(market.volume_24h_usd or 0),
            "book_top_usd": float(price) * float(size),
            "updated_at": iso(market.updated_at),
        }
    return {
        "symbol": symbol,
        "side": side,
        "notional_usdc": notional,
        "verdict": outcome,
        "summary": summary,
        "checks": [
            {
                "name": c.name,
                "status": c.status,
                "value": c.value,
                "threshold": c.threshold,
                "detail": c.detail,
            }
            for c in checks
        ],
        "passes": sum(c.status == "pass" for c in checks),
        "warnings": len(warning),
        "failures": len(failing),
        "regime": {
            "exchange": series.exchange,
            "label": regime.label,
            "since": iso(regime.since),
            "bars": regime.bars,
            "adx": regime.adx,
            "trend_atrs": regime.trend_atrs,
            "vol_percentile": regime.vol_percentile,
            "atr_pct": regime.atr_pct,
        },
        "market": top,
        "funding": [
            {
                "exchange": f.exchange,
                "symbol": f.symbol,
                "rate": f.rate,
                "period_hours": f.period_hours,
                "apr_pct": f.apr_pct,
                "funding_at": iso(f.funding_at),
            }
            for f in funding
        ],
        "macro_window_hours": hours,
        "macro_events": [
            {
                "title": e.title,
                "starts_at": iso(e.starts_at),
                "impact": e.impact,
                "country": e.country,
                "category": e.category,
                "source": e.source,
            }
            for e in gate.blocking
        ],
        **prov.out(),
    }


register(
    ProductSpec(
        sku="risk_decision_pack",
        path="/risk/decision-pack",
        headline="Risk decision pack: pre-trade checklist, regime and calendar gates in one call",
        price="0.12",
        family="risk",
        tier="B",
        hero=True,
        rank=9,
        client_bundle=True,
        session_callable=True,
        teaser="pre-trade-checklist",
        teasers=(
            TeaserSpec(
                name="pre-trade-checklist",
                title="Pre-trade checklist",
                summary="The checks a desk runs before opening risk: regime, calendar, liquidity.",
                highlights=("regime gate", "calendar gate", "go / no-go"),
            ),
        ),
        run=risk_decision_pack,
        params=DecisionPackParams,
        output=RiskDecisionPackOut,
        price_for=_symbol_known,
        available=_has_fresh_1h,
    )
)
