"""The desks' maths, from the stored candles, tickers, funding readings and calendar rows.

- Grid range desk: catalog/analytics/grid.py (it prices its steps with `taker_fee` here).
- Broker scalp desk (`scalp_setup`): on 1m candles, with the 1h regime as context, a
  mean-reversion entry in a range (RSI extreme and a Bollinger band touch, target the middle
  band) or a pullback entry in a trend (a dip to the fast EMA that holds the slow one), stops
  SCALP_STOP_ATR ATRs away, and the book's spread weighed against the target distance.
- Decision pack (`decision_checks`): pass / warn / fail checks of a symbol and side (regime,
  volatility percentile, liquidity against the notional, spread, funding against the side,
  the macro calendar) and the go / caution / no_go verdict they give.

Fees are ccxt's static schedule for the venue (`ccxt.<id>().fees`, no network)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Literal

import numpy as np
from django.conf import settings

from catalog.analytics.indicators import Snapshot
from catalog.analytics.macro import MacroGate, macro_gate
from catalog.analytics.regime import Label, Regime
from catalog.analytics.series import Series
from catalog.models import ExchangeMarket, FundingRate

# --- freshness ----------------------------------------------------------------------------------

# A series is as old as its newest bar's close (open + timeframe). The feed rewrites the bar in
# progress every minute, so while it runs that close is ahead of now; two hours behind now
# means about two hours without a pass, and a desk built on 1h candles stops selling.
CANDLES_1H_MAX_AGE = timedelta(hours=2)
# The exchanges feed writes 1m bars every minute: ten minutes old, a scalp setup is history.
CANDLES_1M_MAX_AGE = timedelta(minutes=10)
# Tickers (book tops, 24h volumes) are rewritten every pass (a minute); fifteen minutes
# covers a few failed passes, older book tops say little about the book now.
TICKER_MAX_AGE = timedelta(minutes=15)


def series_fresh(series: Series | None, *, max_age: timedelta, now: datetime) -> bool:
    return series is not None and series.last_at is not None and now - series.last_at <= max_age


# --- venue fees ---------------------------------------------------------------------------------

# When ccxt does not know a venue's fee we assume this taker fee (0.2 %), more than most major
# venues' base tier, so a grid or a scalp priced with it errs on the side of paying its fees.
# Payloads say "assumed" next to it.
TAKER_FEE_ASSUMED = 0.002


@lru_cache(maxsize=64)
def taker_fee(exchange_id: str) -> tuple[float, Literal["ccxt", "assumed"]]:
    """The venue's base-tier taker fee as a fraction (0.001 = 0.1 %) from ccxt's static
    schedule (no network), and where it came from."""
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    if exchange_id in ccxt.exchanges:
        try:
            fee = getattr(ccxt, exchange_id)().fees["trading"]["taker"]
        except (AttributeError, KeyError, TypeError):
            fee = None
        if isinstance(fee, int | float) and fee >= 0:
            return float(fee), "ccxt"
    return TAKER_FEE_ASSUMED, "assumed"


# --- tickers ------------------------------------------------------------------------------------


def markets_fresh(*, since: datetime, symbol: str | None = None) -> list[ExchangeMarket]:
    """Ticker rows updated since `since` with a book top and a 24h dollar volume, deepest first."""
    rows = ExchangeMarket.objects.filter(
        updated_at__gte=since, bid__gt=0, ask__gt=0, volume_24h_usd__isnull=False
    )
    if symbol is not None:
        rows = rows.filter(symbol=symbol)
    return list(rows.order_by("-volume_24h_usd", "spread_bps", "exchange"))


def spread_bps(row: ExchangeMarket) -> float:
    """The book top's spread in bps of the mid (from bid and ask, as stored)."""
    if row.spread_bps is not None:
        return float(row.spread_bps)
    bid, ask = float(row.bid or 0), float(row.ask or 0)
    return (ask - bid) / ((ask + bid) / 2) * 10_000 if ask + bid > 0 else 0.0


