"""`python manage.py compute_intel`: one analytics pass now, synchronously (what beat runs every
INTEL_COMPUTE_SECONDS): regime snapshot, desk signals closed and published, intel snapshot."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from catalog.editorial.intel import intel_compute


class Command(BaseCommand):
    help = "Run one analytics pass now: regime, desk signals (close, kill check, publish), intel snapshot."

    def handle(self, *args: Any, **options: Any) -> None:
        run = intel_compute()
        if run.skipped and not run.signals:
            self.stdout.write(f"compute_intel: {run.skipped}")
            return
        self.stdout.write(
            f"compute_intel: {run.signals} signals ({run.fresh} fresh), market regime {run.regime}"
            f"{' (new snapshot)' if run.regime_snapshot else ''}; closed {len(run.closed)}, "
            f"published {len(run.published)}, killed {', '.join(run.killed) or 'none'}; "
            f"intel snapshot {run.intel_snapshot or '-'}" + (f" ({run.skipped})" if run.skipped else "")
        )
