from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        # Register every product callable so all payment routes find them.
        from a2a_service.core.views import hit_counter_register

        from . import products, signals  # noqa: F401
        from .counters import counter_increment

        hit_counter_register(counter_increment)
