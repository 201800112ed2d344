"""Recompute the cross-venue prediction pairs now (each Polymarket and Kalshi pass does it too)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from catalog.analytics.prediction_match import prediction_matches_refresh


class Command(BaseCommand):
    help = "Match prediction markets across venues and refresh the pairs' gaps (catalog/analytics/prediction_match.py)."

    def handle(self, *args: Any, **options: Any) -> None:
        pairs = prediction_matches_refresh()
        self.stdout.write(f"{pairs} prediction pairs stored")
