"""`python manage.py compose_brief`: compose (or recompose) today's morning brief now, what beat
runs daily at MORNING_BRIEF_HOUR_UTC. A brief staff edited or wrote today is left alone."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from catalog.editorial.briefs import brief_compose


class Command(BaseCommand):
    help = "Compose today's morning brief from the data now (staff-edited briefs are kept)."

    def handle(self, *args: Any, **options: Any) -> None:
        run = brief_compose()
        title = run.piece.title if run.piece is not None else "-"
        self.stdout.write(
            f"compose_brief: {run.action}: {title}" + (f" ({run.detail})" if run.detail else "")
        )
