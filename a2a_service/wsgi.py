from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local")
django_application = get_wsgi_application()

from billing.x402.fastpath import ChallengeFastPath  # noqa: E402  (needs Django set up)

# Unpaid 402 challenges are answered from Redis before Django; everything else is Django.
application = ChallengeFastPath(django_application)
