"""One pass of each feed source, now, in this process (operators and tests)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from catalog.feeds.registry import feeds_all
from catalog.feeds.runner import MODES, feed_run
from catalog.feeds.schedule import feeds_schedule_sync


class Command(BaseCommand):
    help = "Run one pass of each feed source (or of --source NAME ...), synchronously."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--source", action="append", default=[], metavar="NAME", help="repeatable")
        parser.add_argument("--mode", choices=MODES, help="default: FEEDS_MODE")

    def handle(self, *args, source: list[str], mode: str | None, **options) -> None:
        known = [s.name for s in feeds_all()]
        unknown = [name for name in source if name not in known]
        if unknown:
            raise CommandError(f"unknown source(s): {', '.join(unknown)}; known: {', '.join(known)}")
        feeds_schedule_sync()
        failed = 0
        for name in source or known:
            # An operator's pass runs even while the source is backed off (force).
            state = feed_run(name=name, mode=mode, force=True)
            outcome = getattr(state, "outcome", "")
            if outcome == "failed":
                failed += 1
                line = f"{name}: FAILED replay={state.last_replay} error={state.last_error}"
            elif outcome == "running":
                line = f"{name}: skipped (a pass is already running)"
            else:
                line = f"{name}: rows={state.rows_written} replay={state.last_replay}"
                if state.last_note:
                    line += f" note={state.last_note}"
            self.stdout.write(line)
        if failed:
            self.stderr.write(f"{failed} source(s) failed")
