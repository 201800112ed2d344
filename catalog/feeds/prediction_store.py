"""What the prediction-venue adapters (polymarket, kalshi) share: the normalized market row,
its upsert on (venue, external_id) with the yes-price history, and the history's retention."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from catalog.feeds.registry import FeedPass
from catalog.feeds.retention import retention_register
from catalog.feeds.unique import unique_on
from catalog.models import PredictionMarket, PredictionPrice

# The price history grows every pass; the markets themselves are kept.
retention_register(
    model=PredictionPrice, time_field="observed_at", days_setting="FEEDS_RETENTION_PREDICTION_PRICES_DAYS"
)


@dataclass(frozen=True, kw_only=True)
class MarketRow:
    venue: str
    external_id: str
    question: str
    category: str = ""
    event_id: str = ""
    outcomes: list[str] = field(default_factory=list)
    yes_price: Decimal | None = None
    volume_usd: Decimal | None = None
    liquidity_usd: Decimal | None = None
    closes_at: datetime | None = None
    status: str = PredictionMarket.Status.OPEN
    url: str = ""
    resolution_source: str = ""
    rules: str = ""


def markets_upsert(rows: list[MarketRow], *, venue: str, source: str, feed_pass: FeedPass) -> int:
    """Upsert one venue's markets; add a price row for each market whose yes price is new or
    changed since the stored one. Each market is saved one by one (not bulk): the saves fire
    the prediction_alert receivers like any other write. Markets of the venue the listing no
    longer carries whose close time has passed are marked closed. A market the listing repeats
    (on two pages) is written once, the last listed. Returns the rows written."""
    replay, observed_at = feed_pass.replay, feed_pass.started_at
    mine = unique_on(
        (row for row in rows if row.venue == venue),
        key=lambda row: row.external_id,
        what=f"{venue} markets",
        feed_pass=feed_pass,
    )
    by_id = {row.external_id: row for row in mine}
    stored = {
        m.external_id: m for m in PredictionMarket.objects.filter(venue=venue, external_id__in=list(by_id))
    }
    prices: list[PredictionPrice] = []
    for external_id, row in by_id.items():
        market = stored.get(external_id) or PredictionMarket(venue=venue, external_id=external_id)
        before = market.yes_price if market.pk is not None else None
        market.question = row.question
        market.category = row.category
        market.event_id = row.event_id
        market.outcomes = row.outcomes
        market.yes_price = row.yes_price
        market.volume_usd = row.volume_usd
        market.liquidity_usd = row.liquidity_usd
        market.closes_at = row.closes_at
        market.status = row.status
        market.url = row.url
        market.resolution_source, market.rules = row.resolution_source, row.rules
        market.source, market.replay = source, replay
        market.observed_at = market.updated_at = observed_at
        market.save()
        if row.yes_price is not None and (before is None or Decimal(before) != row.yes_price):
            prices.append(
                PredictionPrice(
                    market=market, yes_price=row.yes_price, replay=replay, observed_at=observed_at
                )
            )
    PredictionPrice.objects.bulk_create(prices)  # no receiver listens to price rows
    closed = 0
    stale = PredictionMarket.objects.filter(
        venue=venue, status=PredictionMarket.Status.OPEN, closes_at__lt=observed_at
    ).exclude(external_id__in=list(by_id))
    for market in stale:
        market.status = PredictionMarket.Status.CLOSED
        market.save(update_fields=["status"])
        closed += 1
    return len(by_id) + len(prices) + closed


def prediction_prune(*, before: datetime) -> int:
    """Retention: delete the yes-price history older than `before`; returns the rows deleted.
    The market rows stay (they carry the latest price)."""
    deleted, _ = PredictionPrice.objects.filter(observed_at__lt=before).delete()
    return deleted
