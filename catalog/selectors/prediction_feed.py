"""The partner prediction feed's free teaser: the teaser row, and a real excerpt of the
prediction markets the feeds ingested (a few rows, with their provenance)."""

from __future__ import annotations

from django.db.models import Count, F

from catalog.models import PredictionMarket
from catalog.selectors import schemas as s
from catalog.selectors.market import prediction_market_out, prediction_sources
from catalog.selectors.teasers import teaser

# A teaser shows a taste, not the product: the five most traded open markets.
EXCERPT_ROWS = 5


def partner_feed_teaser(base: str) -> s.PartnerFeedTeaserOut | None:
    row = teaser(base, "prediction-partner-feed")
    if row is None:
        return None
    open_markets = PredictionMarket.objects.filter(status=PredictionMarket.Status.OPEN)
    shown = open_markets.filter(
        pk__in=list(
            open_markets.order_by(F("volume_usd").desc(nulls_last=True), "id").values_list("pk", flat=True)[
                :EXCERPT_ROWS
            ]
        )
    )
    venues = dict(
        open_markets.order_by().values_list("venue").annotate(n=Count("id")).values_list("venue", "n")
    )
    as_of, sources = prediction_sources(shown)
    return s.PartnerFeedTeaserOut(
        **row.model_dump(),
        markets=[
            prediction_market_out(m) for m in shown.order_by(F("volume_usd").desc(nulls_last=True), "id")
        ],
        venues=venues,
        as_of=as_of,
        sources=sources,
    )
