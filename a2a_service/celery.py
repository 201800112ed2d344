from __future__ import annotations

import os

from celery import Celery

# A worker or beat started without DJANGO_SETTINGS_MODULE runs production settings, which
# refuse to start without real secrets, never the local ones. Set before the app is made:
# Celery's Django fixup is installed only if the variable is present then. (This module is
# imported with the package, so any process importing a2a_service gets this default:
# `make run` and the tests name their settings explicitly.)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2a_service.settings.production")

app = Celery("a2a_service")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Request ids carried into tasks, task failures counted, the service's logging in workers and beat.
from a2a_service.core import taskobserve  # noqa: E402, F401
