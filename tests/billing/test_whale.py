"""Whale tiers (billing/tiers.py, billing/whale.py): earned by the USDC deposited within the
window, a tier's deposit bonus as its own ledger row (once), the status numbers, whale tokens
(issue, verify, expiry, revocation, forgery), and the tier rate limit with a token or the key;
a token pays for nothing (402)."""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.throttling import AnonRateThrottle

from a2a_service.core.schemas import UnauthorizedOut
from billing.credits import credit_add, deposit_orphan, deposit_settle, ledger_audit
from billing.models import Account, BillingSettings, Deposit, LedgerEntry, WhaleTier, WhaleToken
from billing.tiers import tier_standing
from billing.whale import Claims, token_decode, token_encode
from catalog.models import NewsItem
from tests.support.deposits import deposit, tier_account
from tests.support.wallets import register_wallet

pytestmark = pytest.mark.django_db
USDC = 10**6
STATUS = "/api/a2a/account/whale/status"
TOKEN = "/api/a2a/account/whale/token"
CATALOG = "/api/a2a/account/whale/catalog"
FREE = "/api/a2a/discovery/storefront"


@pytest.fixture(autouse=True)
def _no_rate_cache(settings):
    settings.WHALE_RATE_CACHE_SECONDS = 0  # every request reads tiers and revocations afresh


def ledger(account: Account) -> list[tuple[str, int]]:
    return list(
        LedgerEntry.objects.filter(account=account).order_by("id").values_list("kind", "amount_atomic")
    )


# --- tiers and the deposit bonus ---------------------------------------------------------------
def test_seeded_tiers_and_the_window_setting():
    tiers = [
        (t.name, t.min_deposit_atomic, float(t.bonus_pct), t.rate_limit_per_minute)
        for t in WhaleTier.objects.all()
    ]
    assert tiers == [
        ("dolphin", 25 * USDC, 2.0, 1200),
        ("whale", 100 * USDC, 5.0, 3000),
        ("leviathan", 500 * USDC, 8.0, 6000),
    ]
    assert BillingSettings.load().whale_window_days == 30


def test_a_tier_accounts_deposit_gets_exactly_its_bonus_as_a_separate_row_once():
    reg = register_wallet()
    account = reg.account
    # 30 USDC crosses the dolphin threshold: the tier counts from the next deposit on.
    first = deposit(account, 30 * USDC)
    assert first.whale_bonus_atomic == 0
    assert ledger(account) == [("deposit", 30 * USDC), ("bonus", 3 * USDC)]  # the 10% bundle bonus only
    # 10 USDC as a dolphin: 2% of it, 200_000 atomic, in its own whale_bonus row.
    second = deposit(account, 10 * USDC)
    assert second.whale_bonus_atomic == 200_000
    rows = ledger(account)[2:]
    assert rows == [("deposit", 10 * USDC), ("bonus", 1 * USDC), ("whale_bonus", 200_000)]
    row = LedgerEntry.objects.get(deposit=second, kind="whale_bonus")
    assert row.reference == f"whale tier dolphin 2.00% of {second.tx_hash}:0"
    # The watcher settling the same deposit again (a re-run) credits nothing more.
    deposit_settle(deposit_id=second.id)
    deposit_settle(deposit_id=second.id)
    assert LedgerEntry.objects.filter(deposit=second).count() == 3
    account.refresh_from_db()
    assert (
        account.credit_balance_atomic == 30 * USDC + 3 * USDC + 10 * USDC + 1 * USDC + 200_000 == 44_200_000
    )
    # 70 USDC at 40 deposited: still a dolphin (2% = 1.4), though it brings the window to 110 (whale).
    third = deposit(account, 70 * USDC)
    assert third.whale_bonus_atomic == 1_400_000
    # Now a whale (110 >= 100): 5% of 3 USDC (below the bundle) = 150_000, no bundle bonus.
    fourth = deposit(account, 3 * USDC)
    assert fourth.whale_bonus_atomic == 150_000 and fourth.bonus_atomic == 0
    assert ledger(account)[-2:] == [("deposit", 3 * USDC), ("whale_bonus", 150_000)]
    whale_rows = LedgerEntry.objects.filter(account=account, kind="whale_bonus")
    assert sorted(whale_rows.values_list("amount_atomic", flat=True)) == [150_000, 200_000, 1_400_000]
    assert ledger_audit() == []


