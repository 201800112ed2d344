"""Settings read on every request in front of Django, read once.

A read of django.conf.settings costs about a microsecond (LazyObject's __getattribute__ on
every attribute): the fast paths read a dozen per request, which was a tenth of what an
unpaid 402 costs. A function decorated with `settings_cached` is computed once and again after
any setting changes (Django's setting_changed: override_settings and pytest-django's `settings`
fixture send it; production settings never change while a process runs)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from django.core.signals import setting_changed
from django.dispatch import receiver

T = TypeVar("T")
_CACHED: list[Any] = []


def settings_cached(func: Callable[[], T]) -> Callable[[], T]:
    """`func` (no arguments, a function of settings only), computed once per settings."""
    cached = lru_cache(maxsize=1)(func)
    _CACHED.append(cached)
    return cached


@receiver(setting_changed)
def _settings_changed(**kwargs: Any) -> None:
    for cached in _CACHED:
        cached.cache_clear()
