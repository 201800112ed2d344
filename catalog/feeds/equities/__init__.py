"""The equities feed: reference quotes of listed equities and ETFs from Stooq's keyless CSV
quote endpoint (EQUITY_QUOTES_URL, `?s=aapl.us,msft.us&f=sd2t2ohlcvn&h&e=csv`), for the
symbols of EQUITY_SYMBOLS plus the underlyings of the tokenized watchlist (spot metals such as
XAU are asked as Stooq's xauusd). Each quote is upserted into EquityQuote on (source, symbol),
and a tokenized asset whose underlying was quoted gets it as its reference price
(TokenizedAsset.underlying_*), which the tokenized premium products compare its price with.

A symbol Stooq has no data for (N/D) is warned of and skipped; the pass fails when no quote at
all could be read. Replay: catalog/feeds/samples/equity_quotes_url/quotes.csv (Stooq's own
format), its quote times moved so that the newest lands on the pass's start."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from zoneinfo import ZoneInfo

from django.conf import settings

from catalog.feeds.equities.parse import FIELDS, Quote, Wanted, quotes_parse, wanted_all
from catalog.feeds.equities.store import SOURCE, quote_upsert, underlyings_update
from catalog.feeds.exchanges import watchlist
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.feeds.unique import unique_on
from catalog.models import TokenizedAsset

logger = logging.getLogger(__name__)

NAME = SOURCE
REPLAY_KEY = "equity_quotes_url"
REPLAY_SAMPLE = "quotes.csv"
# Symbols per request: the query stays a short URL; the default list and a watchlist fit one.
BATCH = 40


def symbols_asked() -> list[Wanted]:
    """EQUITY_SYMBOLS, then the watchlist's underlyings (deduplicated, in that order)."""
    configured = [str(s) for s in settings.EQUITY_SYMBOLS if str(s).strip()]
    underlyings = set(TokenizedAsset.objects.exclude(underlying="").values_list("underlying", flat=True))
    # The configured watchlist's too: its tokens may not exist yet (the exchanges pass creates
    # them, in any order with this one), and their reference must not wait a pass for them.
    underlyings |= {u for _, _, u in watchlist() if u}
    return wanted_all([*configured, *sorted(underlyings)])


def quotes_url(feed_pass: FeedPass, batch: list[Wanted]) -> str:
    if feed_pass.replay:
        return f"{feed_pass.replay_base(REPLAY_KEY)}/{REPLAY_SAMPLE}"
    symbols = ",".join(w.venue_symbol for w in batch)
    # Built by hand: Stooq's flag `h` (a header row) is a bare name, which `params=` cannot say.
    return f"{feed_pass.base('EQUITY_QUOTES_URL')}/?s={symbols}&f={FIELDS}&h&e=csv"


def equities_run(feed_pass: FeedPass) -> int:
    asked = symbols_asked()
    if not asked:
        logger.info("equities: no symbols to quote")
        return 0
    zone = ZoneInfo(settings.EQUITY_QUOTES_TZ)
    batches = [asked[i : i + BATCH] for i in range(0, len(asked), BATCH)]
    if feed_pass.replay:
        batches = [asked]  # one recorded answer holds every sampled symbol
    quotes: list[Quote] = []
    failures: list[Exception] = []
    for batch in batches:
        try:
            parsed = quotes_parse(
                feed_pass.fetch(quotes_url(feed_pass, batch)).content, asked=batch, zone=zone
            )
        except Exception as exc:  # noqa: BLE001 - one batch's failure; judged with the others below
            failures.append(exc)
            named = ", ".join(w.symbol for w in batch[:5]) + (", ..." if len(batch) > 5 else "")
            feed_pass.feed_failed(
                feed=f"quotes of {named}", error=exc, detail=f"{type(exc).__name__}: {exc}"[:500]
            )
            continue
        quotes += parsed.quotes
        for warning in parsed.warnings:
            feed_pass.warn(warning[:500])
    if failures and len(failures) == len(batches):
        raise failures[0]
    if not quotes:
        raise FeedError("no quote could be read for any of " + ", ".join(w.symbol for w in asked[:20]))
    if feed_pass.replay:
        shift = feed_pass.replay_shift(max(q.quoted_at for q in quotes), step=timedelta(minutes=1))
        quotes = [replace(q, quoted_at=q.quoted_at + shift) for q in quotes]
    seen_at = feed_pass.started_at
    # One quote per symbol (EquityQuote's key): a symbol the answer repeats is written once.
    quotes = unique_on(quotes, key=lambda q: q.symbol, what="equity quotes", feed_pass=feed_pass)
    for quote in quotes:
        quote_upsert(quote=quote, replay=feed_pass.replay, seen_at=seen_at)
    return len(quotes) + underlyings_update(quotes=quotes, replay=feed_pass.replay)


EQUITIES = feed_register(
    FeedSource(
        name=NAME,
        run=equities_run,
        # Stooq's quotes are delayed and it caps daily hits per client: every 15 minutes.
        interval_seconds=900,
        description="reference quotes of listed equities/ETFs and spot metals from Stooq's CSV endpoint",
        url_settings=("EQUITY_QUOTES_URL",),
    )
)