def test_only_deposits_within_the_window_count_and_staff_can_widen_it():
    reg = register_wallet()
    old = deposit(reg.account, 30 * USDC, days_ago=31)
    credit_add(account_id=reg.account.id, amount_atomic=500 * USDC, kind="adjustment", reason="not a deposit")
    assert tier_standing(account_id=reg.account.id).tier is None  # out of the window; adjustments never count
    later = deposit(reg.account, 10 * USDC)
    assert later.whale_bonus_atomic == 0
    settings_row = BillingSettings.load()
    settings_row.whale_window_days = 60
    settings_row.save()
    standing = tier_standing(account_id=reg.account.id)
    assert (
        standing.tier.name == "dolphin" and standing.deposited_atomic == 40 * USDC and standing.deposits == 2
    )
    assert standing.holds_until == old.credited_at + timedelta(days=60)  # then 10 < 25
    assert ledger_audit() == []


def test_a_reorganisation_takes_the_whale_bonus_back_with_its_deposit():
    account, _ = tier_account()
    d = deposit(account, 10 * USDC)
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    deposit_orphan(deposit_id=d.id)
    reversal = LedgerEntry.objects.get(deposit=d, kind="reorg_reversal")
    assert reversal.amount_atomic == -(10 * USDC + 1 * USDC + 200_000)
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == before - 11_200_000
    assert tier_standing(account_id=account.id).deposited_atomic == 30 * USDC  # reorged: not counted
    assert ledger_audit() == []


# --- status ----------------------------------------------------------------------------------------
def test_status_without_a_tier_shows_the_way_to_the_first(api):
    reg = register_wallet()
    deposit(reg.account, 10 * USDC)
    body = api.get(STATUS, HTTP_X_API_KEY=reg.api_key).json()
    assert body["tier"] is None and body["tier_holds_until"] is None
    assert body["deposited_atomic"] == 10_000_000 and body["deposited_usdc"] == 10.0
    assert body["next_tier"] == {
        "name": "dolphin",
        "min_deposit_atomic": 25_000_000,
        "min_deposit_usdc": 25.0,
        "needed_atomic": 15_000_000,
        "needed_usdc": 15.0,
        "progress_pct": 40.0,
    }
    assert body["rate_limit"]["applies_to"] == "caller address"  # the base rate
    assert api.get(STATUS).status_code == 401


def test_status_of_a_tier_account_in_numbers(api):
    account, key = tier_account()
    deposit(account, 12_345_678)  # a dolphin: 2% = 246_913 (rounded down)
    resp = api.get(STATUS, HTTP_X_API_KEY=key)
    assert resp.status_code == 200
    body = resp.json()
    assert body["tier"]["name"] == "dolphin" and body["tier"]["rate_limit_per_minute"] == 1200
    assert body["tier"]["bonus_pct"] == 2.0
    assert body["deposited_atomic"] == 42_345_678 and body["deposited_usdc"] == 42.345678
    assert body["deposits_counted"] == 2 and body["window_days"] == 30
    assert body["next_tier"]["name"] == "whale"
    assert body["next_tier"]["needed_atomic"] == 57_654_322 and body["next_tier"]["needed_usdc"] == 57.654322
    assert body["next_tier"]["progress_pct"] == 42.35
    assert body["whale_bonus_earned_atomic"] == 246_913 and body["whale_bonus_earned_usdc"] == 0.246913
    assert body["rate_limit"] == {
        "requests": 1200,
        "per_seconds": 60,
        "applies_to": "account and caller address",
    }
    start = timezone.datetime.fromisoformat(body["window_start"].replace("Z", "+00:00"))
    end = timezone.datetime.fromisoformat(body["window_end"].replace("Z", "+00:00"))
    assert end - start == timedelta(days=30)
    # 30 + 12.35 = 42.35: the tier holds until the first 30 USDC leave the window (12.35 < 25).
    first = Deposit.objects.filter(account=account).order_by("id").first()
    holds = timezone.datetime.fromisoformat(body["tier_holds_until"].replace("Z", "+00:00"))
    assert holds == first.credited_at + timedelta(days=30)
    assert body["active_tokens"] == 0


