"""Tokenized signals and scalp setups (/tokenized/signals, /tokenized/scalp): the signal desk's
scoring and the broker scalp desk's setups on the watchlist tokens' own markets, with each
token's premium over its underlying. (Split from catalog/products/tokenized.py, whose
watchlist reading they share.)"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics import desks
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.series import timeframe_delta
from catalog.analytics.signals import (
    BUY_THRESHOLD,
    MIN_BARS,
    PRIMARY,
    STRONG_THRESHOLD,
    TIMEFRAME_WEIGHTS,
    SymbolSignal,
    fresh_limit,
    symbol_signal,
)
from catalog.editorial.intel import frame_payload, regime_payload, signal_provenance
from catalog.models import Candle, TokenizedAsset
from catalog.products.registry import (
    EXECUTION_INTELLIGENCE,
    CreditRoute,
    ProductCall,
    ProductFailed,
    ProductSpec,
    fresh_required,
    register,
)
from catalog.products.signals import SignalLabel, SignalRegimeOut, SignalTimeframeOut
from catalog.products.tokenized import (
    DOLLAR_QUOTES,
    ReferenceMarketOut,
    Row,
    SkippedAssetOut,
    _f,
    _has_fresh_tokens,
    _watchlist,
)
from catalog.products.trading import ScalpNoSetupOut, ScalpSetupOut, scalp_scan


# --- tokenized_signals / tokenized_scalp: the signal and scalp maths on the tokens' own markets ---
class TokenSignalOut(BaseModel):
    symbol: str = Field(description="the token (watchlist symbol)")
    name: str
    underlying: str
    market: str = Field(description="the exchange symbol whose candles were scored (e.g. PAXG/USDT)")
    venue: str = Field(description="the venue of the entry price")
    label: SignalLabel
    score: float = Field(
        description="the deciding score in [-1, 1]: the timeframes' scores weighted by timeframe_weights, "
        "or in a 1h range the 1h score alone (mean reversion inside the band)"
    )
    side: Literal["long", "short"] | None = Field(description="null for NEUTRAL")
    decided_by: str = Field(description="the timeframe(s) whose score set the label: 1h (a range), 1h+1m")
    decision: str = Field(description="how the label and levels were decided, in a sentence")
    confidence: float
    agreement: float
    entry: float = Field(description="the freshest close (1m when ingested, else 1h)")
    stop: float | None
    target: float | None
    atr: float | None = Field(description="the 1h ATR the levels are measured in")
    horizon_hours: float
    regime: SignalRegimeOut = Field(description="the token's 1h regime")
    timeframes: list[SignalTimeframeOut]
    reference_market: ReferenceMarketOut
    reference_open: bool = Field(description="the underlying's own market trades now")
    underlying_price: float | None
    underlying_stale: bool | None
    premium_pct: float | None = Field(description="token price / underlying reference - 1, percent")
    premium_bps: float | None
    premium_direction: Literal["premium", "discount", "par"] | None


class TokenizedSignalsOut(Provenanced):
    count: int
    thresholds: dict[str, float] = Field(description="|score| for BUY/SELL and STRONG_BUY/STRONG_SELL")
    timeframe_weights: dict[str, float]
    signals: list[TokenSignalOut] = Field(description="strongest conviction first (|score| x confidence)")
    skipped: list[SkippedAssetOut]


class TokenScalpSetupOut(ScalpSetupOut):
    token: str
    underlying: str
    reference_market: ReferenceMarketOut
    reference_open: bool = Field(description="the underlying's own market trades now")
    reference_next_open: str = Field(description="ISO 8601 UTC: the underlying market's next open")
    premium_bps: float | None = Field(description="the token's premium over its underlying, bps")


class TokenScalpNoSetupOut(ScalpNoSetupOut):
    token: str
    reference_open: bool


class TokenizedScalpOut(Provenanced):
    timeframe: str = Field(description="the candles the setups are read on")
    tokens_considered: int
    max_spread_share_pct: float
    setups: list[TokenScalpSetupOut]
    no_setup: list[TokenScalpNoSetupOut]
    skipped: list[SkippedAssetOut]


def token_market(row: Row, timeframe: str) -> str | None:
    """The exchange symbol a token's candles are stored under: its listing's, else the first
    dollar market with candles of that timeframe."""
    candidates = [row.listing.symbol] if row.listing is not None else []
    candidates += [f"{row.asset.symbol}/{q}" for q in DOLLAR_QUOTES]
    for symbol in dict.fromkeys(candidates):
        if Candle.objects.filter(symbol=symbol, timeframe=timeframe).exists():
            return symbol
    return None


def _premium_fields(r: Row) -> dict[str, Any]:
    p = r.premium
    return {
        "reference_market": r.state.market,
        "reference_open": r.state.open,
        "underlying_price": _f(r.asset.underlying_price) if p is not None else None,
        "underlying_stale": r.stale,
        "premium_pct": p.pct if p else None,
        "premium_bps": p.bps if p else None,
        "premium_direction": p.direction if p else None,
    }


TOKEN_SIGNALS_METHOD = (
    "per watchlist token, the signal desk's scoring (EMA20/EMA50 cross and slope, ADX/DI, RSI, MACD, "
    "Bollinger %b votes on the token's 1h and 1m candles, weighted by regime; ATR stop/target) with the "
    "token's premium over its underlying's reference quote"
)


def token_signals_payload(now: datetime) -> dict[str, Any]:
    rows, skipped = _watchlist(now, listings=True)
    found: list[tuple[Row, SymbolSignal]] = []
    for r in rows:
        market = token_market(r, PRIMARY)
        sig = symbol_signal(market, now=now) if market is not None else None
        if sig is None:
            skipped.append(
                SkippedAssetOut(symbol=r.asset.symbol, reason=f"fewer than {MIN_BARS} {PRIMARY} candles")
            )
        elif sig.stale:
            skipped.append(SkippedAssetOut(symbol=r.asset.symbol, reason=f"{PRIMARY} candles stale"))
        else:
            found.append((r, sig))
    if not found:
        raise ProductFailed("no tokenized asset has fresh candles with enough history; nothing was charged")
    found.sort(key=lambda x: (-abs(x[1].score) * x[1].confidence, x[0].asset.symbol))
    prov = signal_provenance([s for _, s in found], now=now)
    prov.method = TOKEN_SIGNALS_METHOD
    for r, _ in found:
        if r.premium is not None:
            a = r.asset
            prov.add(
                source=a.underlying_source or "manual", replay=a.underlying_replay, as_of=a.underlying_as_of
            )
    fresh_required(prov, "fresh candles of a tokenized asset")
    out = []
    for r, sig in found:
        a = r.asset
        out.append(
            TokenSignalOut(
                symbol=a.symbol,
                name=a.name,
                underlying=a.underlying,
                market=sig.symbol,
                venue=sig.venue,
                label=sig.label,
                score=sig.score,
                side=sig.side,
                decided_by=sig.decided_by,
                decision=sig.decision,
                confidence=sig.confidence,
                agreement=sig.agreement,
                entry=round(sig.entry, 10),
                stop=None if sig.stop is None else round(sig.stop, 10),
                target=None if sig.target is None else round(sig.target, 10),
                atr=None if sig.atr is None else round(sig.atr, 10),
                horizon_hours=round(sig.horizon.total_seconds() / 3600, 2),
                regime=SignalRegimeOut.model_validate(regime_payload(sig.primary.regime)),
                timeframes=[SignalTimeframeOut.model_validate(frame_payload(f)) for f in sig.frames],
                **_premium_fields(r),
            ).model_dump()
        )
    return {
        "count": len(out),
        "thresholds": {"buy_sell": BUY_THRESHOLD, "strong": STRONG_THRESHOLD},
        "timeframe_weights": dict(TIMEFRAME_WEIGHTS),
        "signals": out,
        "skipped": [s.model_dump() for s in skipped],
        **prov.out(),
    }


def tokenized_signals(call: ProductCall) -> dict[str, Any]:
    return token_signals_payload(timezone.now())


def _has_token_candles(timeframe: str, max_age: timedelta) -> tuple[bool, str]:
    ok, why = _has_fresh_tokens(with_underlying=False)
    if not ok:
        return ok, why
    bases = list(TokenizedAsset.objects.filter(on_watchlist=True).values_list("symbol", flat=True))
    markets = [f"{b}/{q}" for b in bases for q in DOLLAR_QUOTES]
    since = timezone.now() - max_age - timeframe_delta(timeframe)
    if Candle.objects.filter(symbol__in=markets, timeframe=timeframe, open_time__gte=since).exists():
        return True, ""
    return False, f"no fresh {timeframe} candles of a tokenized asset"


register(
    ProductSpec(
        sku="tokenized_signals",
        path="/tokenized/signals",
        headline="Tokenized signals: indicator signals on tokenized assets, with their premium",
        price="0.08",
        family="tokenized",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=48,
        credit_routes=(
            CreditRoute(
                route="api/a2a/tokenized/signals",
                operation_id="tokenized_signals",
                summary="Tokenized asset signals",
            ),
        ),
        run=tokenized_signals,
        output=TokenizedSignalsOut,
        pure=True,
        available=lambda: _has_token_candles(PRIMARY, fresh_limit(PRIMARY)),
    )
)


TOKEN_SCALP_METHOD = (
    "per watchlist token with a fresh listing, the broker scalp desk's setups on its 1m candles (RSI "
    "extreme + Bollinger touch in a range, EMA20 pullback in a trend; 1h regime context), stop "
    f"{desks.SCALP_STOP_ATR:g} ATR, skipped when the spread exceeds "
    "{share:g}% of the target distance; with the underlying's market state (NYSE regular hours or "
    "spot metals hours)"
)


def token_scalp_payload(now: datetime) -> dict[str, Any]:
    rows, skipped = _watchlist(now, listings=True)
    prov = Provenance(
        method=TOKEN_SCALP_METHOD.format(share=settings.SCALP_MAX_SPREAD_SHARE * 100),
        max_age=desks.CANDLES_1M_MAX_AGE,
        now=now,
    )
    setups: list[dict[str, Any]] = []
    none: list[dict[str, Any]] = []
    considered = 0
    for r in rows:
        a, m = r.asset, r.listing
        if m is None or now - m.updated_at > desks.TICKER_MAX_AGE:
            skipped.append(
                SkippedAssetOut(symbol=a.symbol, reason="no fresh book top of the token's listing")
            )
            continue
        scan = scalp_scan(m, now=now, prov=prov)
        if not scan.scanned:
            skipped.append(SkippedAssetOut(symbol=a.symbol, reason=scan.reason))
            continue
        considered += 1
        prov.add(source=m.source or "manual", venue=m.exchange, replay=m.replay, as_of=m.updated_at)
        if scan.setup is None:
            none.append(
                TokenScalpNoSetupOut(
                    symbol=m.symbol,
                    exchange=scan.exchange,
                    context_regime=scan.context_regime,
                    reason=scan.reason,
                    token=a.symbol,
                    reference_open=r.state.open,
                ).model_dump()
            )
            continue
        setups.append(
            TokenScalpSetupOut(
                **scan.setup,
                token=a.symbol,
                underlying=a.underlying,
                reference_market=r.state.market,
                reference_open=r.state.open,
                reference_next_open=iso(r.state.next_open) or "",
                premium_bps=r.premium.bps if r.premium else None,
            ).model_dump()
        )
    if not considered:
        raise ProductFailed(
            "no tokenized asset has a fresh listing and fresh 1m candles; nothing was charged"
        )
    fresh_required(prov, "fresh 1m candles of a tokenized asset")
    return {
        "timeframe": "1m",
        "tokens_considered": considered,
        "max_spread_share_pct": float(settings.SCALP_MAX_SPREAD_SHARE) * 100,
        "setups": setups,
        "no_setup": none,
        "skipped": [s.model_dump() for s in skipped],
        **prov.out(),
    }


def tokenized_scalp(call: ProductCall) -> dict[str, Any]:
    return token_scalp_payload(timezone.now())


register(
    ProductSpec(
        sku="tokenized_scalp",
        path="/tokenized/scalp",
        headline="Tokenized scalp: 1m setups on tokenized assets, with their underlying's market state",
        price="0.1",
        family="tokenized",
        intel_only=True,
        product_type=EXECUTION_INTELLIGENCE,
        rank=49,
        credit_routes=(
            CreditRoute(
                route="api/a2a/tokenized/scalp",
                operation_id="tokenized_scalp",
                summary="Tokenized scalp setups",
            ),
        ),
        run=tokenized_scalp,
        output=TokenizedScalpOut,
        pure=True,
        available=lambda: _has_token_candles("1m", desks.CANDLES_1M_MAX_AGE),
    )
)