def liquid_pairs(*, since: datetime, limit: int) -> list[ExchangeMarket]:
    """The most liquid symbols, one ticker row each: symbols ranked by their deepest venue's
    24h dollar volume, at least SCALP_MIN_VOLUME_USD; per symbol the venue with the tightest
    spread among those that deep (ties: the deeper)."""
    floor = float(settings.SCALP_MIN_VOLUME_USD)
    by_symbol: dict[str, list[ExchangeMarket]] = {}
    for row in markets_fresh(since=since):
        if float(row.volume_24h_usd or 0) >= floor:
            by_symbol.setdefault(row.symbol, []).append(row)
    ranked = sorted(
        by_symbol.values(), key=lambda rows: (-float(rows[0].volume_24h_usd or 0), rows[0].symbol)
    )
    return [
        min(rows, key=lambda r: (spread_bps(r), -float(r.volume_24h_usd or 0))) for rows in ranked[:limit]
    ]


# --- broker scalp desk --------------------------------------------------------------------------

# The textbook RSI extremes: below 30 oversold, above 70 overbought.
SCALP_RSI_LOW, SCALP_RSI_HIGH = 30.0, 70.0
# A pullback in a trend has cooled momentum back to neutral (RSI at or past 50).
SCALP_PULLBACK_RSI = 50.0
# Stops one 1m ATR beyond the entry: outside one bar's ordinary noise.
SCALP_STOP_ATR = 1.0
# A pullback's target: two ATRs in the trend's direction, twice the risk.
SCALP_TREND_TARGET_ATR = 2.0
# A random walk covers d in about (d / ATR)^2 bars; a scalp is given at least 5 and at most
# 60 minutes (past an hour it is not a scalp, and the 1m context has changed).
SCALP_HORIZON_MIN, SCALP_HORIZON_MAX = 5, 60
# Bars the 1m indicators need: the slow EMA (50) and the regime's slope window (10).
SCALP_MIN_BARS = 60

Kind = Literal["mean_reversion", "pullback"]


@dataclass(frozen=True)
class ScalpSetup:
    kind: Kind
    side: Literal["long", "short"]
    entry: float
    stop: float
    target: float
    risk_reward: float
    horizon_minutes: int
    target_bps: float  # the target's distance from the entry, in bps of the entry
    spread_bps: float
    spread_share: float  # of the target distance that crossing the spread costs
    fees_bps: float  # two taker fees (in and out)
    net_target_bps: float  # target_bps less the spread and the fees
    rsi: float
    why: str


@dataclass(frozen=True)
class NoSetup:
    reason: str


def _horizon(distance: float, atr: float) -> int:
    bars = math.ceil((distance / atr) ** 2) if atr > 0 else SCALP_HORIZON_MAX
    return int(min(max(bars, SCALP_HORIZON_MIN), SCALP_HORIZON_MAX))