def test_the_top_tier_has_no_next_one(api):
    reg = register_wallet()
    deposit(reg.account, 600 * USDC)
    body = api.get(STATUS, HTTP_X_API_KEY=reg.api_key).json()
    assert body["tier"]["name"] == "leviathan" and body["next_tier"] is None


# --- catalog ---------------------------------------------------------------------------------------
def test_the_catalog_shows_the_benefits_from_the_tier_rows(api):
    WhaleTier.objects.filter(name="whale").update(rate_limit_per_minute=4321, bonus_pct="6.5")
    body = api.get(CATALOG).json()
    whale = next(t for t in body["tiers"] if t["name"] == "whale")
    assert whale["rate_limit_per_minute"] == 4321 and whale["bonus_pct"] == 6.5
    assert whale["min_deposit_atomic"] == 100_000_000 and whale["min_deposit_usdc"] == 100.0
    assert "4321 requests per minute" in " ".join(whale["benefits"])
    assert "6.5% bonus" in " ".join(whale["benefits"])
    assert body["window_days"] == 30 and body["token_header"] == "X-Whale-Token"
    assert body["base_rate_limit"]["requests"] == AnonRateThrottle().num_requests


# --- tokens ----------------------------------------------------------------------------------------
def test_no_tier_no_token_403_with_what_it_takes(api):
    reg = register_wallet()
    resp = api.post(TOKEN, {}, format="json", HTTP_X_API_KEY=reg.api_key)
    assert resp.status_code == 403
    body = resp.json()
    assert body["code"] == "whale_tier_required" and body["deposited_usdc"] == 0.0
    assert body["next_tier"]["name"] == "dolphin" and body["next_tier"]["needed_usdc"] == 25.0
    assert not WhaleToken.objects.exists()
    assert api.post(TOKEN, {}, format="json").status_code == 401


def test_a_token_is_issued_signed_stored_and_bounded(api, settings):
    account, key = tier_account()
    resp = api.post(TOKEN, {"ttl_seconds": 3600, "label": "scanner-1"}, format="json", HTTP_X_API_KEY=key)
    assert resp.status_code == 201 and resp["Cache-Control"] == "no-store"
    body = resp.json()
    assert body["tier"] == "dolphin" and body["ttl_seconds"] == 3600 and body["label"] == "scanner-1"
    assert body["header"] == "X-Whale-Token" and body["pays"] is False
    assert body["rate_limit"]["requests"] == 1200
    claims = token_decode(body["token"])
    assert claims.account_id == account.id and claims.tier == "dolphin" and claims.jti == body["jti"]
    assert claims.expires_at - claims.issued_at == 3600
    row = WhaleToken.objects.get(jti=body["jti"])
    assert row.account == account and row.label == "scanner-1" and row.revoked_at is None
    assert abs((row.expires_at - timezone.now()).total_seconds() - 3600) < 5
    assert body["token"] not in json.dumps(list(WhaleToken.objects.values()), default=str)  # never stored
    # No body: the default lifetime.
    default = api.post(TOKEN, HTTP_X_API_KEY=key).json()
    assert default["ttl_seconds"] == settings.WHALE_TOKEN_DEFAULT_TTL_SECONDS == 86_400
    for ttl, kind in ((10, "greater_than_equal"), (10**9, "less_than_equal")):
        bad = api.post(TOKEN, {"ttl_seconds": ttl}, format="json", HTTP_X_API_KEY=key)
        assert bad.status_code == 422 and bad.json()["detail"][0]["type"] == kind
        assert bad.json()["detail"][0]["loc"] == ["body", "ttl_seconds"]
    assert api.get(STATUS, HTTP_X_API_KEY=key).json()["active_tokens"] == 2
    settings.WHALE_TOKENS_MAX_ACTIVE = 2
    full = api.post(TOKEN, HTTP_X_API_KEY=key)
    assert full.status_code == 409 and full.json()["code"] == "whale_token_limit"
    assert full.json()["active_tokens"] == 2 and WhaleToken.objects.count() == 2


