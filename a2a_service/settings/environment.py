"""The environment every settings module reads (12-factor: what differs between machines comes
from it), where the project and its run files are, and DEBUG."""

from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()
# A local .env is a convenience for development only; production passes real env vars.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Where the embedded local stack keeps its files (SQLite, broker folders, beat schedule).
RUN_DIR = Path(env("A2A_RUN_DIR", default=str(BASE_DIR / ".run")))

DEBUG = env.bool("DJANGO_DEBUG", default=False)