def scalp_setup(
    series: Series,
    snap: Snapshot,
    *,
    context: Label,
    context_timeframe: str,
    spread: float,
    exchange: str,
) -> ScalpSetup | NoSetup:
    """The setup of the newest 1m bar given the regime context, or why there is none."""
    needed = (snap.rsi, snap.atr, snap.bb_lower, snap.bb_mid, snap.bb_upper, snap.ema_fast, snap.ema_slow)
    if len(series) < SCALP_MIN_BARS or any(v is None for v in needed):
        return NoSetup(f"{len(series)} 1m candles: the indicators need {SCALP_MIN_BARS}")
    rsi, atr = float(snap.rsi or 0), float(snap.atr or 0)
    bb_lower, bb_mid, bb_upper = float(snap.bb_lower or 0), float(snap.bb_mid or 0), float(snap.bb_upper or 0)
    fast, slow = float(snap.ema_fast or 0), float(snap.ema_slow or 0)
    if atr <= 0:
        return NoSetup("the 1m ATR is zero: no movement to trade")
    close, low, high = series.last, float(series.low[-1]), float(series.high[-1])
    ctx = f"{context_timeframe} regime {context}"
    kind: Kind
    if context == "range":
        kind = "mean_reversion"
        if rsi <= SCALP_RSI_LOW and low <= bb_lower:
            side: Literal["long", "short"] = "long"
            target = bb_mid
            why = (
                f"{ctx}: 1m RSI {rsi:.1f} <= {SCALP_RSI_LOW:g} and the bar touched the lower "
                f"Bollinger band ({bb_lower:.6g}); reversion to the middle band"
            )
        elif rsi >= SCALP_RSI_HIGH and high >= bb_upper:
            side = "short"
            target = bb_mid
            why = (
                f"{ctx}: 1m RSI {rsi:.1f} >= {SCALP_RSI_HIGH:g} and the bar touched the upper "
                f"Bollinger band ({bb_upper:.6g}); reversion to the middle band"
            )
        else:
            return NoSetup(
                f"{ctx}: waiting for an RSI extreme at a Bollinger band (1m RSI {rsi:.1f}, "
                f"bands {bb_lower:.6g}..{bb_upper:.6g}, close {close:.6g})"
            )
    elif context in ("up_trend", "down_trend"):
        kind = "pullback"
        up = context == "up_trend"
        if up and fast > slow and low <= fast and close > slow and rsi <= SCALP_PULLBACK_RSI:
            side = "long"
            target = close + SCALP_TREND_TARGET_ATR * atr
            why = (
                f"{ctx}: the 1m pullback touched the EMA20 ({fast:.6g}) and held above the "
                f"EMA50 ({slow:.6g}) with RSI {rsi:.1f} cooled to <= {SCALP_PULLBACK_RSI:g}"
            )
        elif not up and fast < slow and high >= fast and close < slow and rsi >= SCALP_PULLBACK_RSI:
            side = "short"
            target = close - SCALP_TREND_TARGET_ATR * atr
            why = (
                f"{ctx}: the 1m bounce touched the EMA20 ({fast:.6g}) and held below the "
                f"EMA50 ({slow:.6g}) with RSI {rsi:.1f} back to >= {SCALP_PULLBACK_RSI:g}"
            )
        else:
            return NoSetup(
                f"{ctx}: no 1m pullback to the EMA20 that holds the EMA50 (close {close:.6g}, "
                f"EMA20 {fast:.6g}, EMA50 {slow:.6g}, RSI {rsi:.1f})"
            )
    elif context == "high_volatility":
        return NoSetup(f"{ctx}: no scalps while the range of bars is in its top decile")
    else:
        return NoSetup(f"{ctx}: too few candles to classify the market")
    entry = close
    stop = entry - SCALP_STOP_ATR * atr if side == "long" else entry + SCALP_STOP_ATR * atr
    reward = target - entry if side == "long" else entry - target
    if reward <= 0:
        return NoSetup(f"{ctx}: the target ({target:.6g}) is not beyond the entry ({entry:.6g})")
    risk = abs(entry - stop)
    target_bps = reward / entry * 10_000
    share = spread / target_bps
    fee, _ = taker_fee(exchange)
    fees_bps = 2 * fee * 10_000
    limit = float(settings.SCALP_MAX_SPREAD_SHARE)
    if share > limit:
        return NoSetup(
            f"{kind.replace('_', '-')} {side} skipped: the spread ({spread:.2f} bps) is "
            f"{share * 100:.0f}% of the {target_bps:.1f} bps target distance (at most {limit * 100:.0f}%)"
        )
    net = target_bps - spread - fees_bps
    if net <= 0:
        return NoSetup(
            f"{kind.replace('_', '-')} {side} skipped: the spread ({spread:.2f} bps) and two taker fees "
            f"({fees_bps:.1f} bps) eat the whole {target_bps:.1f} bps target distance"
        )
    return ScalpSetup(
        kind=kind,
        side=side,
        entry=entry,
        stop=stop,
        target=target,
        risk_reward=reward / risk,
        horizon_minutes=_horizon(reward, atr),
        target_bps=target_bps,
        spread_bps=spread,
        spread_share=share,
        fees_bps=fees_bps,
        net_target_bps=net,
        rsi=rsi,
        why=why,
    )


