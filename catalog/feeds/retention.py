"""Pruning of the high-volume feed tables (probes, spreads, candles, ticks): each registers
the model, its time field and the setting holding its window in days. News is sold, so it is
never pruned here. Adapters that add a high-volume table call `retention_register` when their
package is imported."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from catalog.models import RpcProbe, SpreadSnapshot
from catalog.signals import data_pass_finished

PRUNE_BATCH = 5000


@dataclass(frozen=True, kw_only=True)
class Retention:
    model: type[models.Model]
    time_field: str
    days_setting: str  # the setting holding the window in days (0 or less: keep everything)


_RETENTIONS: dict[str, Retention] = {}


def retention_register(*, model: type[models.Model], time_field: str, days_setting: str) -> None:
    _RETENTIONS[model._meta.label] = Retention(model=model, time_field=time_field, days_setting=days_setting)


def retentions_all() -> list[Retention]:
    return list(_RETENTIONS.values())


def feeds_prune() -> dict[str, int]:
    """Delete rows older than each table's window, in batches (a short lock each). Returns the
    rows deleted per model label."""
    deleted: dict[str, int] = {}
    now = timezone.now()
    for r in retentions_all():
        days = int(getattr(settings, r.days_setting))
        if days <= 0:
            continue
        cutoff = now - timedelta(days=days)
        manager = r.model._default_manager
        total = 0
        while True:
            ids = list(
                manager.filter(**{f"{r.time_field}__lt": cutoff}).values_list("pk", flat=True)[:PRUNE_BATCH]
            )
            if not ids:
                break
            manager.filter(pk__in=ids).delete()
            total += len(ids)
        deleted[r.model._meta.label] = total
    data_pass_finished.send(sender=feeds_prune)  # the rows pruned may have been a product's last
    return deleted


retention_register(model=RpcProbe, time_field="probed_at", days_setting="FEEDS_RETENTION_PROBES_DAYS")
retention_register(
    model=SpreadSnapshot, time_field="captured_at", days_setting="FEEDS_RETENTION_SPREADS_DAYS"
)