def test_forged_expired_and_revoked_tokens_answer_401(api, client):
    account, key = tier_account()
    token = api.post(TOKEN, HTTP_X_API_KEY=key).json()["token"]
    assert api.get(FREE, HTTP_X_WHALE_TOKEN=token).status_code == 200
    version, payload, signature = token.split(".")
    # Another account id with the same signature: forged.
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    altered = base64.urlsafe_b64encode(json.dumps({**claims, "acct": claims["acct"] + 1}).encode()).rstrip(
        b"="
    )
    for forged in (f"{version}.{altered.decode()}.{signature}", token[:-3] + "abc", "garbage", "x" * 2000):
        resp = api.get(FREE, HTTP_X_WHALE_TOKEN=forged)
        assert resp.status_code == 401 and resp.json()["code"] == "whale_token_invalid", forged[:40]
        assert resp.json()["token_endpoint"] == TOKEN
        UnauthorizedOut.model_validate(resp.json())  # the documented 401 of every route
    # Expired: signed by us, its expiry passed.
    row = WhaleToken.objects.get()
    now = int(time.time())
    expired = token_encode(
        Claims(account_id=account.id, tier="dolphin", jti=row.jti, issued_at=now - 120, expires_at=now - 60)
    )
    resp = api.get(FREE, HTTP_X_WHALE_TOKEN=expired)
    assert resp.status_code == 401 and resp.json()["code"] == "whale_token_expired"
    assert "expired at" in resp.json()["detail"]
    # Revoked by staff in the admin.
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(staff)
    assert client.get("/admin/billing/whaletoken/").status_code == 200
    assert client.get("/admin/billing/whaletier/").status_code == 200
    done = client.post("/admin/billing/whaletoken/", {"action": "revoke", "_selected_action": [row.pk]})
    assert done.status_code == 302
    row.refresh_from_db()
    assert row.revoked_at is not None
    resp = api.get(FREE, HTTP_X_WHALE_TOKEN=token)
    assert resp.status_code == 401 and resp.json()["code"] == "whale_token_revoked"
    # Refused on paid routes too, before anything else.
    resp = api.get("/api/a2a/x402/payments/dual-rail-status", HTTP_X_WHALE_TOKEN=token)
    assert resp.status_code == 401


# --- it pays for nothing -----------------------------------------------------------------------------
def test_a_paid_route_with_only_a_token_answers_402_with_how_to_pay(api):
    account, key = tier_account()
    token = api.post(TOKEN, HTTP_X_API_KEY=key).json()["token"]
    balance = Account.objects.get(pk=account.pk).credit_balance_atomic
    item = NewsItem.objects.create(title="t", teaser="t", body="the full story", category="equity")
    resp = api.post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_WHALE_TOKEN=token)
    assert resp.status_code == 402
    body = resp.json()
    assert body["code"] == "whale_token_pays_nothing" and body["price_usdc"] == 0.18
    assert body["x402_alternative"] and body["topup"]["header"] == "X-API-Key"
    # The x402 path: the payment challenge, as without the token.
    resp = api.get("/api/a2a/x402/payments/dual-rail-status", HTTP_X_WHALE_TOKEN=token)
    assert resp.status_code == 402 and resp["PAYMENT-REQUIRED"] and resp.json()["accepts"]
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == balance
    # With the key as well, the key pays.
    paid = api.post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_WHALE_TOKEN=token, HTTP_X_API_KEY=key)
    assert paid.status_code == 200 and paid["X-Credit-Charged"] == "0.18"
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == balance - 180_000
    assert ledger_audit() == []


# --- the rate limit ----------------------------------------------------------------------------------
def _fresh_minute() -> None:
    """Start in the first seconds of a minute window, so that no window ends mid-test."""
    left = 60 - time.time() % 60
    if left < 15:
        time.sleep(left + 0.1)


