"""Staff run the shop in the admin: a price edited there is what the next request shows."""

from __future__ import annotations

import re
import secrets
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model

from catalog.models import EditorialPiece, Sku
from catalog.products.registry import products_built, specs_all
from tests.support.wallets import register_wallet

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(user)
    return client


def _form_data(client, url: str) -> dict:
    """The change form as a browser would submit it: every field with its current value."""
    resp = client.get(url)
    assert resp.status_code == 200
    form = resp.context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None:
            continue
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        if isinstance(value, list):
            data[name] = [str(v) for v in value]
            continue
        data[name] = str(value)
    return data


def test_admin_price_edit_shows_in_the_next_storefront_request(staff_client, api):
    sku = Sku.objects.get(sku="morning_brief")
    url = f"/admin/catalog/sku/{sku.pk}/change/"
    data = _form_data(staff_client, url)
    assert data["price_usdc"] in ("0.080000", "0.08")
    data["price_usdc"] = "0.09"
    resp = staff_client.post(url, data)
    assert resp.status_code == 302, resp.context["adminform"].form.errors if resp.context else resp
    sku.refresh_from_db()
    assert sku.price_atomic == 90_000
    store = {s["sku"]: s for s in api.get("/api/a2a/discovery/storefront").json()["storefront_skus"]}
    assert store["morning_brief"]["price_usdc"] == 0.09
    assert store["morning_brief"]["price_usdc_base"] == 0.08
    x402 = {r["sku"]: r for r in api.get("/.well-known/x402").json()["resources"]}
    assert x402["morning_brief"]["amount"] == "90000"


def test_admin_bulk_disable_and_enable(staff_client, api):
    # Two built SKUs (of those that answer 402): switched off, they leave the live count.
    built = len(products_built())
    ids = list(Sku.objects.filter(sku__in=["morning_brief", "telemetry_detail"]).values_list("pk", flat=True))
    resp = staff_client.post("/admin/catalog/sku/", {"action": "disable_skus", "_selected_action": ids})
    assert resp.status_code == 302
    assert Sku.objects.live().count() == len(specs_all()) - 2
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == built - 2
    staff_client.post("/admin/catalog/sku/", {"action": "enable_skus", "_selected_action": ids})
    assert Sku.objects.live().count() == len(specs_all())
    assert api.get("/api/a2a/x402/status").json()["live_skus"] == built


def test_admin_lists_search_and_filter(staff_client):
    assert staff_client.get("/admin/catalog/sku/", {"q": "desk", "tier__exact": "D"}).status_code == 200
    for model in [
        "newsitem",
        "teaser",
        "catalogagent",
        "agentframeworkpack",
        "integration",
        "editorialpiece",
        "partneragent",
        "dailycounter",
        "workerheartbeat",
    ]:
        assert staff_client.get(f"/admin/catalog/{model}/").status_code == 200, model
    for model in [
        "payment",
        "billingsettings",
        "whaletier",
        "account",
        "apikey",
        "deposit",
        "ledgerentry",
        "creditadjustment",
        "chaincursor",
    ]:
        assert staff_client.get(f"/admin/billing/{model}/").status_code == 200, model
    for app, model in [
        ("sessions_app", "sessionpack"),
        ("sessions_app", "prepaidsession"),
        ("sessions_app", "sessioncall"),
        ("webhooks", "webhooksubscription"),
        ("webhooks", "webhookdelivery"),
        ("webhooks", "deliveryattempt"),
        ("webhooks", "eventprice"),
        ("webhooks", "pushentitlement"),
        ("webhooks", "webhookevent"),
    ]:
        assert staff_client.get(f"/admin/{app}/{model}/").status_code == 200, model
    assert staff_client.get("/admin/billing/creditadjustment/add/").status_code == 200


def test_admin_publishes_editorial_content(staff_client, api):
    piece = EditorialPiece.objects.create(kind="morning_brief", title="Today", summary="s", body="b")
    assert api.get("/api/a2a/morning-brief").json()["available"] is False
    staff_client.post(
        "/admin/catalog/editorialpiece/", {"action": "publish_now", "_selected_action": [piece.pk]}
    )
    assert api.get("/api/a2a/morning-brief").json()["title"] == "Today"


# --- permissions: actions need the change permission; a new key is shown once, on its page ------
def _staff(username: str, *perms: str):
    """A staff user (not a superuser) with exactly these permissions ("app.codename")."""
    from django.contrib.auth.models import Permission

    user = get_user_model().objects.create_user(
        username, f"{username}@example.com", "pw-not-used", is_staff=True
    )
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


