from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.local")
django_application = get_wsgi_application()

from billing.api.credit_fastpath import CreditFastPath  # noqa: E402  (needs Django set up)
from billing.x402.fastpath import ChallengeFastPath  # noqa: E402

# Unpaid 402 challenges are answered from Redis before Django, and credit-paid calls to pure
# products with one SQL statement; everything else (and anything unusual) is Django.
application = ChallengeFastPath(CreditFastPath(django_application))
