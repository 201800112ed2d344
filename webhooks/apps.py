from __future__ import annotations

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from catalog.services import seeder_register

        from . import (
            products,  # noqa: F401  (the push products, as product specs)
            signals,  # noqa: F401  (event sources)
        )
        from .services import event_prices_seed

        seeder_register(event_prices_seed)
