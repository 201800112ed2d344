"""Writes of the equities feed: one EquityQuote per (source, symbol), rewritten by each pass,
and the reference price of the tokenized assets whose underlying is one of the quotes."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from catalog.feeds.equities.parse import Quote
from catalog.models import EquityQuote, TokenizedAsset

SOURCE = "equities"
UNDERLYING_FIELDS = ["underlying_price", "underlying_source", "underlying_as_of", "underlying_replay"]


def quote_upsert(*, quote: Quote, replay: bool, seen_at: datetime) -> None:
    EquityQuote.objects.update_or_create(
        source=SOURCE,
        symbol=quote.symbol,
        defaults={
            "venue_symbol": quote.venue_symbol,
            "name": quote.name,
            "price": quote.price,
            "open": quote.open,
            "high": quote.high,
            "low": quote.low,
            "volume": quote.volume,
            "currency": quote.currency,
            "quoted_at": quote.quoted_at,
            "replay": replay,
            "observed_at": seen_at,
        },
    )


def underlyings_update(*, quotes: Iterable[Quote], replay: bool) -> int:
    """Set the reference price of every tokenized asset whose underlying was quoted (in
    dollars: the tokens trade against dollar stablecoins). Only these columns are saved, so
    a concurrent exchanges pass writing the token's own price is not overwritten."""
    by_symbol = {q.symbol: q for q in quotes if q.currency == "USD"}
    updated = 0
    for asset in TokenizedAsset.objects.exclude(underlying=""):
        quote = by_symbol.get(asset.underlying.strip().upper())
        if quote is None:
            continue
        asset.underlying_price = quote.price
        asset.underlying_source = SOURCE
        asset.underlying_as_of = quote.quoted_at
        asset.underlying_replay = replay
        asset.save(update_fields=UNDERLYING_FIELDS)
        updated += 1
    return updated