# --- decision pack ------------------------------------------------------------------------------

Status = Literal["pass", "warn", "fail"]
Side = Literal["long", "short"]

# The ATR% percentile past which volatility asks for smaller size (warn), and past which the
# market is in the most disorderly twentieth of its window (fail).
DECISION_VOL_WARN_PCTL = 80.0
DECISION_VOL_FAIL_PCTL = 95.0
# The notional as a share of the venue's 24h volume: past 0.5 % the order is a noticeable part
# of the day's flow (warn); past 5 % it moves the price by itself (fail).
DECISION_VOLUME_WARN_SHARE = 0.005
DECISION_VOLUME_FAIL_SHARE = 0.05
# The book top's spread: majors quote well under 10 bps; past 50 bps crossing the spread alone
# costs more than a typical day's edge.
DECISION_SPREAD_WARN_BPS = 10.0
DECISION_SPREAD_FAIL_BPS = 50.0
# Funding paid by the side, annualized: the usual 0.01 %/8h is about 11 % a year; twice that
# is a crowded side (warn); past 60 % the carry alone eats the trade (fail).
DECISION_FUNDING_WARN_APR = 20.0
DECISION_FUNDING_FAIL_APR = 60.0
# Funding readings are observed every pass; one older than 12 h (a period and a half of the
# usual 8 h) says nothing about the next payment.
FUNDING_MAX_AGE = timedelta(hours=12)
# The period assumed when the readings do not show one: 8 h is the usual perpetual period.
FUNDING_PERIOD_DEFAULT = timedelta(hours=8)


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    value: float | str | None
    threshold: str
    detail: str


@dataclass(frozen=True)
class FundingReading:
    exchange: str
    symbol: str
    rate: float  # per period, a fraction
    period_hours: float
    apr_pct: float  # annualized, percent (positive: longs pay shorts)
    funding_at: datetime
    observed_at: datetime
    replay: bool
    source: str


def funding_latest(symbol: str, *, now: datetime) -> list[FundingReading]:
    """Each venue's newest funding reading of the symbol's perpetual (linear in the symbol's
    quote, else any perpetual of its base), observed within FUNDING_MAX_AGE, annualized by the
    funding period the venue's readings show (else FUNDING_PERIOD_DEFAULT)."""
    base, _, rest = symbol.partition("/")
    quote = rest.split(":")[0]
    rows = list(
        FundingRate.objects.filter(
            symbol__startswith=f"{base}/", symbol__contains=":", observed_at__gte=now - FUNDING_MAX_AGE
        ).order_by("exchange", "-funding_at")
    )
    linear = f"{base}/{quote}:{quote}"
    out: list[FundingReading] = []
    for exchange in sorted({r.exchange for r in rows}):
        mine = [r for r in rows if r.exchange == exchange]
        pick = [r for r in mine if r.symbol == linear] or mine
        newest = pick[0]
        same = [r for r in pick if r.symbol == newest.symbol]
        period = FUNDING_PERIOD_DEFAULT
        gaps = [a.funding_at - b.funding_at for a, b in zip(same, same[1:], strict=False)]
        if newest.next_funding_at and newest.next_funding_at > newest.funding_at:
            gaps.insert(0, newest.next_funding_at - newest.funding_at)
        for gap in gaps:
            if timedelta(minutes=30) <= gap <= timedelta(hours=24):
                period = gap
                break
        hours = period / timedelta(hours=1)
        rate = float(newest.rate)
        out.append(
            FundingReading(
                exchange=exchange,
                symbol=newest.symbol,
                rate=rate,
                period_hours=hours,
                apr_pct=rate * (365 * 24 / hours) * 100,
                funding_at=newest.funding_at,
                observed_at=newest.observed_at,
                replay=newest.replay,
                source=newest.source,
            )
        )
    return out