def test_the_tier_rate_applies_with_the_token_and_the_key_not_without(api, monkeypatch, settings):
    if not settings.REDIS_URL:
        pytest.skip("the shared windows live in Redis (CI sets REDIS_URL)")
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/min"})
    account, key = tier_account()
    WhaleTier.objects.filter(name="dolphin").update(rate_limit_per_minute=6)
    token = api.post(TOKEN, HTTP_X_API_KEY=key, REMOTE_ADDR="10.50.0.9").json()["token"]
    _fresh_minute()

    def codes(n: int, addr: str, **headers: str) -> list[int]:
        return [api.get(FREE, REMOTE_ADDR=addr, **headers).status_code for _ in range(n)]

    # The base rate: 3 a minute per address, the 4th answers 429 with Retry-After.
    assert codes(4, "10.50.0.1") == [200, 200, 200, 429]
    refused = api.get(FREE, REMOTE_ADDR="10.50.0.1")
    assert refused.json()["code"] == "rate_limited" and 1 <= int(refused["Retry-After"]) <= 60
    # The same address with the token: the tier's 6, then 429.
    assert codes(7, "10.50.0.1", HTTP_X_WHALE_TOKEN=token) == [200] * 6 + [429]
    assert int(api.get(FREE, REMOTE_ADDR="10.50.0.1", HTTP_X_WHALE_TOKEN=token)["Retry-After"]) >= 1
    # The key and the tokens of one account share the tier budget of an address.
    assert codes(1, "10.50.0.1", HTTP_X_API_KEY=key) == [429]
    assert codes(7, "10.50.0.2", HTTP_X_API_KEY=key) == [200] * 6 + [429]
    # A paid x402 call with a token counts in the tier budget too (here: the challenge).
    assert (
        api.get(
            "/api/a2a/x402/payments/dual-rail-status", REMOTE_ADDR="10.50.0.3", HTTP_X_WHALE_TOKEN=token
        ).status_code
        == 402
    )
    # The tier lost (its deposits left the window): the token gives the base rate only.
    Deposit.objects.filter(account=account).update(credited_at=timezone.now() - timedelta(days=31))
    assert codes(4, "10.50.0.4", HTTP_X_WHALE_TOKEN=token) == [200, 200, 200, 429]
    assert api.get(STATUS, HTTP_X_API_KEY=key, REMOTE_ADDR="10.50.0.5").json()["tier"] is None
    assert api.post(TOKEN, HTTP_X_API_KEY=key, REMOTE_ADDR="10.50.0.5").status_code == 403


def test_odd_token_text_is_refused_not_a_server_error(api):
    from django.test import Client

    client = Client(raise_request_exception=False)
    for odd in ("wt1.\x00.\x00", "wt1.é.x", "wt1..", "...", "wt1." + "a" * 600, " "):
        resp = client.get(FREE, HTTP_X_WHALE_TOKEN=odd)
        assert resp.status_code in (200, 401), (odd, resp.status_code)  # " " is no token: 200
        if odd.strip():
            assert resp.json()["code"] == "whale_token_invalid"


@pytest.mark.django_db(transaction=True)
def test_the_credit_fast_path_counts_a_tier_key_in_the_tier_budget(settings, monkeypatch):
    """Keyed calls served in front of Django (billing/api/credit_fastpath.py) use the same
    budget as Django's throttle: the tier's rate for a tier account's key."""
    if not settings.REDIS_URL:
        pytest.skip("the credit fast path needs Redis (CI sets REDIS_URL)")
    from django.db import connections
    from werkzeug.test import Client

    from a2a_service.wsgi import application
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    try:
        monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/min"})
        WhaleTier.objects.filter(name="dolphin").update(rate_limit_per_minute=5)
        account, key = tier_account()
        plain = register_wallet()
        credit_add(account_id=plain.account.id, amount_atomic=USDC, kind="adjustment", reason="test")
        wsgi = Client(application)
        path = "/api/a2a/x402/payments/dual-rail-status"  # 0.01 USDC, served by the fast path
        _fresh_minute()

        def codes(n: int, who: str, addr: str) -> list[int]:
            env = {"REMOTE_ADDR": addr}
            return [
                wsgi.get(path, headers={"X-API-Key": who}, environ_base=env).status_code for _ in range(n)
            ]

        assert codes(6, key, "10.60.0.1") == [200] * 5 + [429]
        assert codes(4, plain.api_key, "10.60.0.2") == [200] * 3 + [429]
        charged = LedgerEntry.objects.filter(kind="sku_call")
        assert (
            charged.filter(account=account).count() == 5
            and charged.filter(account=plain.account).count() == 3
        )
        assert ledger_audit() == []
    finally:
        connections.close_all()


