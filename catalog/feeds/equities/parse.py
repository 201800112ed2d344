"""Stooq's CSV quote answer (`/q/l/?s=aapl.us,msft.us&f=sd2t2ohlcvn&h&e=csv`): a header row
`Symbol,Date,Time,Open,High,Low,Close,Volume,Name`, then one row per symbol asked for; a symbol
Stooq does not know (or has no quote for) comes back as `N/D` fields. Dates and times are the
exchange-independent clock of Stooq's site (Polish time, EQUITY_QUOTES_TZ)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from zoneinfo import ZoneInfo

from catalog.feeds.registry import FeedError

# Underlyings that are not listed equities: spot metals, quoted by Stooq against the dollar.
SPOT_SYMBOLS = {"XAU": "xauusd", "XAG": "xagusd", "XPT": "xptusd", "XPD": "xpdusd"}
# Stooq's market suffixes we read (and the currency of their quotes); a plain ticker is a US listing.
MARKET_CURRENCY = {"US": "USD", "UK": "GBP", "DE": "EUR", "F": "EUR", "JP": "JPY", "HK": "HKD"}
SYMBOL_RE = re.compile(r"^[A-Z0-9][A-Z0-9.\-]{0,19}$")
# The fields asked for (f=sd2t2ohlcvn): symbol, date, time, open, high, low, close, volume, name.
FIELDS = "sd2t2ohlcvn"
NO_DATA = "N/D"


@dataclass(frozen=True)
class Wanted:
    symbol: str  # ours: AAPL, BRK.B, XAU, SAP.DE
    venue_symbol: str  # Stooq's, lower case: aapl.us, brk-b.us, xauusd, sap.de
    currency: str


def wanted(raw: str) -> Wanted | None:
    """Our ticker as Stooq names it, or None when it is not a ticker at all."""
    symbol = raw.strip().upper()
    if not SYMBOL_RE.match(symbol):
        return None
    if symbol in SPOT_SYMBOLS:
        return Wanted(symbol=symbol, venue_symbol=SPOT_SYMBOLS[symbol], currency="USD")
    head, dot, market = symbol.rpartition(".")
    if dot and market in MARKET_CURRENCY and head:
        return Wanted(symbol=symbol, venue_symbol=symbol.lower(), currency=MARKET_CURRENCY[market])
    # A US listing; a share class (BRK.B) is written with a dash on Stooq (brk-b.us).
    return Wanted(symbol=symbol, venue_symbol=f"{symbol.replace('.', '-').lower()}.us", currency="USD")


def wanted_all(symbols: Iterable[str]) -> list[Wanted]:
    out: dict[str, Wanted] = {}
    for raw in symbols:
        w = wanted(str(raw))
        if w is not None:
            out.setdefault(w.venue_symbol, w)
    return list(out.values())


@dataclass(frozen=True)
class Quote:
    symbol: str
    venue_symbol: str
    name: str
    price: Decimal
    open: Decimal | None
    high: Decimal | None
    low: Decimal | None
    volume: int | None
    currency: str
    quoted_at: datetime  # UTC


@dataclass
class ParsedQuotes:
    quotes: list[Quote] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _decimal(raw: str) -> Decimal | None:
    try:
        value = Decimal(raw.strip())
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() and value > 0 else None


def quotes_parse(body: bytes, *, asked: Iterable[Wanted], zone: ZoneInfo) -> ParsedQuotes:
    """The quotes of the symbols asked for. A row of N/D (an unknown or unquoted symbol) or
    with unreadable fields is skipped with a warning; an answer that is not this CSV at all
    (empty, HTML, "Exceeded the daily hits limit", another header) is a FeedError."""
    text = body.decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise FeedError("empty body")
    rows = list(csv.reader(io.StringIO(text.strip())))
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if not header or header[0] != "symbol" or not {"date", "time", "close"} <= set(header):
        raise FeedError(f"not a Stooq quote CSV (header {text.strip().splitlines()[0][:80]!r})")
    col = {name: i for i, name in enumerate(header)}
    by_venue = {w.venue_symbol.upper(): w for w in asked}
    out = ParsedQuotes()
    seen: set[str] = set()
    no_data: list[str] = []
    unreadable: list[str] = []
    for row in rows[1:]:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            unreadable.append(",".join(row)[:40])
            continue
        venue_symbol = row[col["symbol"]].strip().upper()
        want = by_venue.get(venue_symbol)
        if want is None:
            continue  # not asked for (Stooq answers only what it was asked; a replay may hold more)
        seen.add(venue_symbol)

        def cell(name: str, row: list[str] = row) -> str:
            return row[col[name]].strip() if name in col else ""

        if NO_DATA in (cell("date"), cell("time"), cell("close")):
            no_data.append(want.symbol)
            continue
        price = _decimal(cell("close"))
        try:
            local = datetime.strptime(f"{cell('date')} {cell('time')}", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            local = None
        if price is None or local is None:
            unreadable.append(want.symbol)
            continue
        volume = _decimal(cell("volume"))
        out.quotes.append(
            Quote(
                symbol=want.symbol,
                venue_symbol=venue_symbol,
                name=cell("name")[:120],
                price=price,
                open=_decimal(cell("open")),
                high=_decimal(cell("high")),
                low=_decimal(cell("low")),
                volume=int(volume) if volume is not None else None,
                currency=want.currency,
                quoted_at=local.replace(tzinfo=zone).astimezone(UTC),
            )
        )
    missing = sorted(set(by_venue) - seen)
    if missing:
        out.warnings.append(f"no row for {', '.join(by_venue[m].symbol for m in missing)}")
    if no_data:
        out.warnings.append(f"no data (N/D) for {', '.join(no_data)}")
    if unreadable:
        out.warnings.append(f"unreadable row(s) skipped: {', '.join(unreadable[:10])}")
    return out
