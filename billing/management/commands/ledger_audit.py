from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from billing.credits import ledger_audit


class Command(BaseCommand):
    help = "Check that every account's balance equals the sum of its ledger rows (exit 1 if not)."

    def handle(self, *args: Any, **options: Any) -> None:
        mismatches = ledger_audit()
        for account_id, balance, total in mismatches:
            self.stderr.write(f"account {account_id}: balance {balance} != ledger sum {total} (atomic USDC)")
        if mismatches:
            raise CommandError(f"{len(mismatches)} account(s) do not match their ledger")
        self.stdout.write("ledger audit: every balance equals its ledger sum")
