from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        # Register every product callable so all payment routes find them.
        from django.db.models.signals import post_migrate

        from a2a_service.core.views import hit_counter_register

        from . import products, signals  # noqa: F401
        from .counters import counter_increment
        from .feeds import adapters_load
        from .products import availability  # noqa: F401  (connects the availability watch)

        adapters_load()

        hit_counter_register(counter_increment)
        from a2a_service.core.metrics import scrape_collector_register

        from .feeds.metrics import feed_metrics

        # Each source's age since its last success, read from the database when scraped.
        scrape_collector_register("feeds", feed_metrics)
        # Every registered feed source gets its schedule row (django-celery-beat) once the
        # tables exist; staff edits of existing rows are kept.
        post_migrate.connect(_feeds_schedule, sender=self)


def _feeds_schedule(**kwargs) -> None:
    from .feeds.schedule import feeds_schedule_sync

    feeds_schedule_sync()
