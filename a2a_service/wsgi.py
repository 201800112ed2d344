from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

# A server started without DJANGO_SETTINGS_MODULE runs production settings, which refuse to
# start without real secrets, never the local ones (DEBUG, public development keys).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.production")
django_application = get_wsgi_application()

from django.conf import settings  # noqa: E402

from a2a_service.core.fastcache import FreeFastPath, request_is_secure  # noqa: E402
from a2a_service.core.hotsettings import settings_cached  # noqa: E402
from a2a_service.core.metrics_endpoint import METRICS_PATH, metrics_answer  # noqa: E402
from a2a_service.core.requestlog import observe_request  # noqa: E402
from billing.api.credit_fastpath import CreditFastPath  # noqa: E402  (needs Django set up)
from billing.api.signin_fastpath import SignInFastPath  # noqa: E402
from billing.api.voucher_fastpath import VoucherFastPath  # noqa: E402
from billing.x402.fastpath import ChallengeFastPath  # noqa: E402


class SecureFastPaths(ChallengeFastPath):
    """The fast paths answer without Django's SecurityMiddleware. A plain-http request that
    the middleware would redirect goes to Django (which redirects it or, if exempt, answers
    it); an https answer of a fast path gets the HSTS header Django would have added.

    Every request, whoever answers it, gets its request id and is timed here
    (a2a_service/core/requestlog.py); the metrics endpoint for Prometheus is answered here too,
    to its token only (a2a_service/core/metrics_endpoint.py; anything else is Django's 404)."""

    def __init__(self, app: Callable, *, django_app: Callable) -> None:
        super().__init__(app)
        self.django_app = django_app

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        return observe_request(self._answer, environ, start_response)

    def _answer(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == METRICS_PATH:
            answer = metrics_answer(environ, start_response)
            if answer is not None:
                return answer
        secure = request_is_secure(environ)
        redirect, hsts = _transport()
        if not secure and redirect:
            return self.django_app(environ, start_response)
        if not (secure and hsts):
            return super().__call__(environ, start_response)

        def start_with_hsts(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if not any(name.lower() == "strict-transport-security" for name, _ in headers):
                headers = [*headers, ("Strict-Transport-Security", hsts)]
            return start_response(status, headers, exc_info)

        return super().__call__(environ, start_with_hsts)


@settings_cached
def _transport() -> tuple[bool, str]:
    """SECURE_SSL_REDIRECT, and the HSTS header's value ("" for none)."""
    hsts = ""
    if settings.SECURE_HSTS_SECONDS:
        hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            hsts += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            hsts += "; preload"
    return bool(settings.SECURE_SSL_REDIRECT), hsts


# Unpaid 402 challenges and free documents (catalogs, discovery, manifests, teasers) are
# answered from a per-process copy or Redis before Django, and credit-paid calls to pure
# products with one SQL statement (by X-API-Key, or by a sign-in: SignInFastPath), as are
# voucher-paid ones on a known channel (VoucherFastPath); everything else
# (and anything unusual) is Django.
application = SecureFastPaths(
    FreeFastPath(CreditFastPath(SignInFastPath(VoucherFastPath(django_application)))),
    django_app=django_application,
)
