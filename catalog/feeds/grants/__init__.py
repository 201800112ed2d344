"""Grants: the RSS/Atom feeds of grant and ecosystem-fund announcements staff list in the admin
(GrantFeed), read through the feed pass into GrantProgram rows (upserted on the feed's id). One
feed failing is a warning on the pass; every feed failing fails it. In replay mode a feed is
the recorded sample samples/grant_feeds/<feed id>.xml, else samples/grant_feeds/index.xml, and
its publication times and deadlines move together so the newest item lands on the pass's start
(a recorded deadline keeps its distance from its announcement)."""

from __future__ import annotations

from datetime import timedelta

from catalog.feeds.grants.parse import GrantEntry, grants_parse
from catalog.feeds.registry import FeedPass, FeedSource, feed_register
from catalog.feeds.replay import sample_path
from catalog.feeds.unique import unique_on
from catalog.models import GrantFeed, GrantProgram

SOURCE = "grants"
REPLAY_KEY = "grant_feeds"


def feed_url(feed_pass: FeedPass, feed: GrantFeed) -> str:
    if not feed_pass.replay:
        return feed.url
    own = f"/{REPLAY_KEY}/{feed.id}"
    return feed_pass.replay_base(REPLAY_KEY) + (f"/{feed.id}" if sample_path(own) else "")


def programs_upsert(feed_pass: FeedPass, feed: GrantFeed, entries: list[GrantEntry]) -> int:
    entries = unique_on(
        entries, key=lambda e: e.external_id, what=f"grants {feed.name} entries", feed_pass=feed_pass
    )
    for entry in entries:
        GrantProgram.objects.update_or_create(
            source=feed.name,
            external_id=entry.external_id,
            defaults={
                "feed": feed,
                "title": entry.title,
                "url": entry.link,
                "summary": entry.summary,
                "deadline": entry.deadline,
                "published_at": entry.published_at,
                "replay": feed_pass.replay,
                "observed_at": feed_pass.started_at,
            },
        )
    return len(entries)


def run(feed_pass: FeedPass) -> int:
    feeds = list(GrantFeed.objects.filter(enabled=True).order_by("id"))
    fetched: list[tuple[GrantFeed, list[GrantEntry]]] = []
    failures: list[tuple[str, Exception]] = []
    for feed in feeds:  # every feed is read before anything is written
        url = feed_url(feed_pass, feed)
        try:
            fetched.append((feed, grants_parse(feed_pass.fetch(url).content, url=url)))
        except Exception as exc:  # one feed's failure; judged with the others' below
            failures.append((f"{feed.name}: {url}", exc))
            feed_pass.feed_failed(
                feed=feed.url, error=exc, detail=f"{feed.name}: {url}: {type(exc).__name__}: {exc}"[:300]
            )
    if failures and len(failures) == len(feeds):
        raise failures[0][1]  # auto mode sees an unreachable network as such
    times = [e.published_at for _, entries in fetched for e in entries if e.published_at is not None]
    shift = feed_pass.replay_shift(max(times)) if times else timedelta(0)
    rows = 0
    for feed, entries in fetched:
        if shift:
            for e in entries:
                e.published_at = e.published_at + shift if e.published_at else None
                e.deadline = e.deadline + shift if e.deadline else None
        rows += programs_upsert(feed_pass, feed, entries)
    return rows


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=3600,  # announcements change daily at most; staff edit it in the admin
        description="grant and ecosystem-fund announcements (the GrantFeed rows staff list in the admin)",
    )
)
