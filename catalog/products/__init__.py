"""Importing this package registers every built product."""

from __future__ import annotations

from . import briefs, news, sessions, status, webhooks  # noqa: F401
