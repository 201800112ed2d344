"""Shared admin pieces: admins that refuse an action the user is not offered, read-only admins
whose actions need the change permission, and the throttled admin login."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import cast

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from a2a_service.core.ratelog import log_throttled

logger = logging.getLogger(__name__)


class StaffAdmin(admin.ModelAdmin):
    """A ModelAdmin whose list refuses (403) a posted action the user is not offered.

    Django drops such a post quietly (the list again, or "No action selected"): nothing runs,
    but a view-only staff member who posts an action by hand is told nothing. Refusing it says
    so, and the refusal is the same whichever action or admin it is."""

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        action = request.POST.get("action", "") if request.method == "POST" else ""
        # "_save" is the list's own editable form, not an action.
        if action and "_save" not in request.POST and action not in self.get_actions(request):
            raise PermissionDenied(f"the action {action!r} is not offered to this user")
        return super().changelist_view(request, extra_context)


class ReadOnlyAdmin(StaffAdmin):
    """Records that code writes (payments, ledger, deposits, deliveries, ingested rows): staff
    read them, and correct them only through their own actions (adjustments, replays).

    Nobody edits these rows in a form, so has_change_permission is False for everyone; the
    actions change them through services and are offered only to staff who hold the model's
    change permission (`@admin.action(permissions=["operate"])`). Staff with only the view
    permission see the rows and no actions."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_operate_permission(self, request: HttpRequest) -> bool:
        """The model's real change permission (the one has_change_permission hides)."""
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('change', opts)}")


# --- the admin login, throttled ---------------------------------------------------------------
LOGIN_KEY_PREFIX = "admin-login:"


def _login_keys(request: HttpRequest) -> list[str]:
    """One counter per client address (as the API's rate limit sees it: NUM_PROXIES) and one
    per username, so neither many passwords from one address nor one account from many
    addresses gets more than ADMIN_LOGIN_MAX_FAILURES tries per window."""
    # get_ident reads only request.META, which a Django HttpRequest has as a DRF Request does.
    ip = BaseThrottle().get_ident(cast(Request, request))
    username = request.POST.get("username", "").strip().lower()
    return [
        f"{LOGIN_KEY_PREFIX}ip:{hashlib.sha256(ip.encode()).hexdigest()[:32]}",
        f"{LOGIN_KEY_PREFIX}user:{hashlib.sha256(username.encode()).hexdigest()[:32]}",
    ]


def _login_blocked_for(keys: list[str]) -> float | None:
    """Seconds until the window of a counter that reached the limit ends, or None."""
    window = settings.ADMIN_LOGIN_WINDOW_SECONDS
    found = cache.get_many([*keys, *(k + ":since" for k in keys)])
    waits = [
        found.get(key + ":since", time.time()) + window - time.time()
        for key in keys
        if found.get(key, 0) >= settings.ADMIN_LOGIN_MAX_FAILURES
    ]
    return max(waits, default=None)


def _login_failed(keys: list[str]) -> None:
    window = settings.ADMIN_LOGIN_WINDOW_SECONDS
    for key in keys:
        # The first failure opens the window; later ones count in it (an atomic INCR).
        if cache.add(key, 1, timeout=window):
            cache.set(key + ":since", time.time(), timeout=window)
            continue
        try:
            cache.incr(key)
        except ValueError:  # the window ended between add and incr: this failure opens one
            cache.add(key, 1, timeout=window)
            cache.set(key + ":since", time.time(), timeout=window)


def admin_login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """The admin site's login view, refusing (429, Retry-After) an address or a username with
    ADMIN_LOGIN_MAX_FAILURES failed attempts within ADMIN_LOGIN_WINDOW_SECONDS, even with the
    right password. If the cache cannot be reached, logins are not throttled (logged)."""
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    keys = _login_keys(request)
    try:
        wait = _login_blocked_for(keys)
    except Exception:
        log_throttled(logger, "admin-login-throttle", "admin login not throttled: the cache is unreachable")
        keys, wait = [], None
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        # Logged, but not once per refused request: a password-guessing flood would fill the log.
        log_throttled(
            logger, "admin-login-refused", "admin login refused: too many failed attempts", exc_info=False
        )
        return HttpResponse(
            f"Too many failed login attempts. Try again in {seconds} seconds.\n",
            status=429,
            content_type="text/plain; charset=utf-8",
            headers={"Retry-After": str(seconds)},
        )
    response = admin.site.login(request, extra_context)
    # A successful admin login redirects with a staff user logged in; anything else failed.
    if keys and not (response.status_code == 302 and request.user.is_active and request.user.is_staff):
        try:
            _login_failed(keys)
        except Exception:
            log_throttled(
                logger, "admin-login-throttle", "admin login not throttled: the cache is unreachable"
            )
    return response
