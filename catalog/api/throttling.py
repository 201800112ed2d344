"""DRF's per-client rate limit, failing open: if the cache (Redis) cannot be reached, the
request is served and the failure logged, instead of every request answering 500. Health
reports the cache as down meanwhile."""

from __future__ import annotations

import logging

from rest_framework.throttling import AnonRateThrottle

logger = logging.getLogger(__name__)


class ClientRateThrottle(AnonRateThrottle):
    def allow_request(self, request, view) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception:
            logger.warning("rate limit not applied: the cache is unreachable", exc_info=True)
            return True
