"""Copy signals (/copy/signals, GET /api/a2a/signals/copy-trade): the desks' open signals as
orders to copy. Routing is the venue's own spot market page (this service places no orders: a
copier trades on its own account there). The credit route has a free tier: a caller without
X-API-Key, or whose credit does not cover the price, sees the signals opened at least
COPY_FREE_DELAY_SECONDS ago with the routing masked. (Split from catalog/products/signals.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.series import candle_as_of
from catalog.analytics.signals import PRIMARY
from catalog.models import Candle, DeskSignal
from catalog.products.registry import CreditRoute, ProductCall, ProductFailed, TeaserSpec, product
from catalog.products.signals import HistoricalPerformanceOut, _performance

# A copied order's prices are the 1m candles': older than this and a stop may have been hit
# without the service seeing it, so the paid copy refuses to sell (503, uncharged).
COPY_MAX_AGE = timedelta(minutes=10)
# The venues' spot market pages (the routing of a copied order); other venues: ccxt's site.
MARKET_URLS = {
    "binance": "https://www.binance.com/en/trade/{base}_{quote}?type=spot",
    "okx": "https://www.okx.com/trade-spot/{base_l}-{quote_l}",
    "bybit": "https://www.bybit.com/en/trade/spot/{base}/{quote}",
    "kraken": "https://pro.kraken.com/app/trade/{base_l}-{quote_l}",
    "coinbase": "https://www.coinbase.com/advanced-trade/spot/{base}-{quote}",
}



class CopyRoutingOut(BaseModel):
    venue: str
    market_url: str | None = Field(description="the venue's spot market page; null when masked (free tier)")
    masked: bool


class CopyOrderOut(BaseModel):
    signal_id: int
    desk: str
    venue: str
    symbol: str
    side: Literal["long", "short"]
    order_type: Literal["market"]
    entry: float = Field(description="the price the desk entered at")
    last_price: float | None = Field(description="the newest 1m close on the venue")
    stop: float | None
    target: float | None
    stop_distance_pct: float | None
    size_fraction: float = Field(
        description="fraction of equity: COPY_RISK_PER_TRADE_PCT / stop distance, x the regime gate's size factor, "
        "capped at COPY_MAX_POSITION_FRACTION"
    )
    risk_pct: float = Field(description="percent of equity lost if the stop is hit at that size")
    gate_size_factor: float = Field(description="1 open, 0.5 reduced (the regime gate when published)")
    label: str
    score: float | None
    confidence: float | None
    opened_at: str
    expires_at: str | None
    age_seconds: int
    routing: CopyRoutingOut
    historical_performance: HistoricalPerformanceOut


class CopySignalsOut(Provenanced):
    tier: Literal["realtime", "free_delayed"]
    delay_seconds: int = Field(description="the free tier's delay: it sees signals at least this old")
    risk_per_trade_pct: float
    count: int
    orders: list[CopyOrderOut]
    note: str


@lru_cache(maxsize=64)
def _venue_site(venue: str) -> str | None:
    import ccxt  # loaded on first use: 200 modules, half a second of every process's start

    cls = getattr(ccxt, venue, None)
    if cls is None:
        return None
    www = cls().urls.get("www")
    return www if isinstance(www, str) else None


def market_url(venue: str, symbol: str) -> str | None:
    base, _, quote = symbol.partition("/")
    quote = quote.split(":")[0]
    template = MARKET_URLS.get(venue)
    if template is not None:
        return template.format(base=base, quote=quote, base_l=base.lower(), quote_l=quote.lower())
    return _venue_site(venue)


def size_fraction(
    *, entry: float, stop: float | None, gate_factor: float
) -> tuple[float, float, float | None]:
    """(fraction of equity, percent of equity at risk, stop distance %): the size whose loss at
    the stop is COPY_RISK_PER_TRADE_PCT of equity, times the gate's factor, capped."""
    if stop is None or entry <= 0 or stop == entry:
        return 0.0, 0.0, None
    distance = abs(entry - stop) / entry
    fraction = settings.COPY_RISK_PER_TRADE_PCT / 100 / distance * gate_factor
    fraction = min(fraction, settings.COPY_MAX_POSITION_FRACTION)
    return round(fraction, 4), round(fraction * distance * 100, 4), round(distance * 100, 4)


