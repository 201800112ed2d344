from __future__ import annotations

import sys

# py_ecc (imported through eth_account and the x402 package) raises the interpreter's recursion
# limit to 100,000 when it is first imported. Recursion in C code (json decoding, repr, pickling)
# then overflows a thread's C stack long before Python would raise RecursionError, and a deeply
# nested request body or payment header killed the whole worker process. Import it here, first,
# in every process (web, Celery worker and beat, manage.py: they all import this package before
# anything else), and put the limit back; later imports of py_ecc are cached and change nothing.
RECURSION_LIMIT = 1000
import py_ecc  # noqa: E402, F401

sys.setrecursionlimit(RECURSION_LIMIT)

# Load the Celery app whenever Django starts so that @shared_task binds to it.
from .celery import app as celery_app  # noqa: E402

__all__ = ["celery_app", "RECURSION_LIMIT"]
