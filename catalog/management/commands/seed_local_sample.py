from __future__ import annotations

from django.core.management.base import BaseCommand
from django.utils import timezone

from catalog.models import EditorialPiece

TITLE = "Local stack sample brief"


class Command(BaseCommand):
    help = (
        "For `make run` only: publish one morning brief, labelled as a sample, so the local stack has "
        "something to sell through x402, credits and sessions. Never run in production."
    )

    def handle(self, *args, **options) -> None:
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
