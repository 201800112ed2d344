"""Shared admin pieces: admins that refuse an action the user is not offered, read-only admins
whose actions need the change permission, and the throttled admin login."""

from __future__ import annotations

import hashlib
import logging
import math
import time

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from a2a_service.core.ratelog import log_throttled
from a2a_service.core.throttling import requester_fingerprint

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


def _login_keys(request: HttpRequest) -> tuple[str, str]:
    """(the requester's counter, the username's counter). The requester is the client address
    as the API's rate limit sees it (NUM_PROXIES; an IPv6 /64 is one requester)."""
    username = request.POST.get("username", "").strip().lower()
    return (
        f"{LOGIN_KEY_PREFIX}ip:{requester_fingerprint(request)}",
        f"{LOGIN_KEY_PREFIX}user:{hashlib.sha256(username.encode()).hexdigest()[:32]}",
    )


def _login_blocked_for(key: str) -> float | None:
    """Seconds until the window of `key` ends if it counted ADMIN_LOGIN_MAX_FAILURES, or None."""
    window = settings.ADMIN_LOGIN_WINDOW_SECONDS
    found = cache.get_many([key, key + ":since"])
    if found.get(key, 0) < settings.ADMIN_LOGIN_MAX_FAILURES:
        return None
    return float(found.get(key + ":since", time.time()) + window - time.time())


def _login_failed(key: str) -> None:
    window = settings.ADMIN_LOGIN_WINDOW_SECONDS
    # The first failure opens the window; later ones count in it (an atomic INCR).
    if cache.add(key, 1, timeout=window):
        cache.set(key + ":since", time.time(), timeout=window)
        return
    try:
        cache.incr(key)
    except ValueError:  # the window ended between add and incr: this failure opens one
        cache.add(key, 1, timeout=window)
        cache.set(key + ":since", time.time(), timeout=window)


def _login_block(key: str) -> None:
    """Use up the rest of `key`'s failures at once, for a whole window."""
    window = settings.ADMIN_LOGIN_WINDOW_SECONDS
    cache.set_many({key: settings.ADMIN_LOGIN_MAX_FAILURES, key + ":since": time.time()}, timeout=window)


def _too_many(wait: float) -> HttpResponse:
    seconds = max(1, math.ceil(wait))
    # Logged, but not once per refused request: a password-guessing flood would fill the log.
    log_throttled(logger, "admin-login-refused", "admin login refused: too many failed attempts", exc_info=False)
    return HttpResponse(
        f"Too many failed login attempts. Try again in {seconds} seconds.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
        headers={"Retry-After": str(seconds)},
    )


def admin_login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """The admin site's login view, throttled without letting anyone lock staff out.

    - A requester (client address) with ADMIN_LOGIN_MAX_FAILURES failed attempts within
      ADMIN_LOGIN_WINDOW_SECONDS is refused (429, Retry-After) until the window ends, even with
      the right password: its own failures, nobody else's.
    - A username with that many failures (from any addresses) is under attack: its right
      password still logs in from any requester that is not itself refused, but each wrong one
      refuses its requester for a whole window at once. A guesser spread over many addresses
      gets one guess per address and window instead of ADMIN_LOGIN_MAX_FAILURES, and the
      account's owner is never refused for a stranger's wrong passwords.
    If the cache cannot be reached, logins are not throttled (logged)."""
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    requester, username = _login_keys(request)
    throttled = True
    try:
        wait = _login_blocked_for(requester)
    except Exception:
        log_throttled(logger, "admin-login-throttle", "admin login not throttled: the cache is unreachable")
        throttled, wait = False, None
    if wait is not None:
        return _too_many(wait)
    response = admin.site.login(request, extra_context)
    # A successful admin login redirects with a staff user logged in; anything else failed.
    if not throttled or (response.status_code == 302 and request.user.is_active and request.user.is_staff):
        return response
    try:
        under_attack = _login_blocked_for(username) is not None
        _login_failed(username)
        if not under_attack:
            _login_failed(requester)
            return response
        _login_block(requester)
        log_throttled(
            logger,
            "admin-login-attacked",
            "admin login: a username with %s failed attempts in the window; each wrong password now "
            "refuses its address for the window",
            settings.ADMIN_LOGIN_MAX_FAILURES,
            exc_info=False,
        )
    except Exception:
        log_throttled(logger, "admin-login-throttle", "admin login not throttled: the cache is unreachable")
        return response
    return _too_many(settings.ADMIN_LOGIN_WINDOW_SECONDS)
