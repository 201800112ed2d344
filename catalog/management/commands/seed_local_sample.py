from __future__ import annotations

from django.core.management.base import BaseCommand

from catalog.models import GrantFeed, PartnerAgent


class Command(BaseCommand):
    help = (
        "For `make run` only: add one federated partner and one grant feed, labelled as samples, so the local stack's "
        "federation and grants feeds have something to replay. Never run in production. (The morning brief is "
        "composed from the replayed data: `manage.py compose_brief`, run by the local stack.)"
    )

    def handle(self, *args, **options) -> None:
        self.partner_sample()
        self.grant_feed_sample()

    def partner_sample(self) -> None:
        """A federated partner whose live address never resolves (.invalid, RFC 2606), so the
        local stack's federation feed replays its recorded signals
        (catalog/feeds/samples/federation_partners/sample-partner.json), marked replay."""
        _, created = PartnerAgent.objects.get_or_create(
            slug="sample-partner",
            defaults={
                "name": "Sample partner (local replay)",
                "description": "A sample federated partner for the local stack; its signals are recorded samples.",
                "url": "https://sample-partner.invalid/",
                "signals_url": "https://sample-partner.invalid/signals.json",
            },
        )
        if created:
            self.stdout.write("added the local sample partner (its signals come from the replay)")

    def grant_feed_sample(self) -> None:
        """A grant feed whose live address never resolves (.invalid, RFC 2606), so the local
        stack's grants feed replays its recorded announcements
        (catalog/feeds/samples/grant_feeds/index.xml), marked replay."""
        _, created = GrantFeed.objects.get_or_create(
            name="Sample ecosystem grants (local replay)",
            defaults={"url": "https://sample-grants.invalid/feed.xml"},
        )
        if created:
            self.stdout.write("added the local sample grant feed (its announcements come from the replay)")
