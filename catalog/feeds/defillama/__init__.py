"""DefiLlama yields: the pools at or above DEFILLAMA_MIN_TVL_USD, largest first, at most
DEFILLAMA_MAX_POOLS, upserted on the pool id (for the yield scout product)."""

from __future__ import annotations

from dataclasses import asdict

import requests
from django.conf import settings

from a2a_service.core.http import outbound_request
from catalog.feeds.defillama.parse import Pool, pools_ranked
from catalog.feeds.jsonbody import json_body
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.feeds.unique import unique_on
from catalog.models import YieldPool

SOURCE = "defillama"


def pools_fetch(feed_pass: FeedPass, url: str) -> requests.Response:
    """FeedPass.fetch with this source's own body limit: the live pools list (~15 MB) is larger
    than FEEDS_MAX_BODY_BYTES. Same rules otherwise (feed timeout and deadline, our User-Agent,
    no redirects, no private targets except the replay server)."""
    limit = max(settings.DEFILLAMA_MAX_BODY_BYTES, settings.FEEDS_MAX_BODY_BYTES)
    resp = outbound_request(
        "GET",
        url,
        headers={"User-Agent": settings.FEEDS_USER_AGENT},
        timeout=settings.FEEDS_HTTP_TIMEOUT_SECONDS,
        deadline=settings.FEEDS_HTTP_DEADLINE_SECONDS,
        max_body_bytes=limit + 1,
        public_only=False if feed_pass.replay else None,
    )
    if resp.is_redirect or not 200 <= resp.status_code < 300:
        raise FeedError(f"{url} answered {resp.status_code}")
    if len(resp.content) > limit:
        raise FeedError(f"{url} answered more than {limit} bytes")
    return resp


def pools_upsert(pools: list[Pool], *, replay: bool, feed_pass: FeedPass) -> int:
    # A pool listed twice would be inserted twice (its id is unique): once, the last listed.
    pools = unique_on(pools, key=lambda p: p.pool_id, what="defillama pools", feed_pass=feed_pass)
    stored = {p.pool_id: p for p in YieldPool.objects.filter(pool_id__in=[p.pool_id for p in pools])}
    for pool in pools:
        row = stored.get(pool.pool_id) or YieldPool(pool_id=pool.pool_id)
        for name, value in asdict(pool).items():
            setattr(row, name, value)
        row.source, row.replay, row.observed_at = SOURCE, replay, feed_pass.started_at
        row.save()
    return len(pools)


def run(feed_pass: FeedPass) -> int:
    # The setting is the full URL of the list: its replay stand-in is the sample directory
    # itself (the replay server answers a directory with its index.json).
    payload = json_body(pools_fetch(feed_pass, feed_pass.base("DEFILLAMA_YIELDS_URL")))
    ranked = pools_ranked(payload, min_tvl_usd=settings.DEFILLAMA_MIN_TVL_USD)
    # A pool listed twice: its largest listing (the first, ranked by TVL), recorded as an oddity.
    pools = unique_on(
        ranked, key=lambda p: p.pool_id, what="defillama pools", feed_pass=feed_pass, keep="first"
    )
    pools = pools[: max(settings.DEFILLAMA_MAX_POOLS, 0)]
    return pools_upsert(pools, replay=feed_pass.replay, feed_pass=feed_pass)


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=3600,
        description="DefiLlama yield pools above a TVL floor, largest first",
        url_settings=("DEFILLAMA_YIELDS_URL",),
    )
)
