"""The partner signal document: a JSON object with a `signals` list (or the list itself), each
signal `{id, symbol, side, entry, stop?, target?, confidence?, timeframe?, published_at}`.
Accepted spellings: side long/short or buy/sell; entry or entry_price; stop or stop_price;
target or target_price; published_at or opened_at (ISO 8601, or epoch seconds/ms). This
service's own copy-trade answer has that shape, so two deployments can federate. A signal with
a missing or impossible field is skipped (counted), not the whole document."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from catalog.feeds.jsonbody import number
from catalog.feeds.registry import FeedError

SIDES = {"long": "long", "buy": "long", "short": "short", "sell": "short"}


@dataclass(frozen=True)
class PartnerSignalRow:
    external_id: str
    symbol: str
    side: str
    entry_price: Decimal
    stop_price: Decimal | None
    target_price: Decimal | None
    confidence: float | None
    timeframe: str
    published_at: datetime


def _when(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    return None


def _price(value: Any) -> Decimal | None:
    x = number(value)
    return Decimal(str(x)) if x is not None and x > 0 else None


def _first(item: dict[str, Any], *names: str) -> Any:
    return next((item[n] for n in names if item.get(n) is not None), None)


def signal_parse(item: Any) -> PartnerSignalRow | None:
    if not isinstance(item, dict):
        return None
    ident = _first(item, "id", "signal_id")
    symbol = item.get("symbol")
    side = SIDES.get(str(item.get("side", "")).lower())
    entry = _price(_first(item, "entry", "entry_price"))
    published = _when(_first(item, "published_at", "opened_at"))
    if (
        ident is None
        or not isinstance(symbol, str)
        or not symbol
        or side is None
        or entry is None
        or published is None
    ):
        return None
    confidence = number(item.get("confidence"))
    return PartnerSignalRow(
        external_id=str(ident)[:120],
        symbol=symbol.upper()[:40],
        side=side,
        entry_price=entry,
        stop_price=_price(_first(item, "stop", "stop_price")),
        target_price=_price(_first(item, "target", "target_price")),
        confidence=confidence if confidence is not None and 0 <= confidence <= 1 else None,
        timeframe=str(item.get("timeframe") or "")[:8],
        published_at=published,
    )


def document_parse(payload: Any) -> tuple[list[PartnerSignalRow], int]:
    """The signals of a partner document and how many items were skipped."""
    items = payload.get("signals") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise FeedError("the partner document has no signals list")
    rows = [signal_parse(x) for x in items]
    good = [r for r in rows if r is not None]
    return good, len(rows) - len(good)