@pytest.fixture
def customer():

    registration = register_wallet()
    return SimpleNamespace(account=registration.account, key=registration.api_key)


@pytest.fixture
def dead_delivery(customer):
    from webhooks.models import WebhookDelivery, WebhookEvent, WebhookSubscription

    sub = WebhookSubscription.objects.create(
        account=customer.account, url="https://hooks.example.com/x", events=["test"], secret="whsec_x"
    )
    event = WebhookEvent.objects.create(kind="test", payload={"n": 1})
    return WebhookDelivery.objects.create(
        event=event, subscription=sub, state=WebhookDelivery.State.DEAD, attempts=8
    )


def _action_choices(client, url: str) -> set[str]:
    resp = client.get(url)
    assert resp.status_code == 200
    form = resp.context["action_form"]  # None when no action is offered
    return set() if form is None else {name for name, _ in form.fields["action"].choices if name}


def _cookie_and_session_text(client) -> str:
    return " ".join(m.value for m in client.cookies.values()) + " " + repr(dict(client.session.items()))


def test_view_only_staff_cannot_run_any_action(client, customer, dead_delivery):
    from billing.credits import api_key_account
    from billing.models import ApiKey
    from webhooks.models import WebhookDelivery

    user = _staff(
        "viewer",
        "billing.view_account",
        "billing.view_apikey",
        "webhooks.view_webhookdelivery",
        "catalog.view_sku",
        "catalog.view_editorialpiece",
    )
    client.force_login(user)
    keys_before = list(ApiKey.objects.values_list("id", "revoked_at"))
    # The lists open, and offer no action.
    assert _action_choices(client, "/admin/billing/account/") == set()
    assert _action_choices(client, "/admin/billing/apikey/") == set()
    assert _action_choices(client, "/admin/webhooks/webhookdelivery/") == set()
    assert _action_choices(client, "/admin/catalog/sku/") == set()
    # Posting them anyway does nothing.
    posts = [
        ("/admin/billing/account/", "rotate_key", customer.account.pk),
        ("/admin/billing/apikey/", "revoke", ApiKey.objects.get(account=customer.account).pk),
        ("/admin/webhooks/webhookdelivery/", "replay", dead_delivery.pk),
        ("/admin/catalog/sku/", "disable_skus", Sku.objects.get(sku="sentiment").pk),
    ]
    for url, action, pk in posts:
        resp = client.post(url, {"action": action, "_selected_action": [pk]})
        # An action the user is not offered is refused (a2a_service/core/admin_base.py StaffAdmin).
        assert resp.status_code == 403, (action, resp.status_code)
        assert "New API keys" not in resp.content.decode()
    assert list(ApiKey.objects.values_list("id", "revoked_at")) == keys_before  # none rotated or revoked
    assert api_key_account(key=customer.key) == customer.account  # the customer's key still works
    dead_delivery.refresh_from_db()
    assert dead_delivery.state == WebhookDelivery.State.DEAD and dead_delivery.attempts == 8
    assert Sku.objects.get(sku="sentiment").status == Sku.Status.LIVE


def test_rotated_key_is_shown_once_on_its_page_and_in_no_cookie(client, customer):
    from billing.credits import api_key_account
    from billing.models import ApiKey

    client.force_login(_staff("operator", "billing.view_account", "billing.change_account"))
    assert _action_choices(client, "/admin/billing/account/") == {"rotate_key"}
    resp = client.post(
        "/admin/billing/account/", {"action": "rotate_key", "_selected_action": [customer.account.pk]}
    )
    assert resp.status_code == 200
    assert "no-store" in resp["Cache-Control"]
    html = resp.content.decode()
    [new_key] = re.findall(r"<code>(a2a_[^<]+)</code>", html)
    assert new_key != customer.key
    assert api_key_account(key=new_key) == customer.account
    assert api_key_account(key=customer.key) is None  # the old key is revoked
    assert ApiKey.objects.filter(account=customer.account, revoked_at__isnull=True).count() == 1
    # Not in a cookie of this answer, nor in any the client holds, nor in the session.
    assert all(new_key not in morsel.value for morsel in resp.cookies.values())
    assert new_key not in _cookie_and_session_text(client)
    # The next page shows no trace of it (no message carries it).
    assert new_key not in client.get("/admin/billing/account/").content.decode()
    assert new_key not in _cookie_and_session_text(client)


