"""Price series from the stored candles (catalog.models.Candle, written by the exchanges feed).

`ohlcv(symbol, timeframe)` gives one venue's bars, oldest first, as numpy arrays; without an
`exchange` it takes the venue with the newest bars of that symbol (then the most bars).
Symbols are ccxt's unified symbols ("BTC/USDT")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import Count, Max

from catalog.models import Candle

FloatArray = npt.NDArray[np.float64]

TIMEFRAMES = {
    "1m": timedelta(minutes=1),
    "5m": timedelta(minutes=5),
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "4h": timedelta(hours=4),
    "1d": timedelta(days=1),
}


def timeframe_delta(timeframe: str) -> timedelta:
    try:
        return TIMEFRAMES[timeframe]
    except KeyError:
        raise ValueError(f"unknown timeframe {timeframe!r}") from None


def candle_as_of(open_time: datetime, timeframe: str, observed_at: datetime | None) -> datetime:
    """When a bar's figures were true: its close time once it has closed, else (the bar still
    in progress, as the feed rewrites it every pass) when it was observed. Never the close
    time of an open bar, which lies in the future (00:00 at 23:49)."""
    closes = open_time + timeframe_delta(timeframe)
    return closes if observed_at is None else min(closes, observed_at)


@dataclass(frozen=True)
class Series:
    exchange: str
    symbol: str
    timeframe: str
    times: list[datetime]  # bar open times, oldest first
    open: FloatArray
    high: FloatArray
    low: FloatArray
    close: FloatArray
    volume: FloatArray  # in the base asset
    replay: bool  # any bar came from the local replay
    source: str  # the feed that wrote the bars
    observed_at: datetime | None = None  # when the newest bar was last written (None: unknown)

    def __len__(self) -> int:
        return len(self.times)

    @property
    def last_at(self) -> datetime | None:
        """When the newest close was true (`candle_as_of`): the newest bar's close time once it
        has closed, its observation while it is still open."""
        return candle_as_of(self.times[-1], self.timeframe, self.observed_at) if self.times else None

    @property
    def last(self) -> float:
        return float(self.close[-1])

    def tail(self, n: int) -> Series:
        return Series(
            exchange=self.exchange,
            symbol=self.symbol,
            timeframe=self.timeframe,
            times=self.times[-n:],
            open=self.open[-n:],
            high=self.high[-n:],
            low=self.low[-n:],
            close=self.close[-n:],
            volume=self.volume[-n:],
            replay=self.replay,
            source=self.source,
            observed_at=self.observed_at,
        )


def series_from_bars(
    *,
    exchange: str,
    symbol: str,
    timeframe: str,
    bars: list[tuple[datetime, float, float, float, float, float]],
    replay: bool = False,
    source: str = "exchanges",
) -> Series:
    """A Series from (open_time, open, high, low, close, volume) tuples, oldest first (tests
    build generated series with this)."""
    cols: list[tuple[Any, ...]] = list(zip(*bars, strict=True)) if bars else [(), (), (), (), (), ()]
    return Series(
        exchange=exchange,
        symbol=symbol,
        timeframe=timeframe,
        times=list(cols[0]),
        open=np.asarray(cols[1], dtype=np.float64),
        high=np.asarray(cols[2], dtype=np.float64),
        low=np.asarray(cols[3], dtype=np.float64),
        close=np.asarray(cols[4], dtype=np.float64),
        volume=np.asarray(cols[5], dtype=np.float64),
        replay=replay,
        source=source,
    )


def venue_for(symbol: str, timeframe: str) -> str | None:
    """The venue with the newest bars of a symbol and timeframe (then the most bars)."""
    row = (
        Candle.objects.filter(symbol=symbol, timeframe=timeframe)
        .order_by()
        .values("exchange")
        .annotate(last=Max("open_time"), n=Count("id"))
        .order_by("-last", "-n", "exchange")
        .first()
    )
    return row["exchange"] if row else None


def ohlcv(symbol: str, timeframe: str, *, exchange: str | None = None, limit: int = 300) -> Series | None:
    """The newest `limit` bars of one venue, oldest first; None when there are none."""
    exchange = exchange or venue_for(symbol, timeframe)
    if exchange is None:
        return None
    rows = list(
        Candle.objects.filter(exchange=exchange, symbol=symbol, timeframe=timeframe)
        .order_by("-open_time")
        .values_list("open_time", "open", "high", "low", "close", "volume", "replay", "source", "observed_at")[
            :limit
        ]
    )
    if not rows:
        return None
    rows.reverse()
    return Series(
        exchange=exchange,
        symbol=symbol,
        timeframe=timeframe,
        times=[r[0] for r in rows],
        open=np.array([float(r[1]) for r in rows]),
        high=np.array([float(r[2]) for r in rows]),
        low=np.array([float(r[3]) for r in rows]),
        close=np.array([float(r[4]) for r in rows]),
        volume=np.array([float(r[5]) for r in rows]),
        replay=any(r[6] for r in rows),
        source=rows[-1][7],
        observed_at=rows[-1][8],
    )


def symbols_with_candles(timeframe: str) -> list[str]:
    """Every symbol with bars of `timeframe`, most bars first."""
    rows = (
        Candle.objects.filter(timeframe=timeframe)
        .order_by()
        .values("symbol")
        .annotate(n=Count("id"))
        .order_by("-n", "symbol")
    )
    return [r["symbol"] for r in rows]
