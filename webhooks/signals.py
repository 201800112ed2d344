"""Event sources. Each event is written in the same transaction as the row that caused it
(the outbox), so an event is never lost nor sent for a change that rolled back."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from catalog.formats import iso
from catalog.models import DeskSignal, RegimeSnapshot
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
