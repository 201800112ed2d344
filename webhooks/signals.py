"""Event sources. Each event is written in the same transaction as the row that caused it
(the outbox), so an event is never lost nor sent for a change that rolled back."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.models import (
    DeskSignal,
    EditorialPiece,
    PredictionMarket,
    PredictionMatch,
    RegimeSnapshot,
    SpreadSnapshot,
)
from catalog.products.briefs import BRIEF_MAX_AGE, brief_payload
from catalog.signals import spreads_ingested
from webhooks.events import regime_attestation
from webhooks.models import MorningBriefPush
from webhooks.services import event_publish


@receiver(post_save, sender=RegimeSnapshot)
def regime_changed(sender: type, instance: RegimeSnapshot, created: bool, **kwargs: Any) -> None:
    if created and settings.ATTESTATION_PRIVATE_KEY:
        event_publish(
            kind="regime_attestation",
            payload=regime_attestation(
                regime=instance.regime, confidence=instance.confidence, as_of=iso(instance.computed_at) or ""
            ),
        )


@receiver(post_save, sender=DeskSignal)
def signal_opened(sender: type, instance: DeskSignal, created: bool, **kwargs: Any) -> None:
    if created:
        event_publish(
            kind="copy_signal",
            payload={
                "signal_id": instance.id,
                "desk": instance.desk,
                "symbol": instance.symbol,
                "side": instance.side,
                "entry_price": float(instance.entry_price),
                "opened_at": iso(instance.opened_at) or "",
            },
        )


def _spread_measure(row: SpreadSnapshot) -> float:
    """What the threshold applies to: the gap net of taker fees where the writer knew the fees
    (the exchanges feed: signed, a negative net gap is no opportunity in either direction),
    else the ingested reading's size (its sign only says which venue is the richer)."""
    if row.net_bps is not None:
        return float(row.net_bps)
    return abs(float(row.spread_bps))


def _spread_previous(row: SpreadSnapshot) -> SpreadSnapshot | None:
    """The reading before `row` that `row` continues: for the exchanges feed (one reading per
    symbol and pass, its best pair) the symbol's previous reading from the feed; for ingested
    readings (several pairs per symbol) the previous reading of the same venue pair."""
    earlier = SpreadSnapshot.objects.filter(symbol=row.symbol, source=row.source).filter(
        Q(captured_at__lt=row.captured_at) | Q(captured_at=row.captured_at, pk__lt=row.pk)
    )
    if row.net_bps is None:
        earlier = earlier.filter(
            Q(venue_a=row.venue_a, venue_b=row.venue_b) | Q(venue_a=row.venue_b, venue_b=row.venue_a)
        )
    return earlier.order_by("-captured_at", "-pk").first()


def _spread_alert(instance: SpreadSnapshot) -> None:
    """pair_arb_alert when a venue pair crosses PAIR_ARB_ALERT_BPS: this reading is at or over
    it and the reading it continues was under it, was of another pair, or does not exist. A
    pair that stays over the threshold pass after pass alerts once."""
    threshold = settings.PAIR_ARB_ALERT_BPS
    if _spread_measure(instance) < threshold:
        return
    before = _spread_previous(instance)
    if before is not None and _spread_measure(before) >= threshold:
        # An ingested reading's previous one is of the same pair already; the feed's best pair
        # of a symbol may change from one pass to the next (a new pair over it alerts).
        same_pair = instance.net_bps is None or (before.venue_a, before.venue_b) == (
            instance.venue_a,
            instance.venue_b,
        )
        if same_pair:
            return  # still over the threshold: alerted when it crossed
    event_publish(
        kind="pair_arb_alert",
        payload={
            "symbol": instance.symbol,
            "venue_a": instance.venue_a,
            "venue_b": instance.venue_b,
            "spread_bps": float(instance.spread_bps),
            "net_bps": float(instance.net_bps) if instance.net_bps is not None else None,
            "at": iso(instance.captured_at) or "",
        },
    )


@receiver(post_save, sender=SpreadSnapshot)
def spread_ingested(sender: type, instance: SpreadSnapshot, created: bool, **kwargs: Any) -> None:
    if created:
        _spread_alert(instance)


@receiver(spreads_ingested, sender=SpreadSnapshot)
def spreads_bulk_ingested(sender: type, rows: list[SpreadSnapshot], **kwargs: Any) -> None:
    """The ingest endpoint's bulk_create, which sends no post_save."""
    for row in rows:
        _spread_alert(row)


