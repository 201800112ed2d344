"""The admin in a real browser: Playwright driving the distribution's Chromium (never a
downloaded browser) against a live server that runs the production WSGI stack (the fast paths
in front of Django included). Staff reprice a SKU and the next unpaid call's 402 asks the new
amount; publish and replace a composed brief; replay a dead-lettered delivery; confirm and
reject cross-venue pairs; re-enable a killed desk; rotate a customer's key (shown once) and
revoke a whale token. A view-only staff member sees the same screens, gets no button for any
of it, and is refused (403) when posting it by hand. Each screen is kept as a screenshot under
ADMIN_SCREENSHOTS_DIR (default .run/artifacts/admin/)."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from a2a_service.core.redisconn import redis_client
from billing.models import Account, ApiKey, WhaleToken
from billing.x402.fastpath import PREFIX as CHALLENGES
from catalog.analytics.prediction_match import prediction_matches_refresh
from catalog.editorial.briefs import brief_compose
from catalog.editorial.intel import TREND_DESK
from catalog.editorial.track_record import desk_kill, desk_signal_publish
from catalog.models import DeskState, EditorialPiece, PredictionMatch, Sku
from tests.support import ROOT
from tests.support.deposits import tier_account
from tests.support.marketdata import brief_market_write, prediction_market_write, prediction_shop_write
from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import funded_buyer
from webhooks.models import WebhookDelivery
from webhooks.services import event_publish
from webhooks.tasks import deliver

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("ADMIN_SCREENSHOTS_DIR") or ROOT / ".run" / "artifacts" / "admin")
# Headless, and nothing that phones home: this machine's network is closed, and Chromium's
# background connections (component updates, sync, QUIC probes) would be refused or hang.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "browser-test-password"
BRIEF = "/api/a2a/x402/morning-brief"
STATUS = "/api/a2a/x402/payments/dual-rail-status"
DIVERGENCE = "/api/a2a/x402/prediction/divergence-alerts"
# The admins staff work in, and the permission codename of each.
MODELS = [
    ("catalog", "sku"),
    ("catalog", "editorialpiece"),
    ("catalog", "predictionmatch"),
    ("catalog", "deskstate"),
    ("webhooks", "webhookdelivery"),
    ("webhooks", "deliveryattempt"),
    ("billing", "account"),
    ("billing", "apikey"),
    ("billing", "whaletoken"),
]
OPERATOR_PERMS = [f"{app}.{verb}_{model}" for app, model in MODELS for verb in ("view", "change")]
VIEWER_PERMS = [f"{app}.view_{model}" for app, model in MODELS]


# --- the browser, the live service, staff ---------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module (each start costs seconds)."""
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (`make install` installs the distribution's package)")
    from playwright.sync_api import sync_playwright

    patch = pytest.MonkeyPatch()
    # Playwright's sync API keeps its asyncio loop running in this thread (in a greenlet) between
    # calls, and Django refuses ORM calls from a thread with a running loop. The ORM calls here
    # are the test's own, plain synchronous ones; the server answers in its own thread.
    patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        patch.undo()


@pytest.fixture
def service(transactional_db) -> Iterator[str]:
    """The service on a live server: the production WSGI application (the challenge, free and
    credit fast paths before Django), static files served for the admin's pages."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from pytest_django.live_server_helper import LiveServer

    from a2a_service.wsgi import application
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    server = LiveServer("127.0.0.1:0", start=False)
    server.thread.static_handler = lambda _django: StaticFilesHandler(application)
    server.start()
    yield server.url
    # The server's request threads end when their clients hang up (the browser sessions are
    # closed first): let them close their database connections before the server stops sharing
    # the test's in-memory SQLite one.
    deadline = time.monotonic() + 10
    for thread in threading.enumerate():
        if thread.name.endswith("(process_request_thread)"):
            thread.join(max(0.0, deadline - time.monotonic()))
    server.stop()


def staff(username: str, perms: list[str]) -> Any:
    """A staff user (not a superuser) with exactly these permissions ("app.codename")."""
    user = get_user_model().objects.create_user(username, f"{username}@example.com", PASSWORD, is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


class Admin:
    """One staff member's browser session: screens opened, actions run, each screen kept."""

    def __init__(self, browser: Any, base: str, user: Any, story: str) -> None:
        self.base, self.story, self.n = base, story, 0
        for old in ARTIFACTS.glob(f"{story}-*.png"):  # this run's screens only
            old.unlink()
        self.context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.page.goto("/admin/login/?next=/admin/")
        self.shot("login")
        self.page.fill("#id_username", user.username)
        self.page.fill("#id_password", PASSWORD)
        self.page.click("input[type=submit]")
        self.page.wait_for_url("**/admin/")
        self.shot("dashboard")

    def shot(self, screen: str, *, full_page: bool = False) -> None:
        """The screen as staff see it (the window; the whole page when asked)."""
        self.n += 1
        path = ARTIFACTS / f"{self.story}-{self.n:02d}-{screen}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 0

    def open(self, path: str, screen: str, *, full_page: bool = False) -> Any:
        response = self.page.goto(path)
        assert response is not None and response.status == 200, (path, response and response.status)
        self.shot(screen, full_page=full_page)
        return self.page

    def act(self, path: str, action: str, pks: list[int], screen: str) -> str:
        """Tick the rows, choose the action, press Go: the page that answers (kept), as text."""
        self.open(path, screen + "-list")
        for pk in pks:
            self.page.check(f'input[name="_selected_action"][value="{pk}"]')
        self.page.select_option('select[name="action"]', action)
        with self.page.expect_navigation():
            self.page.click('button[name="index"]')
        self.shot(screen)
        return str(self.page.inner_text("body"))

    def save(self, screen: str) -> str:
        """Press Save on a change form: the page it lands on (kept), as text."""
        with self.page.expect_navigation():
            self.page.click('input[name="_save"]')
        self.shot(screen)
        return str(self.page.inner_text("body"))

    def messages(self) -> str:
        found = self.page.locator("ul.messagelist")
        return str(found.inner_text()) if found.count() else ""

    def post(self, path: str, form: dict[str, Any]) -> int:
        """A POST by hand with this session's cookies and CSRF token (what a crafted form does):
        its status, once the CSRF check passed (a 403 for a bad token would prove nothing)."""
        token = self.page.locator('input[name="csrfmiddlewaretoken"]').first.get_attribute("value")
        response = self.context.request.post(self.base + path, form={"csrfmiddlewaretoken": token, **form})
        assert "CSRF" not in response.text(), response.text()[:300]
        return int(response.status)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def staff_browser(browser, service) -> Iterator[Any]:
    """Opens a staff member's browser session; closed before the server stops (a session left
    open would hold a keep-alive connection to it)."""
    opened: list[Admin] = []

    def open_session(user: Any, story: str) -> Admin:
        opened.append(Admin(browser, service, user, story))
        return opened[-1]

    yield open_session
    for session in opened:
        session.close()


# --- what the API answers ---------------------------------------------------------------------------
def get(base: str, path: str, **headers: str) -> requests.Response:
    # One connection per call, closed by the server: no request thread outlives the test.
    return requests.get(base + path, headers={"Connection": "close", **headers}, timeout=30)


def challenge_amount(base: str, path: str) -> str:
    """The amount the unpaid call's 402 asks (the PAYMENT-REQUIRED header's first offer)."""
    resp = get(base, path)
    assert resp.status_code == 402, resp.text
    return str(json.loads(base64.b64decode(resp.headers["PAYMENT-REQUIRED"]))["accepts"][0]["amount"])


def balance(account: Account) -> int:
    return Account.objects.get(pk=account.pk).credit_balance_atomic


# --- the states staff act on --------------------------------------------------------------------------
def composed_brief(settings: Any) -> EditorialPiece:
    """Today's brief composed from the data, waiting an hour for staff to review it."""
    settings.MORNING_BRIEF_PUBLISH_DELAY_MINUTES = 60
    brief_market_write()
    run = brief_compose()
    assert run.action == "created" and run.piece is not None
    assert run.piece.author_id is None and run.piece.composed_at is not None
    return run.piece


def dead_letter(api: Any, receiver: Any) -> WebhookDelivery:
    """A delivery whose receiver failed every attempt: dead-lettered."""
    subscribe(api, receiver)
    receiver.statuses = [(500, {})] * 8
    event_publish(kind="copy_signal", payload={"symbol": "BTC/USDT", "side": "long"})
    delivery = run_until_settled(WebhookDelivery.objects.get(), max_attempts=20)
    assert delivery.state == WebhookDelivery.State.DEAD and delivery.attempts == 8
    return delivery


def pairs() -> tuple[PredictionMatch, PredictionMatch]:
    """The Fed decision on Kalshi and Polymarket (matched), and a near miss the matcher left
    unconfirmed (ETH $7,000 against $6,000: low confidence)."""
    prediction_shop_write()
    fed = PredictionMatch.objects.get()
    prediction_market_write(
        venue="kalshi", external_id="KXETH-7000", question="Will Ethereum reach $7,000 in 2026?", yes_price=0.03
    )
    prediction_market_write(
        venue="polymarket", external_id="610040", question="Will Ethereum reach $6,000 in 2026?", yes_price=0.20
    )
    prediction_matches_refresh()
    near = PredictionMatch.objects.exclude(pk=fed.pk).get()
    assert fed.status == near.status == PredictionMatch.Status.AUTO and near.confidence < 0.6
    return fed, near


def killed_desk(base: str) -> DeskState:
    state = desk_kill(desk=TREND_DESK, reason="drawdown 6.00% reached the kill threshold 5.00%")
    assert get(base, "/api/a2a/performance").json()["killed_desks"] == [TREND_DESK]
    return state


def whale_token(base: str, key: str) -> str:
    resp = requests.post(
        base + "/api/a2a/account/whale/token", headers={"Connection": "close", "X-API-Key": key}, timeout=30
    )
    assert resp.status_code == 201, resp.text
    token = str(resp.json()["token"])
    assert get(base, "/api/a2a/discovery/storefront", **{"X-Whale-Token": token}).status_code == 200
    return token


def publish_signal() -> Any:
    return desk_signal_publish(
        desk=TREND_DESK,
        symbol="BTC/USDT",
        side="long",
        venue="binance",
        timeframe="1h",
        entry_price=100.0,
        stop_price=95.0,
        target_price=110.0,
        expires_at=None,
    )


# --- staff with the change permissions ----------------------------------------------------------------
def test_staff_reprice_a_sku_and_publish_then_replace_the_composed_brief(staff_browser, service, api, settings):
    piece = composed_brief(settings)
    key, buyer = funded_buyer(api)
    assert get(service, "/api/a2a/morning-brief").json()["available"] is False  # not yet published
    sku = Sku.objects.get(sku="morning_brief")
    # Nothing to deliver yet: the unpaid call is a 503, and no agent is asked to sign for nothing.
    assert get(service, BRIEF).status_code == 503

    admin = staff_browser(staff("editor", OPERATOR_PERMS), "price-and-brief")
    # Publish the composed brief now (staff reviewed it).
    admin.act("/admin/catalog/editorialpiece/", "publish_now", [piece.pk], "brief-published")
    assert "1 piece(s) published" in admin.messages()
    free = get(service, "/api/a2a/morning-brief").json()
    assert free["available"] is True and free["id"] == piece.pk and free["title"] == piece.title
    # Two unpaid calls: the challenge is now stored (Redis and this process's copy, when Redis is on).
    assert challenge_amount(service, BRIEF) == challenge_amount(service, BRIEF) == "80000"
    redis = redis_client()
    if redis is not None:
        assert list(redis.scan_iter(match=f"{CHALLENGES}*")), "the unpaid challenge was not stored"

    # Replace its text in the change form.
    page = admin.open(f"/admin/catalog/editorialpiece/{piece.pk}/change/", "brief-change-form", full_page=True)
    assert page.input_value("#id_body") == piece.body
    title, summary = "Morning brief: the desk's own read", "Risk off before the FOMC decision."
    body = "## Desk view\n- Stay flat into the FOMC decision. [source](/api/a2a/x402/risk/macro-gate)"
    page.fill("#id_title", title)
    page.fill("#id_summary", summary)
    page.fill("#id_body", body)
    admin.shot("brief-replaced-text", full_page=True)
    admin.save("brief-saved")
    assert "was changed successfully" in admin.messages()
    piece.refresh_from_db()
    assert (piece.title, piece.summary, piece.body) == (title, summary, body)
    assert piece.author is not None and piece.author.username == "editor" and piece.published_at is not None
    assert get(service, "/api/a2a/morning-brief").json()["title"] == title
    before = balance(buyer)
    paid = get(service, BRIEF, **{"X-API-Key": key})
    assert paid.status_code == 200, paid.text
    assert paid.json()["body"] == body and paid.json()["edited_by_staff"] is True
    assert before - balance(buyer) == 80_000
    # The next composition of the day leaves staff's text alone.
    assert brief_compose().action == "kept"
    piece.refresh_from_db()
    assert piece.body == body

    # Reprice the SKU: the next unpaid call asks the new amount, the next paid one charges it.
    page = admin.open(f"/admin/catalog/sku/{sku.pk}/change/", "sku-change-form")
    assert page.input_value("#id_price_usdc") in ("0.08", "0.080000")
    page.fill("#id_price_usdc", "0.095")
    admin.save("sku-saved")
    assert "was changed successfully" in admin.messages()
    sku.refresh_from_db()
    assert sku.price_atomic == 95_000
    assert challenge_amount(service, BRIEF) == "95000"
    before = balance(buyer)
    assert get(service, BRIEF, **{"X-API-Key": key}).status_code == 200
    assert before - balance(buyer) == 95_000


def test_staff_replay_a_dead_letter_review_pairs_and_reenable_a_killed_desk(
    staff_browser, service, api, receiver, queued
):
    delivery = dead_letter(api, receiver)
    first_id = receiver.received[0]["id"]
    fed, near = pairs()
    state = killed_desk(service)
    assert publish_signal() is None  # a killed desk publishes nothing

    admin = staff_browser(staff("operator", OPERATOR_PERMS), "operations")
    # Replay the dead letter: queued for a worker; the worker's task delivers it.
    queued.clear()
    admin.act("/admin/webhooks/webhookdelivery/?state__exact=dead", "replay", [delivery.pk], "delivery-replayed")
    assert "1 delivery(ies) queued again" in admin.messages()
    assert queued == [delivery.pk]
    delivery.refresh_from_db()
    assert delivery.state == WebhookDelivery.State.PENDING and delivery.attempts == 0
    assert deliver(delivery.pk) == "delivered"  # what the webhooks worker runs for the message
    delivery.refresh_from_db()
    assert delivery.state == WebhookDelivery.State.DELIVERED and delivery.attempt_log.count() == 9
    last = receiver.received[-1]
    assert (last["status"], last["verified"], last["id"]) == (200, True, first_id)  # the same webhook-id
    assert len(receiver.received) == 9
    admin.open(f"/admin/webhooks/deliveryattempt/?delivery__id__exact={delivery.pk}", "delivery-attempts")

    # Confirm the near miss (same event, staff say) and reject the other pair.
    admin.act("/admin/catalog/predictionmatch/", "confirm_pairs", [near.pk], "pair-confirmed")
    assert "1 pair(s) confirmed" in admin.messages()
    admin.act("/admin/catalog/predictionmatch/", "reject_pairs", [fed.pk], "pair-rejected")
    assert "1 pair(s) rejected" in admin.messages()
    prediction_matches_refresh()  # the next matching pass keeps both decisions
    fed.refresh_from_db()
    near.refresh_from_db()
    assert fed.status == PredictionMatch.Status.REJECTED and not fed.divergent
    assert near.status == PredictionMatch.Status.CONFIRMED and near.confidence == 1.0
    key, buyer = funded_buyer(api)
    resp = get(service, DIVERGENCE, **{"X-API-Key": key})
    assert resp.status_code == 200, resp.text
    [row] = resp.json()["divergences"]  # the rejected pair is not sold
    assert row["confirmed"] is True and row["confidence"] == 1.0
    assert {row["a"]["question"], row["b"]["question"]} == {near.market_a.question, near.market_b.question}

    # Re-enable the killed desk: it publishes again.
    admin.act("/admin/catalog/deskstate/", "reenable_desks", [state.pk], "desk-reenabled")
    assert "1 desk(s) re-enabled" in admin.messages()
    state.refresh_from_db()
    assert state.enabled and state.killed_at is None and state.kill_reason == "" and state.record_since
    assert get(service, "/api/a2a/performance").json()["killed_desks"] == []
    assert publish_signal() is not None


def test_staff_rotate_a_customers_key_shown_once_and_revoke_a_whale_token(staff_browser, service):
    account, old_key = tier_account()  # 30 USDC deposited: a whale tier
    token = whale_token(service, old_key)
    assert get(service, "/api/a2a/account", **{"X-API-Key": old_key}).status_code == 200

    admin = staff_browser(staff("keys", OPERATOR_PERMS), "keys")
    text = admin.act(f"/admin/billing/account/?q={account.wallet_address}", "rotate_key", [account.pk], "key-rotated")
    shown = admin.page.locator("code").all_inner_texts()
    [new_key] = [k for k in shown if k.startswith("a2a_")]
    assert new_key != old_key and text.count(new_key) == 1 and admin.page.content().count(new_key) == 1
    # The old key is refused, the new one is the account's.
    refused = get(service, "/api/a2a/account", **{"X-API-Key": old_key})
    assert refused.status_code == 401, refused.text
    accepted = get(service, "/api/a2a/account", **{"X-API-Key": new_key})
    assert accepted.status_code == 200 and accepted.json()["wallet_address"] == account.wallet_address
    assert ApiKey.objects.filter(account=account, revoked_at__isnull=True).count() == 1
    # Shown once: no later page and no cookie carries it.
    for path, screen in [
        ("/admin/billing/account/", "accounts-after"),
        (f"/admin/billing/apikey/?q={account.wallet_address}", "keys-after"),
    ]:
        assert new_key not in admin.open(path, screen).content()
    assert all(new_key not in cookie["value"] for cookie in admin.context.cookies())

    # Revoke the whale token: refused wherever it is sent.
    row = WhaleToken.objects.get(account=account)
    admin.act("/admin/billing/whaletoken/", "revoke", [row.pk], "whale-token-revoked")
    assert "1 whale token(s) revoked" in admin.messages()
    row.refresh_from_db()
    assert row.revoked_at is not None
    resp = get(service, "/api/a2a/discovery/storefront", **{"X-Whale-Token": token})
    assert resp.status_code == 401 and resp.json()["code"] == "whale_token_revoked"


# --- a view-only staff member ------------------------------------------------------------------------
def test_a_view_only_staff_member_sees_the_screens_and_can_do_none_of_it(
    staff_browser, service, api, receiver, queued, settings
):
    piece = composed_brief(settings)
    delivery = dead_letter(api, receiver)
    fed, near = pairs()
    state = killed_desk(service)
    account, key = tier_account()
    token = whale_token(service, key)
    whale = WhaleToken.objects.get(account=account)
    key_row = ApiKey.objects.get(account=account)
    # The price form they try is a product that always has something to deliver, so its stored
    # 402 challenge shows the price (the brief is unpublished: its unpaid call is a 503).
    sku = Sku.objects.get(sku="payments_dual_rail_status")
    price = str(sku.price_atomic)
    assert challenge_amount(service, STATUS) == price
    keys_before = list(ApiKey.objects.values_list("id", "revoked_at"))
    queued.clear()

    admin = staff_browser(staff("viewer", VIEWER_PERMS), "view-only")
    # Every list opens, with its rows and no action to choose.
    lists = [
        ("/admin/catalog/sku/", "skus"),
        ("/admin/catalog/editorialpiece/", "briefs"),
        ("/admin/webhooks/webhookdelivery/", "deliveries"),
        ("/admin/catalog/predictionmatch/", "pairs"),
        ("/admin/catalog/deskstate/", "desks"),
        ("/admin/billing/account/", "accounts"),
        ("/admin/billing/apikey/", "keys"),
        ("/admin/billing/whaletoken/", "whale-tokens"),
    ]
    for path, screen in lists:
        page = admin.open(path, screen)
        assert page.locator("#result_list tbody tr").count() >= 1, path
        assert page.locator('select[name="action"]').count() == 0, path
        assert page.locator('input[name="_selected_action"]').count() == 0, path
    # The change forms show the values and no field to edit, no Save.
    for path, screen, field in [
        (f"/admin/catalog/sku/{sku.pk}/change/", "sku-form", "#id_price_usdc"),
        (f"/admin/catalog/editorialpiece/{piece.pk}/change/", "brief-form", "#id_body"),
        (f"/admin/catalog/deskstate/{state.pk}/change/", "desk-form", "#id_enabled"),
    ]:
        page = admin.open(path, screen)
        assert page.locator(field).count() == 0, path
        assert page.locator('input[name="_save"]').count() == 0, path

    # Posted by hand anyway, every one of them is refused.
    actions = [
        ("/admin/catalog/sku/", "disable_skus", sku.pk),
        ("/admin/catalog/editorialpiece/", "publish_now", piece.pk),
        ("/admin/webhooks/webhookdelivery/", "replay", delivery.pk),
        ("/admin/catalog/predictionmatch/", "confirm_pairs", near.pk),
        ("/admin/catalog/predictionmatch/", "reject_pairs", fed.pk),
        ("/admin/catalog/deskstate/", "reenable_desks", state.pk),
        ("/admin/billing/account/", "rotate_key", account.pk),
        ("/admin/billing/apikey/", "revoke", key_row.pk),
        ("/admin/billing/whaletoken/", "revoke", whale.pk),
    ]
    for path, action, pk in actions:
        assert admin.post(path, {"action": action, "_selected_action": str(pk), "index": "0"}) == 403, action
    forms = [
        (f"/admin/catalog/sku/{sku.pk}/change/", {"price_usdc": "0.5", "sku": sku.sku, "path": sku.path}),
        (f"/admin/catalog/editorialpiece/{piece.pk}/change/", {"kind": piece.kind, "title": "x", "body": "x"}),
        (f"/admin/catalog/deskstate/{state.pk}/change/", {"desk": state.desk, "enabled": "on"}),
    ]
    for path, form in forms:
        assert admin.post(path, form) == 403, path
    admin.open("/admin/", "after-refusals")

    # Nothing changed, in the database or on the API.
    assert str(Sku.objects.get(pk=sku.pk).price_atomic) == price and challenge_amount(service, STATUS) == price
    piece.refresh_from_db()
    assert piece.author_id is None and piece.title != "x" and piece.published_at > piece.composed_at
    assert get(service, "/api/a2a/morning-brief").json()["available"] is False
    delivery.refresh_from_db()
    assert delivery.state == WebhookDelivery.State.DEAD and delivery.attempts == 8 and queued == []
    assert set(PredictionMatch.objects.values_list("status", flat=True)) == {PredictionMatch.Status.AUTO}
    state.refresh_from_db()
    assert state.killed_at is not None
    assert get(service, "/api/a2a/performance").json()["killed_desks"] == [TREND_DESK]
    assert list(ApiKey.objects.values_list("id", "revoked_at")) == keys_before
    assert get(service, "/api/a2a/account", **{"X-API-Key": key}).status_code == 200
    whale.refresh_from_db()
    assert whale.revoked_at is None
    assert get(service, "/api/a2a/discovery/storefront", **{"X-Whale-Token": token}).status_code == 200

