"""Kalshi: the open markets of the public trade API (GET /markets?status=open, cursor paging),
up to KALSHI_MAX_MARKETS a pass; combo (multivariate) markets are left out. The markets whose
own category is empty take their event's (GET /events?status=open, at most EVENT_PAGES pages)."""

from __future__ import annotations

import logging
from dataclasses import replace

from django.conf import settings

from catalog.analytics.prediction_match import prediction_matches_refresh
from catalog.feeds.jsonbody import json_body
from catalog.feeds.kalshi.parse import VENUE, events_page_parse, markets_page_parse
from catalog.feeds.prediction_store import MarketRow, markets_upsert
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register

log = logging.getLogger(__name__)
SOURCE = "kalshi"
EVENT_PAGES = 5  # of 200 events (Kalshi's largest events page)


def markets_fetch(feed_pass: FeedPass) -> list[MarketRow]:
    """Follow the cursor until it is empty, repeats, brings nothing new, or the cap."""
    api = feed_pass.base("KALSHI_API_URL")
    cap = max(settings.KALSHI_MAX_MARKETS, 0)
    page = max(min(settings.PREDICTION_PAGE_SIZE, cap, 1000), 1)  # Kalshi pages hold at most 1000
    seen: dict[str, MarketRow] = {}
    cursor = ""
    cursors: set[str] = set()
    while len(seen) < cap:
        params: dict[str, str | int] = {"status": "open", "limit": page, "mve_filter": "exclude"}
        if cursor:
            params["cursor"] = cursor
        result = markets_page_parse(json_body(feed_pass.fetch(f"{api}/markets", params=params)))
        fresh = [r for r in result.rows if r.external_id not in seen]
        for row in fresh[: cap - len(seen)]:
            seen[row.external_id] = row
        cursors.add(cursor)
        cursor = result.cursor
        if not cursor or cursor in cursors or not fresh:
            break
    return list(seen.values())


def categories_fill(feed_pass: FeedPass, rows: list[MarketRow]) -> list[MarketRow]:
    """Each market without a category takes its event's. The events are a nicety: an events
    answer the venue refuses or garbles leaves the categories empty (logged); a network failure
    still fails the pass."""
    wanted = {r.event_id for r in rows if not r.category and r.event_id}
    found: dict[str, str] = {}
    api = feed_pass.base("KALSHI_API_URL")
    cursor = ""
    for _ in range(EVENT_PAGES if wanted else 0):
        params: dict[str, str | int] = {"status": "open", "limit": 200}
        if cursor:
            params["cursor"] = cursor
        try:
            page = events_page_parse(json_body(feed_pass.fetch(f"{api}/events", params=params)))
        except FeedError as exc:
            log.info("kalshi: events unavailable, categories left empty: %s", exc)
            break
        found.update(page.categories)
        if wanted <= found.keys() or not page.cursor or page.cursor == cursor:
            break
        cursor = page.cursor
    return [replace(r, category=found.get(r.event_id, "")) if not r.category else r for r in rows]


def run(feed_pass: FeedPass) -> int:
    rows = categories_fill(feed_pass, markets_fetch(feed_pass))  # all fetched before any write
    written = markets_upsert(rows, venue=VENUE, source=SOURCE, feed_pass=feed_pass)
    # Post-pass hook: the cross-venue pairs and their gaps follow the new prices (a divergence
    # opening pushes prediction_alert from the pair's save, in this pass's transaction).
    prediction_matches_refresh(now=feed_pass.started_at)
    return written


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=300,
        description="Kalshi open markets (public trade API)",
        url_settings=("KALSHI_API_URL",),
    )
)