@receiver(pre_save, sender=PredictionMarket)
def prediction_moved(sender: type, instance: PredictionMarket, **kwargs: Any) -> None:
    """A yes price that moved by PREDICTION_ALERT_MOVE or more since the stored reading."""
    if instance.pk is None or instance.yes_price is None:
        return
    before = PredictionMarket.objects.filter(pk=instance.pk).values_list("yes_price", flat=True).first()
    if before is None:
        return
    change = float(instance.yes_price) - float(before)
    if abs(change) >= settings.PREDICTION_ALERT_MOVE:
        event_publish(
            kind="prediction_alert",
            payload={
                "venue": instance.venue,
                "market_id": instance.external_id,
                "question": instance.question,
                "yes_price": float(instance.yes_price),
                "change": round(change, 6),
                "at": iso(timezone.now()) or "",
                "reason": "move",
            },
        )


@receiver(pre_save, sender=DeskSignal)
def signal_closed(sender: type, instance: DeskSignal, **kwargs: Any) -> None:
    """A desk signal closed at a loss (its stop, or an expiry under water: catalog/editorial/track_record.py)
    is a risk exit for everyone who copied it."""
    if instance.pk is None or instance.closed_at is None or instance.pnl_pct is None or instance.pnl_pct >= 0:
        return
    if DeskSignal.objects.filter(pk=instance.pk, closed_at__isnull=False).exists():
        return  # already closed before this save
    event_publish(
        kind="risk_exit_alert",
        payload={
            "desk": instance.desk,
            "symbol": instance.symbol,
            "reason": f"{instance.get_exit_reason_display() or 'closed'}: {instance.side} closed at "
            f"{float(instance.pnl_pct):+.2f}%",
            "exit_price": float(instance.exit_price) if instance.exit_price is not None else None,
            "at": iso(instance.closed_at) or "",
        },
    )


@receiver(pre_save, sender=PredictionMatch)
def prediction_diverged(sender: type, instance: PredictionMatch, **kwargs: Any) -> None:
    """prediction_alert when a matched pair's gap net of fees opens (catalog/analytics/
    prediction_match.py sets `divergent`): once on the crossing, not while it stays open."""
    if not instance.divergent:
        return
    if instance.pk is not None and PredictionMatch.objects.filter(pk=instance.pk, divergent=True).exists():
        return  # already open: alerted when it opened
    a, b = instance.market_a, instance.market_b
    event_publish(
        kind="prediction_alert",
        payload={
            "venue": a.venue,
            "market_id": a.external_id,
            "question": a.question,
            "yes_price": float(instance.yes_a) if instance.yes_a is not None else None,
            "change": None,
            "at": iso(instance.computed_at) or "",
            "reason": "divergence",
            "other_venue": b.venue,
            "other_market_id": b.external_id,
            "other_yes_price": float(instance.yes_b) if instance.yes_b is not None else None,
            "gap": instance.gap,
            "net_gap": instance.net_gap,
            "confidence": instance.confidence,
        },
    )


def _brief_pushable(piece: EditorialPiece) -> bool:
    """This morning's published brief: a draft, one scheduled for later (the sweep pushes it
    then) or an old one staff re-publish is not pushed as this morning's."""
    now = timezone.now()
    return (
        piece.kind == EditorialPiece.Kind.MORNING_BRIEF
        and piece.published_at is not None
        and piece.published_at <= now
        and now - (piece.composed_at or piece.published_at) <= BRIEF_MAX_AGE
    )


def morning_brief_push(piece: EditorialPiece) -> bool:
    """Push a published brief once (the MorningBriefPush row is the record) as a morning_brief
    event; event_publish delivers that kind only to the accounts whose entitlement names it
    (bought with /x402/morning-brief/pro), free of per-event charge. True if it pushed now."""
    if not _brief_pushable(piece):
        return False
    with transaction.atomic():
        record, created = MorningBriefPush.objects.get_or_create(piece=piece)
        if not created:
            return False
        full = brief_payload(piece)
        record.event = event_publish(
            kind="morning_brief",
            payload={
                "brief_id": piece.id,
                "brief_date": full["brief_date"],
                "title": full["title"],
                "summary": full["summary"],
                "sections": full["sections"],
                "body": full["body"],
                "published_at": iso(piece.published_at),
                "as_of": full["as_of"],
                "replay": full["replay"],
            },
        )
        record.save(update_fields=["event"])
    return True


@receiver(post_save, sender=EditorialPiece)
def brief_published(sender: type, instance: EditorialPiece, **kwargs: Any) -> None:
    """The composer (catalog/editorial/briefs.py brief_compose) or staff saving a published brief."""
    morning_brief_push(instance)


def morning_brief_push_due() -> int:
    """Briefs published after they were saved (a publication delay, the admin's bulk "Publish
    now"): run by beat (push-morning-brief). Returns how many it pushed."""
    since = timezone.now() - BRIEF_MAX_AGE
    due = (
        EditorialPiece.objects.published()
        .filter(kind=EditorialPiece.Kind.MORNING_BRIEF, webhook_push__isnull=True, published_at__gte=since)
        .order_by("published_at")
    )
    return sum(morning_brief_push(piece) for piece in due)
