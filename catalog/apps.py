from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        # Register every product callable so all payment routes find them.
        from . import products, signals  # noqa: F401
