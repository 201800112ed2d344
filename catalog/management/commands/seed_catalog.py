from __future__ import annotations

from django.core.management.base import BaseCommand

from catalog.services import catalog_seed


class Command(BaseCommand):
    help = "Load the seed catalog (SKUs, teasers, agents, packs, integrations). Idempotent."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--reset", action="store_true", help="overwrite staff edits with the seed values")

    def handle(self, *args, reset: bool = False, **options) -> None:
        created = catalog_seed(reset=reset)
        self.stdout.write(", ".join(f"{n} new {k}" for k, n in created.items()))