def check_regime(regime: Regime | None, side: Side) -> Check:
    allowed = ("up_trend", "range") if side == "long" else ("down_trend", "range")
    threshold = f"{side} is allowed in: {', '.join(allowed)}"
    if regime is None or regime.label == "unknown":
        return Check("regime", "warn", "unknown", threshold, "Too few 1h candles to classify the regime.")
    label = regime.label
    if label in allowed:
        detail = (
            f"The 1h regime is a range (ADX {regime.adx or 0:.1f}): a {side} is allowed, best near the "
            f"{'lower' if side == 'long' else 'upper'} edge."
            if label == "range"
            else f"The 1h regime is {label.replace('_', '-')} (ADX {regime.adx or 0:.1f}): it favours a {side}."
        )
        return Check("regime", "pass", label, threshold, detail)
    if label == "high_volatility":
        return Check(
            "regime",
            "warn",
            label,
            threshold,
            "The 1h regime is high volatility without a trend: direction is unreliable, size down.",
        )
    return Check(
        "regime",
        "fail",
        label,
        threshold,
        f"The 1h regime is {label.replace('_', '-')} (ADX {regime.adx or 0:.1f}, since "
        f"{regime.bars} bars): a {side} fights the trend.",
    )


def check_volatility(regime: Regime | None) -> Check:
    threshold = f"warn >= {DECISION_VOL_WARN_PCTL:g}, fail >= {DECISION_VOL_FAIL_PCTL:g} (percentile)"
    pctl = regime.vol_percentile if regime is not None else None
    if pctl is None:
        return Check("volatility", "warn", None, threshold, "No ATR percentile yet (too few 1h candles).")
    atr = f" (ATR {regime.atr_pct:.2f}% of price)" if regime is not None and regime.atr_pct else ""
    if pctl >= DECISION_VOL_FAIL_PCTL:
        status: Status = "fail"
        detail = f"Volatility is in the top {100 - DECISION_VOL_FAIL_PCTL:g}% of the window{atr}."
    elif pctl >= DECISION_VOL_WARN_PCTL:
        status = "warn"
        detail = f"Volatility is elevated, percentile {pctl:.0f}{atr}: size down."
    else:
        status = "pass"
        detail = f"Volatility is ordinary, percentile {pctl:.0f}{atr}."
    return Check("volatility", status, round(pctl, 2), threshold, detail)


def check_liquidity(market: ExchangeMarket | None, side: Side, notional: float) -> Check:
    threshold = (
        f"notional <= {DECISION_VOLUME_WARN_SHARE * 100:g}% of 24h volume and <= the book top "
        f"(warn), <= {DECISION_VOLUME_FAIL_SHARE * 100:g}% (fail past it)"
    )
    if market is None or not market.volume_24h_usd:
        return Check(
            "liquidity", "warn", None, threshold, "No fresh ticker with a 24h volume for the symbol."
        )
    volume = float(market.volume_24h_usd)
    share = notional / volume
    # A long lifts the ask, a short hits the bid: the size shown at that price.
    price = float((market.ask if side == "long" else market.bid) or 0)
    size = float((market.ask_size if side == "long" else market.bid_size) or 0)
    top = price * size
    where = f"on {market.exchange}: 24h volume {volume:,.0f} USD, book top {top:,.0f} USD"
    if share > DECISION_VOLUME_FAIL_SHARE:
        return Check(
            "liquidity",
            "fail",
            round(share * 100, 4),
            threshold,
            f"The notional is {share * 100:.2f}% of the day's volume {where}: it would move the price.",
        )
    if share > DECISION_VOLUME_WARN_SHARE or top < notional:
        thin = "the book top is smaller than the notional" if top < notional else "a noticeable share"
        return Check(
            "liquidity",
            "warn",
            round(share * 100, 4),
            threshold,
            f"Thin for this size ({thin}): {share * 100:.4f}% of 24h volume {where}; slice the order.",
        )
    return Check(
        "liquidity",
        "pass",
        round(share * 100, 4),
        threshold,
        f"The notional is {share * 100:.4f}% of 24h volume and fits the book top {where}.",
    )


