"""Score the news items that have no sentiment yet (items ingested before scoring existed, or
typed in by staff), or rescore every item after the lexicon changed."""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone

from catalog.analytics.sentiment import news_sentiment_backfill


class Command(BaseCommand):
    help = "Score news items for sentiment (catalog/analytics/sentiment.py): the unscored ones, or all with --rescore."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rescore", action="store_true", help="rescore items that have a score too")
        parser.add_argument("--days", type=int, default=None, help="only items published in the last N days")

    def handle(self, *args, rescore: bool, days: int | None, **options) -> None:
        since = timezone.now() - timedelta(days=days) if days else None
        written = news_sentiment_backfill(since=since, rescore=rescore)
        self.stdout.write(f"scored {written} news item(s)")
