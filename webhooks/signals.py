"""Event sources. Each event is written in the same transaction as the row that caused it
(the outbox), so an event is never lost nor sent for a change that rolled back."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.utils import timezone

from a2a_service.core.formats import iso
from catalog.models import DeskSignal, PredictionMarket, RegimeSnapshot, SpreadSnapshot
from catalog.signals import spreads_ingested
from webhooks.events import regime_attestation
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


def _spread_alert(instance: SpreadSnapshot) -> None:
    if abs(float(instance.spread_bps)) >= settings.PAIR_ARB_ALERT_BPS:
        event_publish(
            kind="pair_arb_alert",
            payload={
                "symbol": instance.symbol,
                "venue_a": instance.venue_a,
                "venue_b": instance.venue_b,
                "spread_bps": float(instance.spread_bps),
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
            },
        )


@receiver(pre_save, sender=DeskSignal)
def signal_closed(sender: type, instance: DeskSignal, **kwargs: Any) -> None:
    """A desk signal closed at a loss (its stop, or an expiry under water: catalog/track_record.py)
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
