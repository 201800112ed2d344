"""Kalshi: the open markets of the public trade API (GET /markets?status=open, cursor paging),
up to KALSHI_MAX_MARKETS a pass; combo (multivariate) markets are left out."""

from __future__ import annotations

from django.conf import settings

from catalog.feeds.jsonbody import json_body
from catalog.feeds.kalshi.parse import VENUE, markets_page_parse
from catalog.feeds.prediction_store import MarketRow, markets_upsert
from catalog.feeds.registry import FeedPass, FeedSource, feed_register

SOURCE = "kalshi"


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


def run(feed_pass: FeedPass) -> int:
    rows = markets_fetch(feed_pass)  # all pages before any write
    return markets_upsert(
        rows, venue=VENUE, source=SOURCE, replay=feed_pass.replay, observed_at=feed_pass.started_at
    )


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=300,
        description="Kalshi open markets (public trade API)",
        url_settings=("KALSHI_API_URL",),
    )
)