def test_the_deposit_watcher_credits_the_tier_bonus_once_on_a_real_chain(watcher):
    """On anvil: 30 USDC makes a dolphin, its next 10 USDC deposit gets 2% as a whale_bonus
    row; scanning again (and again) credits nothing more."""
    from billing.chain.localchain import dev_account
    from billing.deposits import deposits_scan
    from tests.support.deposits import mine, send

    reg = register_wallet(dev_account(4))
    send(watcher, 4, 30 * USDC)
    mine(watcher, 2)
    assert deposits_scan().credited == 1
    send(watcher, 4, 10 * USDC)
    mine(watcher, 2)
    assert deposits_scan().credited == 1
    for _ in range(2):
        deposits_scan()
    rows = ledger(reg.account)
    assert rows == [
        ("deposit", 30 * USDC),
        ("bonus", 3 * USDC),
        ("deposit", 10 * USDC),
        ("bonus", 1 * USDC),
        ("whale_bonus", 200_000),
    ]
    second = Deposit.objects.get(amount_atomic=10 * USDC)
    assert second.whale_bonus_atomic == 200_000
    assert LedgerEntry.objects.get(kind="whale_bonus").deposit == second
    assert Account.objects.get(pk=reg.account.pk).credit_balance_atomic == 44_200_000
    assert ledger_audit() == []


def test_without_redis_djangos_own_throttle_applies_the_tier_rate(api, monkeypatch):
    """The embedded local stack (no REDIS_URL): DRF's throttle on the cache, same budgets."""
    from django.core.cache import cache

    monkeypatch.setattr("a2a_service.core.throttling.redis_client", lambda: None)
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "2/day"})
    account, key = tier_account()
    WhaleTier.objects.filter(name="dolphin").update(rate_limit_per_minute=4)
    cache.clear()
    _fresh_minute()
    plain = [api.get(FREE, REMOTE_ADDR="10.70.0.1").status_code for _ in range(3)]
    keyed = [api.get(FREE, REMOTE_ADDR="10.70.0.1", HTTP_X_API_KEY=key).status_code for _ in range(5)]
    cache.clear()
    assert plain == [200, 200, 429] and keyed == [200] * 4 + [429]


def test_the_tier_rate_also_holds_on_the_protocol_surfaces(api, monkeypatch, settings):
    """MCP (/mcp) and A2A JSON-RPC (/api/a2a/agenthub) are DRF views like every route: the
    same throttle, so a whale token gives its tier's rate there too."""
    if not settings.REDIS_URL:
        pytest.skip("the shared windows live in Redis (CI sets REDIS_URL)")
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/min"})
    _, key = tier_account()
    WhaleTier.objects.filter(name="dolphin").update(rate_limit_per_minute=6)
    token = api.post(TOKEN, HTTP_X_API_KEY=key, REMOTE_ADDR="10.70.0.9").json()["token"]
    _fresh_minute()
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    a2a = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}
    accept = "application/json, text/event-stream"

    def codes(path: str, body: dict, n: int, addr: str, **headers: str) -> list[int]:
        return [
            api.post(path, body, format="json", HTTP_ACCEPT=accept, REMOTE_ADDR=addr, **headers).status_code
            for _ in range(n)
        ]

    assert codes("/mcp", mcp, 4, "10.70.0.1") == [200, 200, 200, 429]
    assert codes("/mcp", mcp, 7, "10.70.0.2", HTTP_X_WHALE_TOKEN=token) == [200] * 6 + [429]
    assert codes("/api/a2a/agenthub", a2a, 4, "10.70.0.3") == [200, 200, 200, 429]
    assert codes("/api/a2a/agenthub", a2a, 7, "10.70.0.4", HTTP_X_WHALE_TOKEN=token) == [200] * 6 + [429]
