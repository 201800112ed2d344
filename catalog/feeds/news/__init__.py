"""News: RSS 2.0 and Atom feeds (NEWS_FEEDS, `category|url[|source name],...`), parsed with feedparser from
the bytes fetched through the feed pass. In replay mode feed n of NEWS_FEEDS is served from
catalog/feeds/samples/news_feeds/<n>.xml."""

from __future__ import annotations

from django.conf import settings

from catalog.feeds.news.parse import feeds_setting, parse_feed
from catalog.feeds.news.store import news_upsert
from catalog.feeds.registry import FeedPass, FeedSource, feed_register

REPLAY_KEY = "news_feeds"


def feed_url(feed_pass: FeedPass, index: int, url: str) -> str:
    return f"{feed_pass.replay_base(REPLAY_KEY)}/{index}" if feed_pass.replay else url


def news_run(feed_pass: FeedPass) -> int:
    """Every configured feed; a feed that fails is reported (pass warning) while the others are
    written. If every feed failed the pass fails with the first failure itself (so auto mode
    sees an unreachable network as such)."""
    feeds = feeds_setting(settings.NEWS_FEEDS)
    rows = 0
    failures: list[tuple[str, Exception]] = []
    for index, feed in enumerate(feeds):
        url = feed_url(feed_pass, index, feed.url)
        try:
            resp = feed_pass.fetch(url)
            parsed = parse_feed(resp.content, url=url)
        except Exception as exc:  # one feed's failure; judged with the others' below
            failures.append((url, exc))
            continue
        for entry in parsed.entries[: settings.NEWS_MAX_ITEMS_PER_FEED]:
            rows += news_upsert(
                entry=entry, category=feed.category, source=feed.name, replay=feed_pass.replay
            )
    if failures and len(failures) == len(feeds):
        raise failures[0][1]
    for failed_url, failure in failures:
        feed_pass.warn(f"{failed_url}: {type(failure).__name__}: {failure}")
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