def _last_close(venue: str, symbol: str) -> tuple[float | None, datetime | None, bool]:
    for tf in ("1m", PRIMARY):
        row = (
            Candle.objects.filter(exchange=venue, symbol=symbol, timeframe=tf)
            .order_by("-open_time")
            .values_list("close", "open_time", "replay", "observed_at")
            .first()
        )
        if row is not None:
            return float(row[0]), candle_as_of(row[1], tf, row[3]), bool(row[2])
    return None, None, False


def copy_payload(*, realtime: bool, now: datetime) -> dict[str, Any]:
    delay = 0 if realtime else settings.COPY_FREE_DELAY_SECONDS
    rows = DeskSignal.objects.filter(closed_at__isnull=True, opened_at__lte=now - timedelta(seconds=delay))
    prov = Provenance(
        method="the desks' open signals, sized by risk per trade and the regime gate",
        max_age=COPY_MAX_AGE,
        now=now,
    )
    perf: dict[str, dict[str, Any]] = {}
    orders = []
    for row in rows.order_by("-opened_at"):
        entry = float(row.entry_price)
        stop = float(row.stop_price) if row.stop_price is not None else None
        gate_factor = float(row.basis.get("size_factor", 1.0)) if isinstance(row.basis, dict) else 1.0
        fraction, risk, distance = size_fraction(entry=entry, stop=stop, gate_factor=gate_factor)
        last, last_at, replay = _last_close(row.venue, row.symbol) if row.venue else (None, None, False)
        prov.add(source="exchanges", venue=row.venue or None, replay=replay, as_of=last_at)
        orders.append(
            {
                "signal_id": row.pk,
                "desk": row.desk,
                "venue": row.venue,
                "symbol": row.symbol,
                "side": row.side,
                "order_type": "market",
                "entry": entry,
                "last_price": last,
                "stop": stop,
                "target": float(row.target_price) if row.target_price is not None else None,
                "stop_distance_pct": distance,
                "size_fraction": fraction,
                "risk_pct": risk,
                "gate_size_factor": gate_factor,
                "label": row.label,
                "score": row.score,
                "confidence": row.confidence,
                "opened_at": iso(row.opened_at),
                "expires_at": iso(row.expires_at),
                "age_seconds": int((now - row.opened_at).total_seconds()),
                "routing": {
                    "venue": row.venue,
                    "market_url": market_url(row.venue, row.symbol) if realtime and row.venue else None,
                    "masked": not realtime,
                },
                "historical_performance": _performance(perf, row.desk),
            }
        )
    note = (
        "Real time. Routing: the venue's spot market page; place the order on your own account there."
        if realtime
        else f"Free tier: signals opened at least {delay} s ago, routing masked. Pay (X-API-Key with credit, "
        "x402 or a session) for real time and routing."
    )
    return {
        "tier": "realtime" if realtime else "free_delayed",
        "delay_seconds": delay,
        "risk_per_trade_pct": settings.COPY_RISK_PER_TRADE_PCT,
        "count": len(orders),
        "orders": orders,
        "note": note,
        **prov.out(),
    }


def copy_signals_free(call: ProductCall) -> dict[str, Any]:
    """The free tier of the copy-trade route (no charge): delayed, routing masked."""
    return copy_payload(realtime=False, now=timezone.now())


def _has_open_signals() -> tuple[bool, str]:
    if DeskSignal.objects.filter(closed_at__isnull=True).exists():
        return True, ""
    return False, "no desk signal is open now"


@product(
    sku="copy_signals",
    path="/copy/signals",
    headline="Copy signals in real time with routing addresses",
    price="0.15",
    family="trading",
    tier="D",
    hero=True,
    rank=13,
    session_callable=True,
    teaser="copy-signals",
    teasers=(
        TeaserSpec(
            name="copy-signals",
            title="Copy signals",
            summary="Desk signals you can copy; free tier delayed 10 minutes with masked routing.",
            highlights=("real-time when paid", "routing addresses when paid"),
        ),
    ),
    credit_routes=(
        CreditRoute(
            route="api/a2a/signals/copy-trade",
            operation_id="copy_trade_signals",
            summary="Copy-trade signals (free tier delayed 10 minutes, routing masked)",
            free=copy_signals_free,
        ),
    ),
    output=CopySignalsOut,
    pure=True,
    available=_has_open_signals,
)
def copy_signals(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    content = copy_payload(realtime=True, now=now)
    if not content["orders"]:
        raise ProductFailed("no desk signal is open now; nothing was charged")
    if content["stale"]:
        raise ProductFailed(
            f"the open signals' prices are older than {int(COPY_MAX_AGE.total_seconds())} s; nothing was charged"
        )
    return content



__all__ = ["copy_payload", "market_url", "size_fraction"]
