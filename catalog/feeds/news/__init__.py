"""News: RSS 2.0 and Atom feeds (NEWS_FEEDS, `category|url[|source name],...`), parsed with feedparser from
the bytes fetched through the feed pass. In replay mode feed n of NEWS_FEEDS is served from
catalog/feeds/samples/news_feeds/<n>.xml, and the recorded publication times are moved so
that the newest item of all the feeds is published at the pass's start, keeping the spacing
between items (the news products judge freshness and weigh recency by publication time)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from catalog.feeds.news.parse import FeedConfig, NewsEntry, feeds_setting, parse_feed
from catalog.feeds.news.store import news_upsert, priced_tickers
from catalog.feeds.registry import FeedPass, FeedSource, feed_register
from catalog.feeds.unique import unique_on

REPLAY_KEY = "news_feeds"


def feed_url(feed_pass: FeedPass, index: int, url: str) -> str:
    return f"{feed_pass.replay_base(REPLAY_KEY)}/{index}" if feed_pass.replay else url


def news_run(feed_pass: FeedPass) -> int:
    """Every configured feed; a feed that fails is recorded on the pass (by its configured URL,
    for health) while the others are written. If every feed failed the pass fails with the
    first failure itself (so auto mode sees an unreachable network as such)."""
    feeds = feeds_setting(settings.NEWS_FEEDS)
    failures: list[Exception] = []
    fetched: list[tuple[FeedConfig, list[NewsEntry]]] = []
    known = priced_tickers()
    for index, feed in enumerate(feeds):
        url = feed_url(feed_pass, index, feed.url)
        try:
            resp = feed_pass.fetch(url)
            parsed = parse_feed(resp.content, url=url, known=known)
        except Exception as exc:  # one feed's failure; judged with the others' below
            failures.append(exc)
            feed_pass.feed_failed(feed=feed.url, error=exc, detail=f"{url}: {type(exc).__name__}: {exc}")
            continue
        # One entry per story id within a feed: a feed listing an item twice is an oddity.
        entries = unique_on(
            parsed.entries,
            key=lambda e: e.external_id or e.link or e.title_hash,
            what=f"news {feed.name} entries",
            feed_pass=feed_pass,
        )
        fetched.append((feed, entries[: settings.NEWS_MAX_ITEMS_PER_FEED]))
    if failures and len(failures) == len(feeds):
        raise failures[0]
    entries = [entry for _, feed_entries in fetched for entry in feed_entries]
    times = [e.published_at for e in entries if e.published_at is not None]
    shift = feed_pass.replay_shift(max(times)) if times else timedelta(0)
    rows = 0
    for feed, feed_entries in fetched:
        for entry in feed_entries:
            if shift and entry.published_at is not None:
                entry.published_at += shift
            rows += news_upsert(
                entry=entry, category=feed.category, source=feed.name, replay=feed_pass.replay
            )
    return rows


NEWS = feed_register(
    FeedSource(
        name="news",
        run=news_run,
        interval_seconds=600,  # the default; staff edit it in the admin (Periodic tasks)
        description="RSS/Atom news feeds (NEWS_FEEDS)",
        url_settings=("NEWS_FEEDS",),
    )
)