def check_spread(market: ExchangeMarket | None) -> Check:
    threshold = f"warn > {DECISION_SPREAD_WARN_BPS:g} bps, fail > {DECISION_SPREAD_FAIL_BPS:g} bps"
    if market is None:
        return Check("spread", "warn", None, threshold, "No fresh book top for the symbol.")
    bps = spread_bps(market)
    if bps > DECISION_SPREAD_FAIL_BPS:
        status: Status = "fail"
        detail = f"The spread on {market.exchange} is {bps:.2f} bps: crossing it costs more than the edge."
    elif bps > DECISION_SPREAD_WARN_BPS:
        status = "warn"
        detail = f"The spread on {market.exchange} is {bps:.2f} bps: prefer limit orders."
    else:
        status = "pass"
        detail = f"The spread on {market.exchange} is {bps:.2f} bps."
    return Check("spread", status, round(bps, 3), threshold, detail)


def check_funding(readings: list[FundingReading], side: Side) -> Check:
    threshold = (
        f"annualized funding paid by the side: warn > {DECISION_FUNDING_WARN_APR:g}%, "
        f"fail > {DECISION_FUNDING_FAIL_APR:g}%"
    )
    if not readings:
        return Check(
            "funding", "warn", None, threshold, "No recent perpetual funding ingested for the symbol."
        )
    apr = float(np.mean([r.apr_pct for r in readings]))
    paid = apr if side == "long" else -apr  # positive funding: longs pay shorts
    venues = ", ".join(r.exchange for r in readings)
    if paid > DECISION_FUNDING_FAIL_APR:
        status: Status = "fail"
    elif paid > DECISION_FUNDING_WARN_APR:
        status = "warn"
    else:
        status = "pass"
    verb = "pays" if paid > 0 else "earns"
    return Check(
        "funding",
        status,
        round(apr, 4),
        threshold,
        f"Perpetual funding averages {apr:.2f}% a year ({venues}): a {side} {verb} {abs(paid):.2f}% a year.",
    )


def check_macro(gate: MacroGate, *, now: datetime) -> Check:
    """The macro gate's state as a check (catalog/analytics/macro.py: the same gate
    /risk/macro-gate sells): closed fails, unknown (no calendar) or an empty calendar warns."""
    threshold = f"no high-impact event within ±{gate.hours:g} h"
    if gate.state == "unknown":
        return Check("macro", "warn", None, threshold, gate.reason)
    if gate.state == "closed":
        return Check("macro", "fail", float(len(gate.blocking)), threshold, gate.reason)
    if gate.ahead == 0:
        return Check("macro", "warn", 0.0, threshold, gate.reason)
    return Check("macro", "pass", 0.0, threshold, gate.reason)


def verdict(checks: list[Check]) -> Literal["go", "caution", "no_go"]:
    """no_go on any fail, caution on any warn, else go."""
    statuses = {c.status for c in checks}
    return "no_go" if "fail" in statuses else "caution" if "warn" in statuses else "go"


@dataclass
class DecisionInputs:
    """What the pack's checks read, gathered by the product (kept for the payload)."""

    regime: Regime | None
    market: ExchangeMarket | None
    funding: list[FundingReading] = field(default_factory=list)
    macro: MacroGate | None = None


def decision_checks(inputs: DecisionInputs, *, side: Side, notional: float, now: datetime) -> list[Check]:
    return [
        check_regime(inputs.regime, side),
        check_volatility(inputs.regime),
        check_liquidity(inputs.market, side, notional),
        check_spread(inputs.market),
        check_funding(inputs.funding, side),
        check_macro(inputs.macro or macro_gate(now=now), now=now),
    ]
