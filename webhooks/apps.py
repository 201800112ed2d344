from __future__ import annotations

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        from billing.front import ownership_register
        from catalog.editorial.track_record import live_fills_register
        from catalog.services import seeder_register

        from . import (
            dispatch,  # noqa: F401  (desk signals to delegations and pools)
            products,  # noqa: F401  (the push products, as product specs)
            signals,  # noqa: F401  (event sources)
        )
        from .delegation.selectors import live_fills_by_desk
        from .products import push_owned, push_owned_sql
        from .services import delivery_task_register, event_prices_seed
        from .tasks import deliver

        seeder_register(event_prices_seed)
        # The outbox queues its deliveries through the task that runs them (above it).
        delivery_task_register(deliver)
        # The scorecard's live_fills: catalog reads the fills through its hook.
        live_fills_register(live_fills_by_desk)
        # A signed-in wallet's push entitlement owns what it pushes (sign-in-with-x).
        ownership_register("push_entitlement", push_owned, owned_sql=push_owned_sql())
