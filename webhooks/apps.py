from __future__ import annotations

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from . import (
            products,  # noqa: F401  (the push products, as product specs)
            signals,  # noqa: F401  (event sources)
        )
