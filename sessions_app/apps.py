from __future__ import annotations

from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Prepaid sessions"

    def ready(self) -> None:
        from billing.front import ownership_register, scheme_register
        from catalog.services import seeder_register
        from sessions_app.rail import SessionScheme, session_owned, session_owned_sql
        from sessions_app.sales import session_sales_register
        from sessions_app.services import session_packs_seed

        from . import (
            products,  # noqa: F401  (the session packs, as product specs)
            signals,  # noqa: F401  (packs cover new session-callable SKUs)
        )

        seeder_register(session_packs_seed)
        # A session token pays on every surface that takes sessions (billing/front/).
        scheme_register(SessionScheme())
        # A signed-in wallet's own session pack pays too, without its token (sign-in-with-x).
        ownership_register("session_pack", session_owned, owned_sql=session_owned_sql())
        # Calls paid by sessions count in every published sales figure.
        session_sales_register()
