"""Polymarket: the open markets of the Gamma API, most traded first, up to POLYMARKET_MAX_MARKETS
(GET /markets?active=true&closed=false, paged by offset), with a CLOB midpoint for the markets
Gamma gives no price (at most POLYMARKET_MAX_MIDPOINTS a pass)."""

from __future__ import annotations

import logging

from django.conf import settings

from catalog.analytics.prediction_match import prediction_matches_refresh
from catalog.feeds.jsonbody import json_body
from catalog.feeds.polymarket.parse import VENUE, GammaMarket, markets_page_parse, midpoint_parse, with_price
from catalog.feeds.prediction_store import MarketRow, markets_upsert
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register

log = logging.getLogger(__name__)
SOURCE = "polymarket"


def markets_fetch(feed_pass: FeedPass) -> list[GammaMarket]:
    """Page through Gamma until a short page, a page with nothing new (the replay server answers
    every offset with the same page) or the cap."""
    gamma = feed_pass.base("POLYMARKET_GAMMA_URL")
    cap = max(settings.POLYMARKET_MAX_MARKETS, 0)
    page = max(min(settings.PREDICTION_PAGE_SIZE, cap), 1)
    seen: dict[str, GammaMarket] = {}
    offset = 0
    while len(seen) < cap:
        params = {
            "active": "true",
            "closed": "false",
            "limit": page,
            "offset": offset,
            "order": "volumeNum",
            "ascending": "false",
        }
        payload = json_body(feed_pass.fetch(f"{gamma}/markets", params=params))
        markets = markets_page_parse(payload)
        fresh = [m for m in markets if m.row.external_id not in seen]
        for market in fresh[: cap - len(seen)]:
            seen[market.row.external_id] = market
        if len(payload) < page or not fresh:
            break
        offset += len(payload)
    return list(seen.values())


def prices_complete(feed_pass: FeedPass, markets: list[GammaMarket]) -> list[MarketRow]:
    """Gamma's price where it has one; else the CLOB midpoint of the yes token, else the last
    trade. A token the CLOB has no book for (404) or answers garbage about keeps no price; a
    network failure fails the pass."""
    clob = feed_pass.base("POLYMARKET_CLOB_URL")
    budget = settings.POLYMARKET_MAX_MIDPOINTS
    rows: list[MarketRow] = []
    for market in markets:
        if market.row.yes_price is not None or market.yes_token is None or budget <= 0:
            rows.append(
                market.row if market.row.yes_price is not None else with_price(market, market.last_trade)
            )
            continue
        budget -= 1
        try:
            mid = midpoint_parse(
                json_body(feed_pass.fetch(f"{clob}/midpoint", params={"token_id": market.yes_token}))
            )
        except FeedError as exc:
            log.info("polymarket: no midpoint for market %s: %s", market.row.external_id, exc)
            mid = None
        rows.append(with_price(market, mid if mid is not None else market.last_trade))
    return rows


def run(feed_pass: FeedPass) -> int:
    # Everything is fetched before anything is written: a failed fetch leaves no half pass.
    rows = prices_complete(feed_pass, markets_fetch(feed_pass))
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
        description="Polymarket open markets (Gamma) with CLOB midpoints where Gamma has no price",
        url_settings=("POLYMARKET_GAMMA_URL", "POLYMARKET_CLOB_URL"),
    )
)