def test_change_permitted_staff_replays_and_revokes(client, customer, dead_delivery):
    from billing.credits import api_key_account
    from billing.models import ApiKey
    from webhooks.models import WebhookDelivery

    client.force_login(
        _staff(
            "webhook-operator",
            "webhooks.view_webhookdelivery",
            "webhooks.change_webhookdelivery",
            "billing.view_apikey",
            "billing.change_apikey",
        )
    )
    resp = client.post(
        "/admin/webhooks/webhookdelivery/", {"action": "replay", "_selected_action": [dead_delivery.pk]}
    )
    assert resp.status_code == 302
    dead_delivery.refresh_from_db()
    assert dead_delivery.state == WebhookDelivery.State.PENDING and dead_delivery.attempts == 0
    key_row = ApiKey.objects.get(account=customer.account)
    client.post("/admin/billing/apikey/", {"action": "revoke", "_selected_action": [key_row.pk]})
    assert api_key_account(key=customer.key) is None


# --- the admin login is throttled -------------------------------------------------------------
def test_admin_login_is_throttled_per_address_and_a_strangers_failures_never_lock_the_owner_out(
    client, settings
):
    """Finding 6 of the second review: a stranger's wrong passwords for a username blocked its
    right password from every address for the window. Now the stranger's address is refused,
    the owner's right password goes through from elsewhere, and each further address that
    guesses wrong for the attacked username is refused after one guess."""
    settings.ADMIN_LOGIN_MAX_FAILURES = 3
    settings.ADMIN_LOGIN_WINDOW_SECONDS = 600
    tag = secrets.token_hex(4)
    username = f"admin-{tag}"
    get_user_model().objects.create_superuser(username, "a@example.com", "right-password")
    stranger = f"198.51.100.{int(tag, 16) % 250 + 1}"
    owner_address = f"203.0.113.{int(tag, 16) % 250 + 1}"

    def login(password: str, *, user: str = username, ip: str = stranger):
        client.logout()
        return client.post(
            "/admin/login/?next=/admin/",
            {"username": user, "password": password, "next": "/admin/"},
            REMOTE_ADDR=ip,
        )

    for _ in range(3):
        resp = login("wrong")
        assert resp.status_code == 200 and "_auth_user_id" not in client.session
    # The stranger's 4th attempt is refused, even with the right password, and says when to come back.
    resp = login("right-password")
    assert resp.status_code == 429
    assert 590 <= int(resp["Retry-After"]) <= 600
    assert "_auth_user_id" not in client.session
    # ... and for another username too (one address, many accounts).
    assert login("whatever", user=f"other-{tag}").status_code == 429
    # The owner, elsewhere, logs in with the right password: the stranger's failures are not theirs.
    resp = login("right-password", ip=owner_address)
    assert resp.status_code == 302 and resp["Location"] == "/admin/"
    assert client.session["_auth_user_id"] == str(get_user_model().objects.get(username=username).pk)
    # The username is under attack: a wrong guess from a new address refuses that address at
    # once (one guess per address, not three), and its right password too for the window.
    helper = f"192.0.2.{int(tag, 16) % 250 + 1}"
    resp = login("guess-1", ip=helper)
    assert resp.status_code == 429 and "_auth_user_id" not in client.session
    assert login("right-password", ip=helper).status_code == 429
    # The stranger is still refused; the owner's address still logs in.
    assert login("right-password").status_code == 429
    assert login("right-password", ip=owner_address).status_code == 302
    # An IPv6 /64 is one requester: rotating addresses inside it does not buy more guesses.
    other = f"staff-{tag}"
    get_user_model().objects.create_superuser(other, "b@example.com", "pw-2")
    for n in range(3):
        assert login("wrong", user=other, ip=f"2001:db8:{int(tag, 16) % 9999:x}::{n + 1}").status_code == 200
    assert login("pw-2", user=other, ip=f"2001:db8:{int(tag, 16) % 9999:x}::ff").status_code == 429
    assert login("pw-2", user=other, ip="192.0.2.254").status_code == 302


def test_admin_login_page_and_successful_login_still_work(client):
    tag = secrets.token_hex(4)
    get_user_model().objects.create_superuser(f"ok-{tag}", "c@example.com", "pw-3")
    assert client.get("/admin/").status_code == 302
    assert client.get("/admin/login/?next=/admin/").status_code == 200
    resp = client.post(
        "/admin/login/?next=/admin/",
        {"username": f"ok-{tag}", "password": "pw-3", "next": "/admin/"},
        REMOTE_ADDR=f"192.0.2.{int(tag, 16) % 250 + 1}",
    )
    assert resp.status_code == 302 and resp["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
