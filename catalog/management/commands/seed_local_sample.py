from __future__ import annotations

from django.core.management.base import BaseCommand
from django.utils import timezone

from catalog.models import EditorialPiece, GrantFeed, PartnerAgent

TITLE = "Local stack sample brief"


class Command(BaseCommand):
    help = (
        "For `make run` only: publish one morning brief and add one federated partner, labelled as samples, so the local stack has "
        "something to sell through x402, credits and sessions. Never run in production."
    )

    def handle(self, *args, **options) -> None:
        self.partner_sample()
        self.grant_feed_sample()
        if EditorialPiece.objects.published().filter(kind=EditorialPiece.Kind.MORNING_BRIEF).exists():
            self.stdout.write("a morning brief is already published; nothing to do")
            return
        EditorialPiece.objects.create(
            kind=EditorialPiece.Kind.MORNING_BRIEF,
            title=TITLE,
            summary="A sample written for the local development stack; it is not market analysis.",
            body=(
                "This brief exists so that a freshly started local stack has a product to sell. Staff "
                "publish real briefs in the admin (Editorial pieces); the newest published one is what "
                "/api/a2a/x402/morning-brief sells."
            ),
            published_at=timezone.now(),
        )
        self.stdout.write("published the local sample brief")

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
